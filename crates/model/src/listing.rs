//! The contract between the disassembler and annotated listings.
//!
//! A disassembler hands the reports one function's code, instruction by
//! instruction, each with where it came from in the source; a source reader
//! hands them the text of the files the debug info names. The reports never
//! open ELF or source files themselves.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::address::{FileOffset, Svma};
use crate::module::Module;
use crate::printable::make_printable;
use crate::symbolize::Frame;

/// How instructions are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AsmSyntax {
    /// AT&T, as objdump and perf annotate write it.
    #[default]
    Att,
    Intel,
}

/// One function's code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionListing {
    /// The function's name, demangled, if the module names it.
    pub name: Option<String>,
    /// Its extent, as the file states addresses: `start..end`.
    pub start: Svma,
    pub end: Svma,
    /// Whether the module has debug info: without it, instructions have no
    /// source lines.
    pub has_lines: bool,
    pub instructions: Vec<Instruction>,
}

impl FunctionListing {
    /// Escapes the control characters of the names and paths it holds.
    pub fn make_printable(&mut self) {
        if let Some(name) = &mut self.name {
            make_printable(name);
        }
        for instruction in &mut self.instructions {
            if let Some(callee) = &mut instruction.callee {
                make_printable(callee);
            }
            instruction
                .frames
                .iter_mut()
                .for_each(Frame::make_printable);
        }
    }
}

/// One instruction of a [`FunctionListing`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instruction {
    /// Where it is, as the file states it and in the file.
    pub svma: Svma,
    pub offset: FileOffset,
    /// Its length in bytes.
    pub len: u8,
    /// Mnemonic and operands; direct branch targets as hexadecimal
    /// addresses.
    pub text: String,
    pub flow: Flow,
    /// For a direct jump or call out of the function: the function it goes
    /// to, as `name` or `name+0xOFFSET`, when the module names it.
    pub callee: Option<String>,
    /// The inline chain, innermost first: the function the instruction came
    /// from with its line, then each function it was inlined into with the
    /// line of the call. Empty without debug info.
    pub frames: Vec<Frame>,
}

/// Where control goes after an instruction, when it goes somewhere known.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Flow {
    #[default]
    Next,
    /// A direct jump, conditional or not.
    Jump(Svma),
    /// A direct call.
    Call(Svma),
}

/// Reads a function's code from a module's file.
pub trait Disassembler: Sync {
    /// The function of `module` that holds `address`. The error says why
    /// there is none, in one line (file missing or changed, no function
    /// there, no code to read).
    fn listing(
        &self,
        module: &Module,
        address: Svma,
        syntax: AsmSyntax,
    ) -> Result<FunctionListing, String>;
}

/// Reads the source files debug info names.
pub trait SourceReader: Sync {
    /// Lines `wanted` (numbered from 1) of `file`, as the debug info names
    /// it; the error says in one line why it cannot be read.
    fn lines(&self, file: &str, wanted: &BTreeSet<u32>) -> Result<Arc<SourceText>, String>;
}

/// Lines of a source file, read for a listing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceText {
    /// The file read: where the debug info says, or where the sources were
    /// said to have moved.
    pub path: String,
    /// The lines asked for that the file has, by number, without their
    /// ends, made printable.
    pub lines: BTreeMap<u32, String>,
    /// What was left unread or cut short, in one line.
    pub cut: Option<String>,
}
