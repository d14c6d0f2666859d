//! Memory a C program lends the library: its bucket buffers, read when a
//! profile starts and written when it is read or stopped, never in between.

#![allow(unsafe_code)]

use std::ffi::c_void;
use std::ptr::NonNull;

/// `len` bytes at `start`, lent by the caller for the life of a session.
#[derive(Debug)]
pub(crate) struct CallerBuffer {
    start: NonNull<u8>,
    len: usize,
}

// SAFETY: the buffer is written by whichever thread the session's calls
// run on (the drain thread, for a read, while the caller waits): `new`'s
// contract is about when the memory is used, not by which thread.
unsafe impl Send for CallerBuffer {}

impl CallerBuffer {
    /// The buffer at `start`, or `None` for a null pointer.
    ///
    /// # Safety
    ///
    /// `start` must point to `len` bytes that stay valid for reads and
    /// writes for as long as the returned value lives, and that no one else
    /// accesses while a borrow from [`CallerBuffer::bytes`] or
    /// [`CallerBuffer::bytes_mut`] lives: the header's contract for the
    /// buffers of a session.
    pub(crate) unsafe fn new(start: *mut c_void, len: usize) -> Option<CallerBuffer> {
        NonNull::new(start.cast()).map(|start| CallerBuffer { start, len })
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: `new`'s contract: `len` readable bytes that no one else
        // writes meanwhile. Any bit pattern is a valid u8.
        unsafe { std::slice::from_raw_parts(self.start.as_ptr(), self.len) }
    }

    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: `new`'s contract: `len` writable bytes that no one else
        // accesses meanwhile; `&mut self` makes this the only borrow here.
        unsafe { std::slice::from_raw_parts_mut(self.start.as_ptr(), self.len) }
    }
}
