//! The symbolizer the reports use: one module at a time, from the files on
//! disk (and their separate debug files), or perf's copy by build-id of
//! those since changed, checked against the build-id the recording kept;
//! the vdso from this process's memory, JIT code from the process's
//! jitdump file and `/tmp/perf-PID.map`, the kernel from /proc/kallsyms.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use profiler_model::{
    AddressSymbol, Avma, Detail, FileOffset, Frame, FunctionSymbol, Module, ModuleSymbols,
    RelativeAddress, Svma, Symbolizer, printable,
};

use crate::build_id_cache::open_as_recorded;
use crate::cache_dir::CacheDir;
use crate::elf_module::{ElfModule, ModuleFiles, Naming};
use crate::error::SymbolsError;
use crate::jit::PerfMap;
use crate::jitdump::{DumpRead, JitDumps, JitFunction, line_of};
use crate::kept_modules::{KeptModules, ParsedModule};
use crate::kernel::Kallsyms;
use crate::naming_cache::{NamingCache, open_dir};
use crate::vdso::own_vdso;

/// Choices for symbolization.
#[derive(Clone, Debug, Default)]
pub struct SymbolizerOptions {
    /// Directories searched for separate debug files (by build-id and by
    /// debuglink), before `/usr/lib/debug`.
    pub debug_dirs: Vec<PathBuf>,
    /// Keep C++ argument lists and return types.
    pub full_signatures: bool,
    /// The recording was made under the running kernel, so this machine's
    /// kallsyms and vdso name its kernel and vdso addresses.
    pub same_kernel: bool,
    /// How many threads may name code at once: modules in parallel, and a
    /// large module's addresses in parts [default 0: one per CPU]. The names
    /// are the same with any number.
    pub threads: usize,
    /// The files the recorded processes mapped executable, among which a
    /// JIT's marker, its jitdump file (`jit-PID.dump`), names its code.
    pub mapped_files: Vec<PathBuf>,
    /// The user the recorded processes ran as, where the recording says:
    /// a JIT map is believed only from that user or root. Where it does
    /// not say, from the user reading or root, as perf does.
    pub process_user: Option<u32>,
    /// Where the names of modules with a build-id are kept between runs
    /// (see [`default_cache_dir`](crate::default_cache_dir)), so that
    /// naming them again reads no symbol table or debug info; `None`:
    /// named afresh each time. The names are the same either way.
    pub cache_dir: Option<PathBuf>,
}

impl SymbolizerOptions {
    /// [`SymbolizerOptions::threads`], with 0 made one per CPU.
    pub fn threads(&self) -> usize {
        match self.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
    }

    pub(crate) fn naming(&self) -> Naming {
        Naming {
            full_signatures: self.full_signatures,
            threads: self.threads(),
        }
    }
}

/// Symbolizes modules from their ELF symbol tables, PLT, unwind tables and
/// DWARF.
#[derive(Debug, Default)]
pub struct ElfSymbolizer {
    options: SymbolizerOptions,
    /// The running kernel's symbols, or why they cannot be read.
    kallsyms: OnceLock<Result<Kallsyms, String>>,
    /// Each process's jitdump file, read once.
    jit_dumps: JitDumps,
    /// Modules kept parsed for naming functions again.
    kept: KeptModules,
    /// The names cache's directory, opened once; `None` without one, or
    /// where it is not safe to use.
    cache_dir: OnceLock<Option<CacheDir>>,
}

impl ElfSymbolizer {
    pub fn new(options: SymbolizerOptions) -> ElfSymbolizer {
        ElfSymbolizer {
            options,
            kallsyms: OnceLock::new(),
            jit_dumps: JitDumps::default(),
            kept: KeptModules::default(),
            cache_dir: OnceLock::new(),
        }
    }

    pub(crate) fn options(&self) -> &SymbolizerOptions {
        &self.options
    }

