//! The contract between the symbolizer and the reports.
//!
//! Reports hand a symbolizer the deduplicated, sorted file offsets sampled in
//! one module, and get back what each offset is. The reports never open ELF
//! files themselves; the symbolizer never sees samples.

use std::ops::Range;
use std::sync::Arc;

use crate::address::{Avma, FileOffset, RelativeAddress, Svma};
use crate::module::Module;
use crate::printable::{make_printable, printable_arc};

/// How much a caller needs to know of each address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Detail {
    /// The containing function: symbol tables suffice, and debug info is
    /// read only where they name nothing. `AddressSymbol::frames` may stay
    /// empty.
    Functions,
    /// Also the inline chain with source lines, from the debug info.
    Frames,
}

/// Turns file offsets of a module into functions.
pub trait Symbolizer: Sync {
    /// Symbolizes `offsets`, which are sorted and free of duplicates. The
    /// answer holds one [`AddressSymbol`] per offset, in the same order.
    fn symbolize(&self, module: &Module, offsets: &[FileOffset], detail: Detail) -> ModuleSymbols;

    /// Names kernel addresses (sorted, free of duplicates); `None` where
    /// no name is known. The default knows none.
    fn symbolize_kernel(&self, addresses: &[Avma]) -> Vec<Option<String>> {
        vec![None; addresses.len()]
    }

    /// Why kernel addresses that [`Symbolizer::symbolize_kernel`] left
    /// unnamed could not be named, where the reason is worth saying (the
    /// kernel hides its addresses). The default knows none.
    fn kernel_problem(&self) -> Option<String> {
        None
    }

    /// Where the functions called `names` (as the symbol tables spell
    /// them) lie in `module`, in file offsets: a lookup in the symbol
    /// tables alone, naming nothing else. The default knows none.
    fn find_functions(&self, _module: &Module, _names: &[&str]) -> Vec<Range<FileOffset>> {
        Vec::new()
    }

    /// How many modules may be symbolized at once. What is named must not
    /// depend on it.
    fn threads(&self) -> usize {
        1
    }
}

/// The symbolizer's answer for one module.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModuleSymbols {
    /// Why this module's addresses could not be named, e.g. its file is
    /// missing or no longer matches the recorded build-id.
    pub problem: Option<String>,
    pub addresses: Vec<AddressSymbol>,
    /// What was passed over or not believed while naming (a section
    /// claiming more than it holds, a JIT map of another user), each in
    /// one line: the names given are good, but may be fewer.
    pub notes: Vec<String>,
}

impl ModuleSymbols {
    /// Escapes the control characters of every name, path and problem:
    /// they come from files anyone may have made.
    pub fn make_printable(&mut self) {
        self.problem.iter_mut().for_each(make_printable);
        self.notes.iter_mut().for_each(make_printable);
        self.addresses
            .iter_mut()
            .for_each(AddressSymbol::make_printable);
    }
}

/// What one sampled address is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AddressSymbol {
    /// The address as the file states it (as `nm` and `objdump` print it),
    /// when the file could be read.
    pub svma: Option<Svma>,
    /// The address relative to the module's image base, when the file
    /// could be read.
    pub relative: Option<RelativeAddress>,
    /// The function containing the address, when one is known: the one
    /// the symbol table (or the unwind tables) place it in.
    pub function: Option<FunctionSymbol>,
    /// The inline chain from the debug info, innermost first: the function
    /// the instruction came from and its line, then each caller it was
    /// inlined into with the line of the call; the last is `function`'s.
    /// Empty without debug info.
    pub frames: Vec<Frame>,
}

impl AddressSymbol {
    /// Escapes the control characters of its names and paths.
    pub fn make_printable(&mut self) {
        if let Some(function) = &mut self.function {
            printable_names(&mut [&mut function.name, &mut function.linkage_name]);
        }
        for frame in &mut self.frames {
            frame.make_printable();
        }
    }
}

/// One frame of an inline chain.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Frame {
    /// The function, demangled. Shared: the same names recur in many frames.
    pub function: Option<Arc<str>>,
    /// The function's name as the debug info or symbol table spells it
    /// (mangled), where that differs from `function`: what tools that
    /// demangle for themselves (pprof's `system_name`) take.
    pub linkage_name: Option<Arc<str>>,
    /// The source file, as the debug info names it (usually absolute).
    pub file: Option<Arc<str>>,
    pub line: Option<u32>,
}

impl Frame {
    /// Escapes the control characters of its names and path.
    pub fn make_printable(&mut self) {
        printable_names(&mut [&mut self.function, &mut self.linkage_name, &mut self.file]);
    }
}

fn printable_names(names: &mut [&mut Option<Arc<str>>]) {
    for name in names.iter_mut().filter_map(|name| name.as_mut()) {
        *name = printable_arc(name);
    }
}

/// A function, known by name or only by its extent (from unwind tables).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FunctionSymbol {
    /// The demangled name, if the symbol table or debug info has one;
    /// shared by every address of the function.
    pub name: Option<Arc<str>>,
    /// The symbol's name as the linker knows it (mangled), where that
    /// differs from `name`.
    pub linkage_name: Option<Arc<str>>,
    /// The function's first address, relative to the module's image base.
    pub start: RelativeAddress,
}

/// A symbolizer that knows nothing: every address stays a module offset.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoSymbols;

impl Symbolizer for NoSymbols {
    fn symbolize(&self, _: &Module, offsets: &[FileOffset], _: Detail) -> ModuleSymbols {
        ModuleSymbols {
            problem: None,
            addresses: vec![AddressSymbol::default(); offsets.len()],
            notes: Vec::new(),
        }
    }
}
