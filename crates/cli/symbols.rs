//! The symbolizer a reading subcommand uses, from its flags and the
//! recording.

use profiler_model::Recording;
use profiler_symbols::{ElfSymbolizer, SymbolizerOptions};

use crate::args::SymbolArgs;
use crate::progress::{Progress, ShowProgress};

/// Runs `work` (which reads `recording` and names its code) with the
/// recording's symbolizer, showing progress on a terminal meanwhile.
pub fn with_symbolizer<T>(
    args: &SymbolArgs,
    recording: &Recording,
    work: impl FnOnce(&ShowProgress<'_, ElfSymbolizer>) -> T,
) -> T {
    let progress = Progress::start("reading the recording");
    let symbolizer = symbolizer(args, recording);
    work(&ShowProgress {
        inner: &symbolizer,
        progress: &progress,
    })
}

/// A symbolizer for `recording`: this machine's kallsyms and vdso name its
/// kernel and vdso code only if it was made under the running kernel.
pub fn symbolizer(args: &SymbolArgs, recording: &Recording) -> ElfSymbolizer {
    let read = |path| {
        std::fs::read_to_string(path)
            .map(|s| s.trim().to_owned())
            .unwrap_or_default()
    };
    let host = &recording.header.host;
    let same_kernel = host.kernel == read("/proc/sys/kernel/osrelease")
        && host.hostname == read("/proc/sys/kernel/hostname");
    ElfSymbolizer::new(options(args, same_kernel))
}

pub fn options(args: &SymbolArgs, same_kernel: bool) -> SymbolizerOptions {
    SymbolizerOptions {
        debug_dirs: args.debug_dirs.clone(),
        full_signatures: args.full_signatures,
        same_kernel,
    }
}
