//! One ELF module, parsed once for all its addresses: its file and, when the
//! file has no DWARF of its own, its separate debug file; the function table
//! over both; the DWARF of whichever has it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use gimli::RunTimeEndian;
use profiler_model::{AddressSymbol, FileOffset, FunctionSymbol, Svma};

use crate::debug_file::{DebugFile, find_debug_file};
use crate::demangle::demangle;
use crate::dwarf::{self, FrameFinder, Sections};
use crate::error::SymbolsError;
use crate::functions::FunctionTable;
use crate::image::Image;

/// Below this many addresses, one thread does the work: each thread pays
/// for parsing the units' headers again.
const ADDRESSES_PER_THREAD: usize = 4096;

/// The bytes of a module's files.
pub(crate) struct ModuleFiles {
    pub path: String,
    pub data: Vec<u8>,
    pub debug: Option<DebugFile>,
}

impl ModuleFiles {
    /// Reads the file at `path`, and its separate debug file if it needs one
    /// and one is found in `debug_dirs` (or the usual places).
    pub fn read(path: &Path, debug_dirs: &[PathBuf]) -> Result<ModuleFiles, SymbolsError> {
        let display = path.display().to_string();
        let data = std::fs::read(path).map_err(|error| SymbolsError::Read {
            path: display.clone(),
            error,
        })?;
        let image = Image::parse(&data).map_err(|error| SymbolsError::Parse {
            path: display.clone(),
            error,
        })?;
        let debug = find_debug_file(path, &image, debug_dirs);
        Ok(ModuleFiles {
            path: display,
            data,
            debug,
        })
    }

    /// A module held in memory (the vdso).
    pub fn in_memory(name: &str, data: Vec<u8>) -> ModuleFiles {
        ModuleFiles {
            path: name.to_owned(),
            data,
            debug: None,
        }
    }
}

/// A parsed module.
pub(crate) struct ElfModule<'a> {
    pub image: Image<'a>,
    functions: FunctionTable<'a>,
    sections: Option<Sections<'a>>,
    endian: RunTimeEndian,
}

impl<'a> ElfModule<'a> {
    pub fn parse(files: &'a ModuleFiles) -> Result<ElfModule<'a>, SymbolsError> {
        let parse = |path: &str, data: &'a [u8]| {
            Image::parse(data).map_err(|error| SymbolsError::Parse {
                path: path.to_owned(),
                error,
            })
        };
        let image = parse(&files.path, &files.data)?;
        let debug = match &files.debug {
            Some(debug) => Some(parse(&debug.path.display().to_string(), &debug.data)?),
            None => None,
        };
        let dwarf_image = debug.as_ref().unwrap_or(&image);
        let sections = dwarf::load_sections(dwarf_image);
        let endian = dwarf::endian(dwarf_image);
        let functions = FunctionTable::new(&image, debug.as_ref());
        Ok(ElfModule {
            image,
            functions,
            sections,
            endian,
        })
    }

    /// The stated address of each file offset.
    pub fn svmas(&self, offsets: &[FileOffset]) -> Vec<Option<Svma>> {
        offsets.iter().map(|&o| self.image.svma(o)).collect()
    }

    /// Names every address (sorted addresses make the DWARF lookups cheaper).
    pub fn resolve(&self, addresses: &[Svma], full_signatures: bool) -> Vec<AddressSymbol> {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let threads = threads.min(addresses.len() / ADDRESSES_PER_THREAD).max(1);
        if threads == 1 {
            return self.resolve_chunk(addresses, full_signatures);
        }
        let chunk = addresses.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let workers: Vec<_> = addresses
                .chunks(chunk)
                .map(|part| scope.spawn(move || self.resolve_chunk(part, full_signatures)))
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        })
    }

    fn resolve_chunk(&self, addresses: &[Svma], full_signatures: bool) -> Vec<AddressSymbol> {
        let mut finder = self
            .sections
            .as_ref()
            .and_then(|s| FrameFinder::new(s, self.endian, full_signatures));
        let mut names: HashMap<&str, String> = HashMap::new();
        addresses
            .iter()
            .map(|&svma| {
                let function = self.functions.find(svma.0);
                let mut frames = finder
                    .as_mut()
                    .map(|f| f.frames(svma.0))
                    .unwrap_or_default();
                let symbol_name = function.and_then(|f| f.name.as_deref()).map(|raw| {
                    names
                        .entry(raw)
                        .or_insert_with(|| demangle(raw, full_signatures))
                        .clone()
                });
                // The outermost frame is the function the symbol table names, as
                // addr2line and llvm-symbolizer name it: DWARF often knows only
                // its short name (`.cold` parts, functions without a linkage name).
                if let (Some(name), Some(outermost)) = (&symbol_name, frames.last_mut()) {
                    outermost.function = Some(name.as_str().into());
                }
                // Where no symbol names the code, the debug info may.
                let name = symbol_name.or_else(|| {
                    frames
                        .last()
                        .and_then(|f| f.function.as_deref().map(str::to_owned))
                });
                let start = self
                    .image
                    .relative(Svma(function.map_or(svma.0, |f| f.start)));
                let function = (function.is_some() || name.is_some())
                    .then_some(FunctionSymbol { name, start });
                AddressSymbol {
                    svma: Some(svma),
                    relative: Some(self.image.relative(svma)),
                    function,
                    frames,
                }
            })
            .collect()
    }
}
