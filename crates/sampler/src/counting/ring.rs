//! The smallest ring buffer an overflowing event needs: the kernel writes a
//! sample (program counter, process and thread id) at each overflow, and
//! wakes the event's owner with a signal; the signal handler reads the
//! samples. Reading allocates nothing and takes no lock.

use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU64, Ordering};

use perf_event_open_sys::bindings::{PERF_RECORD_SAMPLE, perf_event_mmap_page};

use crate::sysinfo::page_size;

/// Data pages after the header page: room for some 340 samples of 24
/// bytes, far more than pile up between two signals.
const DATA_PAGES: usize = 2;

/// An event's ring buffer, mapped.
#[derive(Debug)]
pub(crate) struct SampleRing {
    base: *mut u8,
    len: usize,
    data_offset: usize,
    data_size: usize,
}

// SAFETY: the mapping is shared memory owned by this value; the kernel and
// the reading thread coordinate through `data_head` and `data_tail`, and one
// thread at a time reads it (the one the event's signals go to).
unsafe impl Send for SampleRing {}
// SAFETY: as above: reading takes `&self`, but only the event's own thread
// reads, from its signal handler.
unsafe impl Sync for SampleRing {}

/// A sample, as the kernel wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RingSample {
    pub(crate) ip: u64,
    pub(crate) tid: u32,
}

impl SampleRing {
    /// Maps `fd`'s ring buffer.
    pub(crate) fn map(fd: RawFd) -> io::Result<SampleRing> {
        let page = page_size();
        let len = page * (1 + DATA_PAGES);
        // SAFETY: a shared, read-write mapping of a perf event fd, as
        // perf_event_open(2) describes; nothing else is mapped here.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let base = base.cast::<u8>();
        // SAFETY: the header page is mapped and the kernel has filled it.
        let header = unsafe { &*base.cast::<perf_event_mmap_page>() };
        // Kernels before 4.1 leave these 0: the data follow the first page.
        let (data_offset, data_size) = match (header.data_offset, header.data_size) {
            (offset, size) if size > 0 => (offset as usize, size as usize),
            _ => (page, page * DATA_PAGES),
        };
        Ok(SampleRing {
            base,
            len,
            data_offset,
            data_size,
        })
    }

    fn word(&self, offset: usize) -> &AtomicU64 {
        // SAFETY: `offset` is that of a u64 field of the header page, which
        // is mapped and 8-aligned; the kernel updates it concurrently, so it
        // is only ever read and written atomically.
        unsafe { &*self.base.add(offset).cast::<AtomicU64>() }
    }

    fn head(&self) -> &AtomicU64 {
        self.word(std::mem::offset_of!(perf_event_mmap_page, data_head))
    }

    fn tail(&self) -> &AtomicU64 {
        self.word(std::mem::offset_of!(perf_event_mmap_page, data_tail))
    }

    /// The u64 at `position` of the data area, which may wrap.
    fn data_u64(&self, position: u64) -> u64 {
        let mut bytes = [0_u8; 8];
        for (i, byte) in bytes.iter_mut().enumerate() {
            let at = (position as usize + i) % self.data_size;
            // SAFETY: `at` is within the mapped data area; the kernel wrote
            // it before publishing `data_head` past it.
            *byte = unsafe { self.base.add(self.data_offset + at).read_volatile() };
        }
        u64::from_ne_bytes(bytes)
    }

    /// Throws away what the ring holds.
    pub(crate) fn skip_all(&self) {
        let head = self.head().load(Ordering::Acquire);
        self.tail().store(head, Ordering::Release);
    }

    /// Calls `each` with every sample in the ring, oldest first, and frees
    /// their room. Async-signal-safe.
    pub(crate) fn drain(&self, mut each: impl FnMut(RingSample)) {
        let head = self.head().load(Ordering::Acquire);
        let mut tail = self.tail().load(Ordering::Relaxed);
        while tail < head {
            // struct perf_event_header { u32 type; u16 misc; u16 size; }
            let header = self.data_u64(tail);
            let kind = header as u32;
            let size = header >> 48;
            if size < 8 || tail + size > head {
                // A torn record cannot be; give up on what is left.
                tail = head;
                break;
            }
            if kind == PERF_RECORD_SAMPLE && size >= 24 {
                let ids = self.data_u64(tail + 16);
                each(RingSample {
                    ip: self.data_u64(tail + 8),
                    tid: (ids >> 32) as u32,
                });
            }
            tail += size;
        }
        self.tail().store(tail, Ordering::Release);
    }
}

impl Drop for SampleRing {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`, unmapped once.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}
