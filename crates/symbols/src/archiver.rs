//! Making a recording's archive: the views' own pass over the recording
//! is run with an [`Archiver`] as their symbolizer, which names every
//! address as the ELF symbolizer does (with inline chains and lines,
//! whatever was asked) and keeps each answer; then, per module, the
//! extents and code of the functions that hold those addresses are read
//! from the same files, and their unwind tables if stacks are unwound at
//! report time.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Range;
use std::sync::{Arc, Mutex, PoisonError};

use profiler_model::{
    AddressSymbol, Archive, ArchivedCode, ArchivedFunction, AsmSyntax, Avma, Detail, FileOffset,
    Flow, Frame, FunctionListing, Module, ModuleArchive, ModuleSymbols, RelativeAddress, Svma,
    Symbolizer,
};

use crate::disassemble::function_code;
use crate::elf_module::{ElfModule, ModuleFiles};
use crate::symbolizer::{ElfSymbolizer, parse_recorded};
use crate::unwind::unwind_tables;

/// Code of larger functions is not archived: annotate lists it only where
/// the binary is.
const MAX_ARCHIVED_CODE: u64 = 64 << 10;

/// A symbolizer that keeps what it says, for the archive.
pub struct Archiver<'a> {
    inner: &'a ElfSymbolizer,
    answers: Mutex<HashMap<Module, BTreeMap<FileOffset, AddressSymbol>>>,
    /// Modules that could not be named, and why.
    unnamed: Mutex<BTreeMap<String, String>>,
    kernel: Mutex<BTreeMap<Avma, Arc<str>>>,
}

/// An archive, and the modules left out of it.
#[derive(Debug)]
pub struct Archived {
    pub archive: Archive,
    /// Modules whose files could not be read (missing, or changed since
    /// the recording), each with why: the views name them as before.
    pub left_out: Vec<(String, String)>,
}

