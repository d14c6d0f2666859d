//! The symbolizer a reading subcommand uses, from its flags and the
//! recording: the recording's archive, if it has one, before the files on
//! disk.

use std::path::PathBuf;
use std::sync::Arc;

use profiler_model::{Archive, Recording, read_archive};
use profiler_symbols::{ArchivedSymbolizer, ElfSymbolizer, ElfUnwinder, SymbolizerOptions};

use crate::args::SymbolArgs;
use crate::messages::say;
use crate::progress::{Progress, ShowProgress};

/// Runs `work` (which reads `recording`, unwinds its stacks and names its
/// code) with the recording's symbolizer and unwinder, showing progress on
/// a terminal meanwhile.
pub(crate) fn with_symbolizer<T>(
    args: &SymbolArgs,
    recording: &Recording,
    work: impl FnOnce(&ShowProgress<'_, ArchivedSymbolizer>, &ElfUnwinder) -> T,
) -> T {
    with_symbolizer_for(args, &[recording], work)
}

/// [`with_symbolizer`] for several recordings read together, with the
/// archives of all: whether the kernel's symbols apply is judged by the
/// last.
pub(crate) fn with_symbolizer_for<T>(
    args: &SymbolArgs,
    recordings: &[&Recording],
    work: impl FnOnce(&ShowProgress<'_, ArchivedSymbolizer>, &ElfUnwinder) -> T,
) -> T {
    let progress = Progress::start("reading the recording");
    let options = recording_options(args, recordings);
    let elf = ElfSymbolizer::new(options.clone());
    let symbolizer = ArchivedSymbolizer::new(elf, Arc::new(archives(recordings)));
    let unwinder = ElfUnwinder::with_archive(&options, Arc::clone(symbolizer.archive()));
    let symbolizer = ShowProgress {
        inner: &symbolizer,
        progress: &progress,
    };
    work(&symbolizer, &unwinder)
}

/// A symbolizer for `recording`: its archive, then the files on disk; this
/// machine's kallsyms and vdso name its kernel and vdso code only if it was
/// made under the running kernel.
pub(crate) fn symbolizer(args: &SymbolArgs, recording: &Recording) -> ArchivedSymbolizer {
    let elf = ElfSymbolizer::new(recording_options(args, &[recording]));
    ArchivedSymbolizer::new(elf, Arc::new(archive(recording)))
}

/// A symbolizer for several recordings read together, with the archives
/// of all; whether the kernel's symbols apply is judged by the last.
pub(crate) fn symbolizer_for(args: &SymbolArgs, recordings: &[&Recording]) -> ArchivedSymbolizer {
    let same_kernel = recordings.last().is_some_and(|r| same_kernel(r));
    let elf = ElfSymbolizer::new(options(args, same_kernel));
    ArchivedSymbolizer::new(elf, Arc::new(archives(recordings)))
}

/// The archives of `recordings` as one.
fn archives(recordings: &[&Recording]) -> Archive {
    let mut archive = Archive::default();
    for recording in recordings {
        let more = self::archive(recording);
        archive.modules.extend(more.modules);
        archive.kernel.extend(more.kernel);
    }
    archive.kernel.sort();
    archive
}

/// The archive of `recording`, empty where it has none or it cannot be
/// read, which is said once: the files on disk name the code instead.
fn archive(recording: &Recording) -> Archive {
    let path = recording.path().display();
    match read_archive(recording) {
        Ok(read) => {
            if read.skipped > 0 {
                say!(
                    "profiler: warning: {path}: {} of its archive's {} parts are damaged or of an \
                     older format; their modules are named from the files on disk",
                    read.skipped,
                    recording.trailer.archive.len()
                );
            }
            read.archive
        }
        Err(error) => {
            say!("profiler: warning: {error}; its code is named from the files on disk");
            Archive::default()
        }
    }
}

/// Whether `recording` was made under the running kernel (on this host).
pub(crate) fn same_kernel(recording: &Recording) -> bool {
    let read = |path| {
        std::fs::read_to_string(path)
            .map(|s| s.trim().to_owned())
            .unwrap_or_default()
    };
    let host = &recording.header.host;
    host.kernel == read("/proc/sys/kernel/osrelease")
        && host.hostname == read("/proc/sys/kernel/hostname")
}

pub(crate) fn options(args: &SymbolArgs, same_kernel: bool) -> SymbolizerOptions {
    SymbolizerOptions {
        debug_dirs: args.debug_dirs.clone(),
        full_signatures: args.full_signatures,
        same_kernel,
        threads: args.jobs.map_or(0, |n| n.get()),
        mapped_files: Vec::new(),
        process_user: None,
        cache_dir: (!args.no_symbol_cache)
            .then(profiler_symbols::default_cache_dir)
            .flatten(),
    }
}

/// [`options`] for naming the code of `recordings`: whether the kernel's
/// symbols apply is judged by the last; the files they mapped hold the JITs'
/// jitdump files; the recorded processes' user, where the recordings agree
/// on one, is the one whose JIT maps are believed.
pub(crate) fn recording_options(args: &SymbolArgs, recordings: &[&Recording]) -> SymbolizerOptions {
    let last = recordings.last().copied();
    let users: Vec<Option<u32>> = recordings.iter().map(|r| r.header.user).collect();
    SymbolizerOptions {
        mapped_files: (recordings.iter())
            .flat_map(|recording| &recording.trailer.modules)
            .map(|module| PathBuf::from(&module.path))
            .collect(),
        process_user: (users.first().copied().flatten())
            .filter(|_| users.windows(2).all(|w| w[0] == w[1])),
        ..options(args, last.is_some_and(same_kernel))
    }
}