    /// Opens the files of a module that has them: the file on disk with its
    /// separate debug file, or, under the same kernel, this process's vdso.
    pub(crate) fn open(&self, module: &Module) -> Result<ModuleFiles, Unopened> {
        if module.pid.is_some() {
            Err(Unopened::NoFile("JIT code is not kept in the recording"))
        } else if module.path == "[vdso]" {
            if !self.options.same_kernel {
                return Err(Unopened::NoFile(
                    "the vdso of the recording's kernel is not on this machine",
                ));
            }
            own_vdso()
                .map(|image| ModuleFiles::in_memory("[vdso]", image))
                .ok_or(Unopened::NoFile("this process has no vdso to read"))
        } else if module.has_file() {
            let open = |path: &Path| ModuleFiles::open(path, &self.options.debug_dirs);
            let build_id = |files: &ModuleFiles| files.build_id.clone();
            open_as_recorded(module, open, build_id).map_err(Unopened::Failed)
        } else {
            Err(Unopened::NoFile("the code has no file"))
        }
    }
}

/// Why a module's files were not opened.
pub(crate) enum Unopened {
    /// It has none to open (JIT code, another kernel's vdso, regions without
    /// files): nothing to report when naming, one line for a listing.
    NoFile(&'static str),
    /// Its file is missing or unreadable.
    Failed(SymbolsError),
}

/// Parses `files`, which must be the ones `module` was recorded from: a
/// build-id other than the recording's means the file has changed since.
pub(crate) fn parse_recorded<'a>(
    module: &Module,
    files: &'a ModuleFiles,
) -> Result<ElfModule<'a>, SymbolsError> {
    let elf = ElfModule::parse(files)?;
    if let (Some(recorded), Some(found)) = (&module.build_id, files.build_id.clone())
        && *recorded != found
    {
        let (path, recorded) = (module.path.clone(), recorded.clone());
        return Err(SymbolsError::BuildIdMismatch {
            path,
            recorded,
            found,
        });
    }
    Ok(elf)
}

impl ElfSymbolizer {
    /// What the files say of `offsets`, names as they are there.
    fn symbolize_raw(
        &self,
        module: &Module,
        offsets: &[FileOffset],
        detail: Detail,
    ) -> ModuleSymbols {
        if let Some(pid) = module.pid {
            let dump = self.jit_dumps.get(&self.options.mapped_files, pid);
            return jit_symbols(pid, dump, offsets, self.options.process_user);
        }
        if let Some(symbols) = self.symbolize_cached(module, offsets, detail) {
            return symbols;
        }
        if detail == Detail::Functions && KeptModules::keeps(module) {
            return self.symbolize_kept(module, offsets);
        }
        let files = match self.open(module) {
            Ok(files) => files,
            Err(Unopened::NoFile(_)) => return unnamed(offsets, None),
            Err(Unopened::Failed(error)) => return unnamed(offsets, Some(error)),
        };
        self.symbolize_opened(module, &files, offsets, detail)
    }

    /// [`ElfSymbolizer::symbolize_raw`] through the naming cache, for a
    /// module with a build-id and files on disk; `None` for another.
    fn symbolize_cached(
        &self,
        module: &Module,
        offsets: &[FileOffset],
        detail: Detail,
    ) -> Option<ModuleSymbols> {
        if module.build_id.is_none() || !KeptModules::keeps(module) {
            return None;
        }
        let dir = (self.cache_dir)
            .get_or_init(|| self.options.cache_dir.as_deref().and_then(open_dir))
            .as_ref()?;
        let files = self.open(module).ok()?;
        let full = self.options.full_signatures;
        let cache = NamingCache::new(dir, module, &files, detail, full)?;
        // The offsets missed are named from the very files the key was
        // made of, parsed afresh (not as kept, which gives its notes
        // once): their notes are all said, and answers with notes are not
        // kept.
        let name = |missed: &[FileOffset]| self.symbolize_opened(module, &files, missed, detail);
        Some(cache.symbolize(offsets, name))
    }

    fn symbolize_opened(
        &self,
        module: &Module,
        files: &ModuleFiles,
        offsets: &[FileOffset],
        detail: Detail,
    ) -> ModuleSymbols {
        match symbolize_offsets(module, files, offsets, detail, &self.options) {
            Ok(symbols) => symbols,
            Err(error) => unnamed(offsets, Some(error)),
        }
    }

    /// How many modules are kept parsed.
    #[cfg(test)]
    pub(crate) fn kept_modules(&self) -> usize {
        self.kept.len()
    }

