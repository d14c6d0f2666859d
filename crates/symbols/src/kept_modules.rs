//! Modules kept parsed between calls: a live view names new places of the
//! same few modules every few seconds, and reading a large module's symbol
//! and unwind tables again each time (a compiler's: 150,000 functions) was
//! most of what naming cost. A parsed module borrows from its mapped file,
//! so the two are kept together. What is kept is bounded by modules and by
//! functions (some 40 bytes each, the names staying in the mapped file);
//! past either bound, the module used longest ago goes.
//!
//! A module kept is parsed again when its file is no longer the one
//! parsed (another inode, size or modification time): a program rebuilt
//! in place names with its new tables.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use profiler_model::Module;
use self_cell::self_cell;

use crate::elf_module::{ElfModule, ModuleFiles};
use crate::error::SymbolsError;
use crate::file_identity::FileIdentity;

/// The most modules kept.
const MAX_MODULES: usize = 16;
/// The most functions kept over all of them (some 20 MB): a compiler's
/// two libraries, which a busy machine names together all the while.
const MAX_FUNCTIONS: usize = 1 << 19;

self_cell!(
    /// A module's files and their parse.
    pub(crate) struct ParsedModule {
        owner: ModuleFiles,
        #[not_covariant]
        dependent: ElfModule,
    }
);

struct Kept {
    module: Module,
    file: FileIdentity,
    parsed: Arc<ParsedModule>,
    functions: usize,
    /// When it was last used, by the count of uses.
    used: u64,
}

/// Parsed modules, the most recently used kept.
#[derive(Default)]
pub(crate) struct KeptModules {
    kept: Mutex<(Vec<Kept>, u64)>,
}

impl std::fmt::Debug for KeptModules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("KeptModules")
            .field("modules", &kept.0.len())
            .finish()
    }
}

impl KeptModules {
    /// Whether `module` may be kept: a file's code.
    pub(crate) fn keeps(module: &Module) -> bool {
        module.has_file() && module.pid.is_none()
    }

    /// `module` parsed: the one kept, else parsed by `parse` and kept
    /// (`None` where it has no file to parse).
    pub(crate) fn get(
        &self,
        module: &Module,
        parse: impl FnOnce() -> Result<Option<ParsedModule>, SymbolsError>,
    ) -> Result<Option<Arc<ParsedModule>>, SymbolsError> {
        let Some(file) = FileIdentity::of_path(Path::new(&module.path)) else {
            // Nothing to tell it by: parsed for this once.
            return Ok(parse()?.map(Arc::new));
        };
        if let Some(parsed) = self.find(module, file) {
            return Ok(Some(parsed));
        }
        // Parsed without the lock: another module may be named meanwhile.
        let Some(parsed) = parse()? else {
            return Ok(None);
        };
        let parsed = Arc::new(parsed);
        let functions = parsed.with_dependent(|_, elf| elf.function_count());
        let mut guard = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let (kept, clock) = &mut *guard;
        *clock += 1;
        kept.retain(|k| k.module != *module);
        kept.push(Kept {
            module: module.clone(),
            file,
            parsed: Arc::clone(&parsed),
            functions,
            used: *clock,
        });
        while kept.len() > MAX_MODULES
            || (kept.len() > 1 && kept.iter().map(|k| k.functions).sum::<usize>() > MAX_FUNCTIONS)
        {
            let oldest = (0..kept.len()).min_by_key(|&i| kept[i].used);
            match oldest {
                Some(i) => drop(kept.swap_remove(i)),
                None => break,
            }
        }
        Ok(Some(parsed))
    }

    fn find(&self, module: &Module, file: FileIdentity) -> Option<Arc<ParsedModule>> {
        let mut guard = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let (kept, clock) = &mut *guard;
        *clock += 1;
        let found = (kept.iter_mut()).find(|k| k.module == *module && k.file == file)?;
        found.used = *clock;
        Some(Arc::clone(&found.parsed))
    }

    /// How many modules are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.kept
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .0
            .len()
    }
}

#[cfg(test)]
mod tests {
    use profiler_model::{Detail, FileOffset, ModuleSymbols, Symbolizer};

    use super::*;
    use crate::symbolizer::ElfSymbolizer;

    /// Shared libraries of this machine that state a build-id, as modules.
    fn libraries(count: usize) -> Vec<Module> {
        let dirs = ["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"];
        let mut found = Vec::new();
        for dir in dirs {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
            paths.sort();
            for path in paths {
                if found.len() == count {
                    return found;
                }
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                if !name.contains(".so") || !path.is_file() {
                    continue;
                }
                let Ok(files) = ModuleFiles::open(Path::new(&path), &[]) else {
                    continue;
                };
                if let Some(build_id) = files.build_id {
                    found.push(Module {
                        path: path.to_string_lossy().into_owned(),
                        build_id: Some(build_id),
                        pid: None,
                    });
                }
            }
        }
        found
    }

    #[test]
    fn kept_modules_name_as_a_fresh_parse_and_stay_bounded() {
        let modules = libraries(MAX_MODULES * 2);
        assert!(
            modules.len() > MAX_MODULES,
            "too few libraries with build-ids"
        );
        let symbolizer = ElfSymbolizer::default();
        let offsets: Vec<FileOffset> = (1..64).map(|i| FileOffset(i * 0x400)).collect();
        for module in &modules {
            let kept = symbolizer.symbolize(module, &offsets, Detail::Functions);
            let files = ModuleFiles::open(Path::new(&module.path), &[]).unwrap();
            let elf = ElfModule::parse(&files).unwrap();
            let svmas: Vec<_> = elf.svmas(&offsets).into_iter().flatten().collect();
            if svmas.len() == offsets.len() {
                let naming = crate::symbolizer::SymbolizerOptions::default().naming();
                let fresh = elf.resolve(&svmas, Detail::Functions, naming);
                let mut fresh = ModuleSymbols {
                    addresses: fresh,
                    ..ModuleSymbols::default()
                };
                fresh.make_printable();
                assert_eq!(kept.addresses, fresh.addresses, "{}", module.path);
            }
            // Named again from the module kept: the same.
            let again = symbolizer.symbolize(module, &offsets, Detail::Functions);
            assert_eq!(kept.addresses, again.addresses, "{}", module.path);
            assert!(symbolizer.kept_modules() <= MAX_MODULES);
        }
        assert!(symbolizer.kept_modules() > 0);
    }
}
