//! Naming from a recording's archive: for the modules it archived, the
//! archive answers, whatever the files on disk hold now (they may be gone,
//! or rebuilt: the archive holds what the recorded ones said); for other
//! modules, and for what an archive does not hold of an archived module's
//! file when that file is still the recorded one, the ELF symbolizer does.

use std::ops::Range;
use std::sync::Arc;

use profiler_model::{
    AddressSymbol, Archive, ArchivedCode, AsmSyntax, Avma, Detail, Disassembler, FileOffset, Flow,
    FunctionListing, Module, ModuleSymbols, Svma, Symbolizer,
};

use crate::disassemble::decode_as;
use crate::symbolizer::ElfSymbolizer;

/// The ELF symbolizer, with a recording's archive before it.
#[derive(Debug)]
pub struct ArchivedSymbolizer {
    inner: ElfSymbolizer,
    archive: Arc<Archive>,
}

impl ArchivedSymbolizer {
    /// `archive` (empty for a recording without one) before `inner`.
    pub fn new(inner: ElfSymbolizer, archive: Arc<Archive>) -> ArchivedSymbolizer {
        ArchivedSymbolizer { inner, archive }
    }

    pub fn archive(&self) -> &Arc<Archive> {
        &self.archive
    }
}

impl Symbolizer for ArchivedSymbolizer {
    fn symbolize(&self, module: &Module, offsets: &[FileOffset], detail: Detail) -> ModuleSymbols {
        let Some(archived) = self.archive.module(module) else {
            return self.inner.symbolize(module, offsets, detail);
        };
        let mut addresses: Vec<Option<AddressSymbol>> =
            offsets.iter().map(|&o| archived.symbol(o)).collect();
        let missing: Vec<FileOffset> = (offsets.iter().zip(&addresses))
            .filter(|(_, symbol)| symbol.is_none())
            .map(|(&offset, _)| offset)
            .collect();
        let mut notes = Vec::new();
        if !missing.is_empty() {
            // Only a file that is still the recorded one can say more.
            let more = self.inner.symbolize(module, &missing, detail);
            notes = more.notes;
            if more.problem.is_none() {
                let mut more = more.addresses.into_iter();
                for symbol in addresses.iter_mut().filter(|s| s.is_none()) {
                    *symbol = more.next();
                }
            }
        }
        ModuleSymbols {
            problem: None,
            addresses: addresses
                .into_iter()
                .map(Option::unwrap_or_default)
                .collect(),
            notes,
        }
    }

    fn symbolize_kernel(&self, addresses: &[Avma]) -> Vec<Option<String>> {
        let mut names: Vec<Option<String>> = (addresses.iter())
            .map(|&a| self.archive.kernel_name(a).map(|name| name.to_string()))
            .collect();
        let missing: Vec<Avma> = (addresses.iter().zip(&names))
            .filter(|(_, name)| name.is_none())
            .map(|(&address, _)| address)
            .collect();
        if !missing.is_empty() {
            let mut more = self.inner.symbolize_kernel(&missing).into_iter();
            for name in names.iter_mut().filter(|n| n.is_none()) {
                *name = more.next().flatten();
            }
        }
        names
    }

    fn kernel_problem(&self) -> Option<String> {
        self.inner.kernel_problem()
    }

    fn find_functions(&self, module: &Module, names: &[&str]) -> Vec<Range<FileOffset>> {
        let Some(archived) = self.archive.module(module) else {
            return self.inner.find_functions(module, names);
        };
        (archived.functions.iter())
            .filter(|f| f.name.as_deref().is_some_and(|name| names.contains(&name)))
            .map(|f| f.offset..FileOffset(f.offset.0.saturating_add(f.len)))
            .collect()
    }

    fn threads(&self) -> usize {
        self.inner.threads()
    }
}

impl Disassembler for ArchivedSymbolizer {
    fn listing(
        &self,
        module: &Module,
        address: Svma,
        syntax: AsmSyntax,
    ) -> Result<FunctionListing, String> {
        let Some(archived) = self.archive.module(module) else {
            return self.inner.listing(module, address, syntax);
        };
        match archived.code(address) {
            Some(code) => Ok(archived_listing(code, syntax)),
            None => self.inner.listing(module, address, syntax).map_err(|problem| {
                format!(
                    "{problem}; the recording's archive keeps the code of functions of up to 64 \
                     KiB with samples only"
                )
            }),
        }
    }
}

/// The listing of archived code, decoded anew in `syntax`.
fn archived_listing(code: &ArchivedCode, syntax: AsmSyntax) -> FunctionListing {
    let start = code.svma;
    let end = Svma(start.0.saturating_add(code.bytes.len() as u64));
    let mut instructions = decode_as(
        syntax,
        u32::from(code.bitness),
        &code.bytes,
        start,
        code.offset,
    );
    for instruction in &mut instructions {
        let at = instruction.svma.0.wrapping_sub(start.0) as u32;
        let run = code.frames.partition_point(|(from, _)| *from <= at);
        if let Some((_, frames)) = run.checked_sub(1).and_then(|i| code.frames.get(i)) {
            instruction.frames = frames.clone();
        }
        instruction.callee = match instruction.flow {
            Flow::Jump(to) | Flow::Call(to) if !(start..end).contains(&to) => (code.callees)
                .binary_search_by_key(&to, |(svma, _)| *svma)
                .ok()
                .map(|i| code.callees[i].1.clone()),
            _ => None,
        };
    }
    FunctionListing {
        name: code.name.clone(),
        start,
        end,
        has_lines: code.has_lines,
        instructions,
    }
}