    /// The functions of `offsets`, from `module` as kept parsed (parsed
    /// now if it is not).
    fn symbolize_kept(&self, module: &Module, offsets: &[FileOffset]) -> ModuleSymbols {
        let parse = || {
            let files = match self.open(module) {
                Ok(files) => files,
                Err(Unopened::NoFile(_)) => return Ok(None),
                Err(Unopened::Failed(error)) => return Err(error),
            };
            ParsedModule::try_new(files, |files| parse_recorded(module, files)).map(Some)
        };
        let parsed = match self.kept.get(module, parse) {
            Ok(Some(parsed)) => parsed,
            Ok(None) => return unnamed(offsets, None),
            Err(error) => return unnamed(offsets, Some(error)),
        };
        parsed.with_dependent(|_, elf| {
            let mut symbols = name_offsets(elf, offsets, Detail::Functions, &self.options);
            symbols.notes = elf.take_notes();
            symbols
        })
    }
}

impl Symbolizer for ElfSymbolizer {
    /// Names, with every control character escaped: symbol tables, debug
    /// info and JIT maps are written by anyone.
    fn symbolize(&self, module: &Module, offsets: &[FileOffset], detail: Detail) -> ModuleSymbols {
        let mut symbols = self.symbolize_raw(module, offsets, detail);
        symbols.make_printable();
        symbols
    }

    fn symbolize_kernel(&self, addresses: &[Avma]) -> Vec<Option<String>> {
        let kallsyms = match self.options.same_kernel {
            true => self.kallsyms.get_or_init(Kallsyms::load).as_ref().ok(),
            false => None,
        };
        addresses
            .iter()
            .map(|a| {
                kallsyms
                    .and_then(|k| k.name(a.0))
                    .map(|n| printable(n).into_owned())
            })
            .collect()
    }

    fn kernel_problem(&self) -> Option<String> {
        match self.options.same_kernel {
            true => self
                .kallsyms
                .get_or_init(Kallsyms::load)
                .as_ref()
                .err()
                .cloned(),
            false => None,
        }
    }

    fn find_functions(&self, module: &Module, names: &[&str]) -> Vec<Range<FileOffset>> {
        let Ok(files) = self.open(module) else {
            return Vec::new();
        };
        parse_recorded(module, &files).map_or(Vec::new(), |elf| elf.functions_named(names))
    }

    fn threads(&self) -> usize {
        self.options.threads()
    }
}

/// Names `addresses` of the ELF file at `path`, given as it states them (as
/// `addr2line -e` takes them), with its separate debug file if it has one.
pub fn symbolize_file(
    path: &Path,
    addresses: &[Svma],
    options: &SymbolizerOptions,
) -> Result<Vec<AddressSymbol>, SymbolsError> {
    let files = ModuleFiles::open(path, &options.debug_dirs)?;
    let mut symbols =
        ElfModule::parse(&files)?.resolve(addresses, Detail::Frames, options.naming());
    symbols.iter_mut().for_each(AddressSymbol::make_printable);
    Ok(symbols)
}

fn symbolize_offsets(
    module: &Module,
    files: &ModuleFiles,
    offsets: &[FileOffset],
    detail: Detail,
    options: &SymbolizerOptions,
) -> Result<ModuleSymbols, SymbolsError> {
    let elf = parse_recorded(module, files)?;
    Ok(name_offsets(&elf, offsets, detail, options))
}

/// What `elf` says of `offsets`.
fn name_offsets(
    elf: &ElfModule<'_>,
    offsets: &[FileOffset],
    detail: Detail,
    options: &SymbolizerOptions,
) -> ModuleSymbols {
    let svmas = elf.svmas(offsets);
    let known: Vec<Svma> = svmas.iter().flatten().copied().collect();
    // Offsets the file does not load leave gaps to fill; most often none.
    let gaps = (known.len() < svmas.len()).then_some(svmas);
    let resolved = elf.resolve(&known, detail, options.naming());
    let notes = elf.notes();
    let addresses = match gaps {
        None => resolved,
        Some(svmas) => {
            let mut resolved = resolved.into_iter();
            (svmas.iter())
                .map(|svma| match svma {
                    Some(_) => resolved.next().unwrap_or_default(),
                    None => AddressSymbol::default(),
                })
                .collect()
        }
    };
    ModuleSymbols {
        problem: None,
        addresses,
        notes,
    }
}

