//! The program's overflow handler: its type, and what each call of it is
//! told, with the reads and the reset it may make from there.

use std::sync::Arc;

use profiler_events::Count;

use super::shared::Shared;
use crate::error::SamplerError;

/// A program's overflow handler.
pub(crate) type Handler = Arc<dyn Fn(&Overflow<'_>) + Send + Sync>;

/// What an overflow handler is told.
pub struct Overflow<'a> {
    /// The program counter of the overflow: the kernel's sample where it
    /// has one, else where the signal interrupted the thread.
    pub address: usize,
    /// Bit `i` is set for event `i`; several events may overflow together.
    pub vector: u64,
    /// The signal handler's `ucontext_t *`.
    pub context: *mut std::ffi::c_void,
    pub(super) set: &'a Shared,
}

impl Overflow<'_> {
    /// As [`Counters::read_into`], from the handler.
    ///
    /// [`Counters::read_into`]: super::Counters::read_into
    pub fn read_into(&self, values: &mut [u64]) -> Result<(), SamplerError> {
        self.set.read_into(values)
    }

    /// As [`Counters::read_counts_into`], from the handler.
    ///
    /// [`Counters::read_counts_into`]: super::Counters::read_counts_into
    pub fn read_counts_into(&self, counts: &mut [Count]) -> Result<(), SamplerError> {
        self.set.read_counts_into(counts)
    }

    /// As [`Counters::reset`], from the handler.
    ///
    /// [`Counters::reset`]: super::Counters::reset
    pub fn reset(&self) -> Result<(), SamplerError> {
        self.set.reset()
    }
}
