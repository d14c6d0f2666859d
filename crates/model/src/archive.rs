//! What a recording keeps of its modules so that it can be reported where
//! they are not (another machine, binaries rebuilt since): for each module
//! with samples, what the symbolizer said of every sampled and stack
//! address, the extents of the functions holding them, those functions'
//! code for annotated listings, and for stacks that are unwound at report
//! time, the module's unwind tables; and the names of sampled kernel
//! addresses.
//!
//! `profiler archive` writes it into the recording (see archive_file.rs);
//! a symbolizer that answers from it for the archived modules is in the
//! symbols crate.

use std::sync::Arc;

use crate::address::{Avma, FileOffset, RelativeAddress, Svma};
use crate::module::Module;
use crate::record::BuildId;
use crate::symbolize::{AddressSymbol, Frame, FunctionSymbol};

/// The archive of a recording.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Archive {
    pub modules: Vec<ModuleArchive>,
    /// Kernel addresses held by the samples' stacks, with their names,
    /// sorted.
    pub kernel: Vec<(Avma, Arc<str>)>,
}

/// What one module's file said of the recording's addresses in it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModuleArchive {
    /// The module, as the recording names it.
    pub path: String,
    pub build_id: Option<BuildId>,
    /// For JIT code, its process (see [`Module::pid`]).
    pub pid: Option<u32>,
    /// The functions holding archived addresses, sorted by `offset`.
    pub functions: Vec<ArchivedFunction>,
    /// Every archived address, sorted, with the symbolizer's answer
    /// (inline chains and lines included).
    pub addresses: Vec<(FileOffset, AddressSymbol)>,
    /// The code of functions holding archived addresses, for listings.
    pub code: Vec<ArchivedCode>,
    /// The unwind tables, for stack copies unwound at report time.
    pub unwind: Option<ArchivedUnwind>,
}

/// A function's extent, in the file and as the file states addresses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArchivedFunction {
    pub name: Option<Arc<str>>,
    /// Its mangled name, where that differs from `name`.
    pub linkage_name: Option<Arc<str>>,
    /// The file offset of its first byte, and its length in bytes.
    pub offset: FileOffset,
    pub len: u64,
    /// Its first address, as stated in the file and relative to the
    /// module's image base.
    pub svma: Svma,
    pub start: RelativeAddress,
}

/// One function's code and what annotate shows beside it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArchivedCode {
    /// Where the code starts, as stated in the file and in the file.
    pub svma: Svma,
    pub offset: FileOffset,
    /// 32 or 64: how the code decodes.
    pub bitness: u8,
    pub bytes: Vec<u8>,
    /// The function's name, demangled, if the module names it.
    pub name: Option<String>,
    /// Whether the module had debug info (lines).
    pub has_lines: bool,
    /// Each instruction's inline chain, by the instruction's offset in
    /// `bytes`: an instruction not listed has its predecessor's.
    pub frames: Vec<(u32, Vec<Frame>)>,
    /// Where direct jumps and calls out of the function go, and what the
    /// module names there (`name` or `name+0xOFFSET`).
    pub callees: Vec<(Svma, String)>,
}

/// The sections a stack unwinder reads, and where the code lies.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArchivedUnwind {
    /// `.eh_frame`, `.eh_frame_hdr`, `.debug_frame` with their bytes;
    /// `.text`, `.got` with their addresses alone.
    pub sections: Vec<ArchivedSection>,
    /// The executable segments: `size` bytes at file `offset` appear at
    /// `svma`.
    pub segments: Vec<(FileOffset, u64, Svma)>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArchivedSection {
    pub name: String,
    /// Its addresses, as stated in the file: `start..end`.
    pub start: Svma,
    pub end: Svma,
    pub bytes: Vec<u8>,
}

impl Archive {
    /// The archive of `module`, if it has one.
    pub fn module(&self, module: &Module) -> Option<&ModuleArchive> {
        self.modules
            .iter()
            .find(|m| m.path == module.path && m.build_id == module.build_id && m.pid == module.pid)
    }

    /// The archived name of kernel address `address`.
    pub fn kernel_name(&self, address: Avma) -> Option<&Arc<str>> {
        let i = self
            .kernel
            .binary_search_by_key(&address, |(a, _)| *a)
            .ok()?;
        Some(&self.kernel[i].1)
    }

    pub fn is_empty(&self) -> bool {
        self.modules.is_empty() && self.kernel.is_empty()
    }
}

impl ModuleArchive {
    /// What the archive knows of `offset`: the symbolizer's answer if it
    /// was archived, else the function holding it (without an inline
    /// chain), else nothing.
    pub fn symbol(&self, offset: FileOffset) -> Option<AddressSymbol> {
        if let Ok(i) = self.addresses.binary_search_by_key(&offset, |(o, _)| *o) {
            return Some(self.addresses[i].1.clone());
        }
        let function = self.function(offset)?;
        let delta = offset.0 - function.offset.0;
        Some(AddressSymbol {
            // An archive may state a function at the end of the address
            // space.
            svma: Some(Svma(function.svma.0.wrapping_add(delta))),
            relative: Some(RelativeAddress(function.start.0.wrapping_add(delta))),
            function: Some(FunctionSymbol {
                name: function.name.clone(),
                linkage_name: function.linkage_name.clone(),
                start: function.start,
            }),
            frames: Vec::new(),
        })
    }

    /// The function whose extent holds `offset`.
    pub fn function(&self, offset: FileOffset) -> Option<&ArchivedFunction> {
        let after = self.functions.partition_point(|f| f.offset <= offset);
        self.functions[..after]
            .last()
            .filter(|f| offset.0 - f.offset.0 < f.len)
    }

    /// The archived code of the function that holds `svma`.
    pub fn code(&self, svma: Svma) -> Option<&ArchivedCode> {
        self.code
            .iter()
            .find(|c| (c.svma.0..c.svma.0.saturating_add(c.bytes.len() as u64)).contains(&svma.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn function(name: &str, offset: u64, len: u64) -> ArchivedFunction {
        ArchivedFunction {
            name: Some(name.into()),
            linkage_name: None,
            offset: FileOffset(offset),
            len,
            svma: Svma(offset + 0x40_0000),
            start: RelativeAddress(offset),
        }
    }

    #[test]
    fn an_offset_not_archived_is_named_by_the_function_that_holds_it() {
        let archive = ModuleArchive {
            path: "/bin/app".into(),
            functions: vec![function("a", 0x1000, 0x40), function("b", 0x1040, 0x20)],
            addresses: vec![(
                FileOffset(0x1010),
                AddressSymbol {
                    frames: vec![Frame {
                        line: Some(7),
                        ..Frame::default()
                    }],
                    ..AddressSymbol::default()
                },
            )],
            ..ModuleArchive::default()
        };
        assert_eq!(
            archive.symbol(FileOffset(0x1010)).unwrap().frames[0].line,
            Some(7)
        );
        let held = archive.symbol(FileOffset(0x1050)).unwrap();
        assert_eq!(held.function.unwrap().name.as_deref(), Some("b"));
        assert_eq!(held.svma, Some(Svma(0x40_1050)));
        assert_eq!(held.relative, Some(RelativeAddress(0x1050)));
        assert_eq!(archive.symbol(FileOffset(0x1060)), None);
        assert_eq!(archive.symbol(FileOffset(0xfff)), None);
    }
}
