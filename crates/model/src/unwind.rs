//! The contract between stack unwinders and the reports, for samples that
//! carry a copy of the user stack: the whole stack's top with `record
//! --call-graph dwarf`, a few hundred bytes with `-g`, where one step finds
//! the caller that the frame-pointer chain skipped.
//!
//! Reports know a process's executable mappings; the unwinder knows how to
//! read each module's unwind tables. The reports never open ELF files; the
//! unwinder never sees samples.

use crate::address::{Avma, FileOffset};
use crate::module::{ModuleId, ModuleTable};
use crate::record::UserStack;

/// One executable mapping of a process: `start..end` holds the module's
/// file bytes from `offset` on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MappedRange {
    pub start: Avma,
    pub end: Avma,
    pub offset: FileOffset,
    pub module: ModuleId,
}

/// Makes unwinders for processes.
pub trait StackUnwinder: Sync {
    /// An unwinder for a process whose executable mappings are `mappings`
    /// (every mapping it ever had, sorted by start, possibly overlapping
    /// where an address range was reused).
    fn process<'a>(
        &'a self,
        modules: &ModuleTable,
        mappings: &[MappedRange],
    ) -> Box<dyn ProcessUnwinder + 'a>;
}

/// The registers of a sampled function's caller, one step up from the
/// sampled instruction: where the function returns to, and the caller's
/// stack and frame pointers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallerRegisters {
    pub return_address: Avma,
    pub sp: Avma,
    pub bp: Avma,
}

/// Unwinds the stacks of one process.
pub trait ProcessUnwinder {
    /// Appends to `frames` the sampled instruction pointer, then the return
    /// address of each caller, innermost first, as they are found on the
    /// stack (callers' addresses are not adjusted to the call instruction).
    /// Returns whether the walk reached the stack's end, rather than
    /// stopping for lack of unwind data or of stack bytes.
    fn unwind(&mut self, stack: &UserStack, frames: &mut Vec<Avma>) -> bool;

    /// One step from the sampled instruction by the unwind tables of the
    /// code it lies in: its caller's registers. `None` where that code has
    /// no unwind tables (JIT code, a module without them), or the stack
    /// copy does not hold what they point at.
    fn caller(&mut self, stack: &UserStack) -> Option<CallerRegisters> {
        let _ = stack;
        None
    }
}

/// An unwinder that knows no unwind tables: every stack is its sampled
/// instruction pointer alone.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoUnwinder;

impl StackUnwinder for NoUnwinder {
    fn process<'a>(&'a self, _: &ModuleTable, _: &[MappedRange]) -> Box<dyn ProcessUnwinder + 'a> {
        Box::new(NoUnwinder)
    }
}

impl ProcessUnwinder for NoUnwinder {
    fn unwind(&mut self, stack: &UserStack, frames: &mut Vec<Avma>) -> bool {
        frames.push(stack.ip);
        false
    }
}
