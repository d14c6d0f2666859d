//! What each sample carries of the user's call stack, as the counters are
//! opened for it and their ring buffers sized for it.

/// What each sample carries of the user's call stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CallStacks {
    /// The kernel's frame-pointer chain, and the registers and the top
    /// `copy_bytes` of the stack (none when 0) that find the caller the
    /// chain skips when the sampled function has no frame of its own.
    FramePointer { copy_bytes: u32 },
    /// The registers and `stack_bytes` of the stack, for the unwind tables.
    Dwarf { stack_bytes: u32 },
}
