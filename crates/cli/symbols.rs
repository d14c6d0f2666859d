//! The symbolizer a reading subcommand uses, from its flags and the
//! recording.

use profiler_model::Recording;
use profiler_symbols::{ElfSymbolizer, ElfUnwinder, SymbolizerOptions};

use crate::args::SymbolArgs;
use crate::progress::{Progress, ShowProgress};

/// Runs `work` (which reads `recording`, unwinds its stacks and names its
/// code) with the recording's symbolizer and unwinder, showing progress on
/// a terminal meanwhile.
pub fn with_symbolizer<T>(
    args: &SymbolArgs,
    recording: &Recording,
    work: impl FnOnce(&ShowProgress<'_, ElfSymbolizer>, &ElfUnwinder) -> T,
) -> T {
    let progress = Progress::start("reading the recording");
    let symbolizer = symbolizer(args, recording);
    let unwinder = ElfUnwinder::new(&options(args, same_kernel(recording)));
    let symbolizer = ShowProgress {
        inner: &symbolizer,
        progress: &progress,
    };
    work(&symbolizer, &unwinder)
}

/// A symbolizer for `recording`: this machine's kallsyms and vdso name its
/// kernel and vdso code only if it was made under the running kernel.
pub fn symbolizer(args: &SymbolArgs, recording: &Recording) -> ElfSymbolizer {
    ElfSymbolizer::new(options(args, same_kernel(recording)))
}

/// Whether `recording` was made under the running kernel (on this host).
pub fn same_kernel(recording: &Recording) -> bool {
    let read = |path| {
        std::fs::read_to_string(path)
            .map(|s| s.trim().to_owned())
            .unwrap_or_default()
    };
    let host = &recording.header.host;
    host.kernel == read("/proc/sys/kernel/osrelease")
        && host.hostname == read("/proc/sys/kernel/hostname")
}

pub fn options(args: &SymbolArgs, same_kernel: bool) -> SymbolizerOptions {
    SymbolizerOptions {
        debug_dirs: args.debug_dirs.clone(),
        full_signatures: args.full_signatures,
        same_kernel,
        threads: args.jobs.map_or(0, |n| n.get()),
    }
}