/// JIT code: the offsets of anonymous memory are its addresses, named by
/// the process's jitdump file, with their source lines, or else by its
/// perf map. The map is believed from root, or from `user` (the reader's
/// own where `None`).
fn jit_symbols(
    pid: u32,
    dump: DumpRead,
    offsets: &[FileOffset],
    user: Option<u32>,
) -> ModuleSymbols {
    let (dump, problem) = match dump {
        Ok(dump) => {
            let problem = (dump.as_ref()).and_then(|d| d.problem.clone());
            (dump, problem)
        }
        Err(problem) => (None, Some(problem)),
    };
    let in_dump = |address: Avma| dump.as_ref().and_then(|d| d.function(address.0));
    let wanted: Vec<Avma> = offsets.iter().map(|&o| Module::anonymous_avma(o)).collect();
    let unnamed: Vec<Avma> = (wanted.iter().copied())
        .filter(|&address| in_dump(address).is_none())
        .collect();
    let loaded = (!unnamed.is_empty()).then(|| {
        let user = user.unwrap_or_else(|| rustix::process::geteuid().as_raw());
        PerfMap::load(pid, &unnamed, |owner| owner == 0 || owner == user)
    });
    let addresses = wanted
        .iter()
        .map(|&address| {
            if let Some(function) = in_dump(address) {
                return jitdump_symbol(function, address);
            }
            let map = loaded.as_ref().and_then(|loaded| loaded.map.as_ref());
            let found = map.and_then(|m| m.function(address));
            AddressSymbol {
                // Anonymous memory has no image base: its functions start
                // where the process has them.
                function: found.map(|(start, name)| FunctionSymbol {
                    name: Some(name.into()),
                    linkage_name: None,
                    start: RelativeAddress(start.0),
                }),
                ..AddressSymbol::default()
            }
        })
        .collect();
    ModuleSymbols {
        problem,
        addresses,
        notes: loaded.and_then(|loaded| loaded.note).into_iter().collect(),
    }
}

/// What a jitdump says of `address` in `function`: its name, and its source
/// line where the debug info gives one.
fn jitdump_symbol(function: &JitFunction, address: Avma) -> AddressSymbol {
    let line = line_of(function, address.0);
    AddressSymbol {
        svma: None,
        relative: Some(RelativeAddress(address.0)),
        function: Some(FunctionSymbol {
            name: Some(Arc::clone(&function.name)),
            linkage_name: None,
            start: RelativeAddress(function.start),
        }),
        frames: line
            .map(|entry| Frame {
                function: Some(Arc::clone(&function.name)),
                linkage_name: None,
                file: Some(Arc::clone(&entry.file)),
                line: Some(entry.line),
            })
            .into_iter()
            .collect(),
    }
}