impl<'a> Archiver<'a> {
    pub fn new(inner: &'a ElfSymbolizer) -> Archiver<'a> {
        Archiver {
            inner,
            answers: Mutex::default(),
            unnamed: Mutex::default(),
            kernel: Mutex::default(),
        }
    }

    /// The archive of every address named so far; with `unwind`, each
    /// module's unwind tables too.
    pub fn finish(self, unwind: bool) -> Archived {
        let answers =
            std::mem::take(&mut *self.answers.lock().unwrap_or_else(PoisonError::into_inner));
        let mut modules: Vec<ModuleArchive> = answers
            .into_iter()
            .map(|(module, addresses)| {
                let mut archive = ModuleArchive {
                    path: module.path.clone(),
                    build_id: module.build_id.clone(),
                    pid: module.pid,
                    addresses: addresses.into_iter().collect(),
                    unwind: unwind
                        .then(|| unwind_tables(&module, self.inner.options()))
                        .flatten(),
                    ..ModuleArchive::default()
                };
                self.add_code(&module, &mut archive);
                archive
            })
            .collect();
        modules.sort_by(|a, b| (&a.path, a.pid).cmp(&(&b.path, b.pid)));
        let kernel = self
            .kernel
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        let unnamed = self
            .unnamed
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        Archived {
            archive: Archive {
                modules,
                kernel: kernel.into_iter().collect(),
            },
            left_out: unnamed.into_iter().collect(),
        }
    }

    /// The extents and code of the functions holding the archived
    /// addresses of `module`, from its files.
    fn add_code(&self, module: &Module, archive: &mut ModuleArchive) {
        let Ok(files) = self.inner.open(module) else {
            return;
        };
        let Ok(elf) = parse_recorded(module, &files) else {
            return;
        };
        for (start, svma) in function_starts(&archive.addresses) {
            let Some(function) = elf.function(svma) else {
                continue;
            };
            let (from, to) = (Svma(function.start), Svma(function.end));
            let Some((offset, len)) = elf.image.layout.file_range(from, to) else {
                continue;
            };
            let named = (archive.addresses.iter())
                .filter_map(|(_, a)| a.function.as_ref())
                .find(|f| f.start == start);
            archive.functions.push(ArchivedFunction {
                name: named.and_then(|f| f.name.clone()),
                linkage_name: named.and_then(|f| f.linkage_name.clone()),
                offset,
                len,
                svma: from,
                start,
            });
            if len <= MAX_ARCHIVED_CODE
                && let Some(code) = self.code(&elf, &files, module, from)
            {
                archive.code.push(code);
            }
        }
        archive.functions.sort_by_key(|f| f.offset);
    }

    /// The code of the function at `start`, with what annotate shows beside
    /// each instruction.
    fn code(
        &self,
        elf: &ElfModule<'_>,
        files: &ModuleFiles,
        module: &Module,
        start: Svma,
    ) -> Option<ArchivedCode> {
        let code = function_code(elf, files, &module.path, start).ok()?;
        let listing = self.inner.listing_of(elf, &code, AsmSyntax::Att);
        Some(ArchivedCode {
            svma: code.start,
            offset: code.offset,
            bitness: code.bitness as u8,
            bytes: code.bytes.to_vec(),
            name: listing.name.clone(),
            has_lines: listing.has_lines,
            frames: frame_runs(&listing),
            callees: callees(&listing),
        })
    }
}

/// Each distinct function of `addresses`: its start, relative and as the
/// file states it.
fn function_starts(addresses: &[(FileOffset, AddressSymbol)]) -> BTreeSet<(RelativeAddress, Svma)> {
    addresses
        .iter()
        .filter_map(|(_, symbol)| {
            let start = symbol.function.as_ref()?.start;
            let (svma, relative) = (symbol.svma?, symbol.relative?);
            Some((
                start,
                Svma(svma.0.checked_sub(relative.0.checked_sub(start.0)?)?),
            ))
        })
        .collect()
}

/// The listing's inline chains, each kept where it changes.
fn frame_runs(listing: &FunctionListing) -> Vec<(u32, Vec<Frame>)> {
    let mut runs: Vec<(u32, Vec<Frame>)> = Vec::new();
    for instruction in &listing.instructions {
        if runs
            .last()
            .is_some_and(|(_, frames)| *frames == instruction.frames)
        {
            continue;
        }
        let at = (instruction.svma.0 - listing.start.0) as u32;
        runs.push((at, instruction.frames.clone()));
    }
    runs
}

/// Where the listing's jumps and calls out of the function go, named.
fn callees(listing: &FunctionListing) -> Vec<(Svma, String)> {
    let mut callees: Vec<(Svma, String)> = (listing.instructions.iter())
        .filter_map(|i| match (i.flow, &i.callee) {
            (Flow::Jump(to) | Flow::Call(to), Some(name)) => Some((to, name.clone())),
            _ => None,
        })
        .collect();
    callees.sort();
    callees.dedup();
    callees
}

impl Symbolizer for Archiver<'_> {
    fn symbolize(&self, module: &Module, offsets: &[FileOffset], _: Detail) -> ModuleSymbols {
        let symbols = self.inner.symbolize(module, offsets, Detail::Frames);
        match &symbols.problem {
            Some(problem) => {
                let mut unnamed = self.unnamed.lock().unwrap_or_else(PoisonError::into_inner);
                unnamed.insert(module.path.clone(), problem.clone());
            }
            None => {
                let mut answers = self.answers.lock().unwrap_or_else(PoisonError::into_inner);
                let kept = answers.entry(module.clone()).or_default();
                kept.extend(
                    offsets
                        .iter()
                        .copied()
                        .zip(symbols.addresses.iter().cloned()),
                );
            }
        }
        symbols
    }

    fn symbolize_kernel(&self, addresses: &[Avma]) -> Vec<Option<String>> {
        let names = self.inner.symbolize_kernel(addresses);
        let mut kernel = self.kernel.lock().unwrap_or_else(PoisonError::into_inner);
        for (address, name) in addresses.iter().zip(&names) {
            if let Some(name) = name {
                kernel.insert(*address, name.as_str().into());
            }
        }
        names
    }

    fn kernel_problem(&self) -> Option<String> {
        self.inner.kernel_problem()
    }

    fn find_functions(&self, module: &Module, names: &[&str]) -> Vec<Range<FileOffset>> {
        self.inner.find_functions(module, names)
    }

    fn threads(&self) -> usize {
        self.inner.threads()
    }
}