fn unnamed(offsets: &[FileOffset], problem: Option<SymbolsError>) -> ModuleSymbols {
    ModuleSymbols {
        problem: problem.map(|e| e.to_string()),
        addresses: vec![AddressSymbol::default(); offsets.len()],
        notes: Vec::new(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Where this test binary's code is mapped: (start, file offset, path).
    pub(crate) fn own_mapping(address: u64) -> (u64, u64, String) {
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        for line in maps.lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (start, end) = fields[0].split_once('-').unwrap();
            let (start, end) = (
                u64::from_str_radix(start, 16).unwrap(),
                u64::from_str_radix(end, 16).unwrap(),
            );
            if (start..end).contains(&address) {
                let offset = u64::from_str_radix(fields[2], 16).unwrap();
                return (start, offset, fields[5].to_owned());
            }
        }
        panic!("{address:#x} is not mapped");
    }

    #[inline(never)]
    fn a_function_with_a_known_name(x: u64) -> u64 {
        std::hint::black_box(x).wrapping_mul(3)
    }

    #[test]
    fn functions_of_this_very_binary_are_named() {
        let address = a_function_with_a_known_name as *const () as u64;
        std::hint::black_box(a_function_with_a_known_name(1));
        let (start, offset, path) = own_mapping(address);
        let module = Module {
            path,
            build_id: None,
            pid: None,
        };
        let offsets = [
            FileOffset(address - start + offset),
            FileOffset(address - start + offset + 1),
        ];
        let symbols = ElfSymbolizer::default().symbolize(&module, &offsets, Detail::Frames);
        assert_eq!(symbols.problem, None);
        for symbol in &symbols.addresses {
            let function = symbol.function.as_ref().unwrap();
            let name = function.name.as_deref().unwrap();
            assert!(name.ends_with("::a_function_with_a_known_name"), "{name}");
            assert!(!name.contains("::h"), "hash not dropped: {name}");
            // The mangled name is kept for tools that demangle themselves.
            let linkage = function.linkage_name.as_deref().unwrap();
            assert!(linkage.starts_with("_R") || linkage.starts_with("_ZN"));
            assert!(
                linkage.contains("a_function_with_a_known_name"),
                "{linkage}"
            );
            let outermost = symbol.frames.last().unwrap();
            assert_eq!(outermost.linkage_name.as_deref(), Some(linkage));
        }
        let first = &symbols.addresses[0];
        assert_eq!(first.relative, Some(first.function.as_ref().unwrap().start));
    }

    #[test]
    fn a_missing_file_or_a_changed_one_is_a_problem_not_a_wrong_name() {
        let missing = Module {
            path: "/no/such/file.so".into(),
            build_id: None,
            pid: None,
        };
        let symbols =
            ElfSymbolizer::default().symbolize(&missing, &[FileOffset(0x1000)], Detail::Frames);
        assert!(
            symbols
                .problem
                .unwrap()
                .contains("cannot read /no/such/file.so")
        );
        assert_eq!(symbols.addresses, vec![AddressSymbol::default()]);

        let path = std::env::current_exe()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let changed = Module {
            path,
            build_id: Some(profiler_model::BuildId(vec![0; 20])),
            pid: None,
        };
        let symbols =
            ElfSymbolizer::default().symbolize(&changed, &[FileOffset(0x1000)], Detail::Frames);
        let problem = symbols.problem.unwrap();
        assert!(
            problem.contains("has changed since the recording"),
            "{problem}"
        );
    }

    #[test]
    fn the_inline_chain_and_line_of_this_binarys_code() {
        let address = a_function_with_a_known_name as *const () as u64;
        let (start, offset, path) = own_mapping(address);
        let module = Module {
            path,
            build_id: None,
            pid: None,
        };
        let symbols = ElfSymbolizer::default().symbolize(
            &module,
            &[FileOffset(address - start + offset)],
            Detail::Frames,
        );
        let frames = &symbols.addresses[0].frames;
        let innermost = frames.first().expect("this test binary has debug info");
        assert!(
            innermost
                .function
                .as_deref()
                .unwrap()
                .ends_with("a_function_with_a_known_name"),
            "{frames:?}"
        );
        assert!(
            innermost
                .file
                .as_deref()
                .unwrap()
                .ends_with("symbolizer.rs"),
            "{frames:?}"
        );
        assert!(innermost.line.unwrap() > 100, "{frames:?}");
    }

    #[test]
    fn the_vdso_is_named_from_this_process_under_the_same_kernel() {
        use object::{Object, ObjectSymbol};
        let image = own_vdso().unwrap();
        let elf = object::File::parse(&*image).unwrap();
        let symbol = elf
            .dynamic_symbols()
            .find(|s| s.name() == Ok("__vdso_clock_gettime"))
            .unwrap();
        let offset = FileOffset(symbol.address() + 1);
        let vdso = Module {
            path: "[vdso]".into(),
            build_id: None,
            pid: None,
        };
        let options = SymbolizerOptions {
            same_kernel: true,
            ..SymbolizerOptions::default()
        };
        let symbols = ElfSymbolizer::new(options).symbolize(&vdso, &[offset], Detail::Frames);
        let name = symbols.addresses[0]
            .function
            .as_ref()
            .and_then(|f| f.name.clone());
        assert!(
            name.as_deref().is_some_and(|n| n.contains("clock_gettime")),
            "{symbols:?}"
        );
        // Another kernel's vdso may differ: then it stays unnamed.
        let symbols = ElfSymbolizer::default().symbolize(&vdso, &[offset], Detail::Frames);
        assert_eq!(symbols.addresses[0], AddressSymbol::default());
    }

    #[test]
    fn regions_without_files_stay_unnamed_quietly() {
        let vdso = Module {
            path: "[vdso]".into(),
            build_id: None,
            pid: None,
        };
        let symbols =
            ElfSymbolizer::default().symbolize(&vdso, &[FileOffset(0x10)], Detail::Frames);
        assert_eq!(symbols.problem, None);
        assert_eq!(symbols.addresses.len(), 1);
    }
}
