//! An ELF file as a map from file offsets to stated addresses. The file is
//! mapped into memory, not read: only the pages used (headers, symbol
//! tables, the debug info of the units asked about) are ever loaded, and
//! uncompressed sections are borrowed in place.

use std::fs::File;
use std::io;
use std::ops::Deref;

use object::{Object, ObjectSegment};
use profiler_model::{BuildId, FileOffset, RelativeAddress, Svma, open_regular};

/// A module's bytes: a file mapped read-only, or memory (the vdso, and
/// debug files checked by a CRC of all their bytes).
pub(crate) enum Bytes {
    Mapped { map: memmap2::Mmap, file: File },
    Memory(Vec<u8>),
}

impl Deref for Bytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Mapped { map, .. } => map,
            Bytes::Memory(data) => data,
        }
    }
}

impl Bytes {
    /// Hands back the pages of a mapped file read so far, to keep a large
    /// module's memory to what is being read now.
    pub(crate) fn release_pages(&self) {
        if let Bytes::Mapped { map, .. } = self {
            release(map);
        }
    }

    /// Starts reading `part`, a slice of these bytes, from the file into the
    /// page cache where it is mapped, for positioned reads to come: without,
    /// each such read of a file not yet cached waits for its own page.
    /// Maps no page.
    pub(crate) fn prefetch(&self, part: &[u8]) {
        if let (Bytes::Mapped { map, .. }, Some(at)) = (self, self.offset_of(part)) {
            let _ = map.advise_range(memmap2::Advice::WillNeed, at, part.len());
        }
    }

    /// Copies into `buf` the bytes at `offset` in `part`, a slice of these
    /// bytes: from the file where they are mapped, which maps no page (a
    /// page faulted in maps its neighbours too, 64 kB in all); `None` past
    /// the end, or where `part` is not of these bytes.
    pub(crate) fn read_at(&self, part: &[u8], offset: usize, buf: &mut [u8]) -> Option<()> {
        let at = self.offset_of(part)?;
        let bytes = part.get(offset..offset.checked_add(buf.len())?)?;
        match self {
            Bytes::Mapped { file, .. } => {
                use std::os::unix::fs::FileExt;
                file.read_exact_at(buf, (at + offset) as u64).ok()
            }
            Bytes::Memory(_) => {
                buf.copy_from_slice(bytes);
                Some(())
            }
        }
    }

    /// The file mapped; `None` for bytes held in memory.
    pub(crate) fn file(&self) -> Option<&File> {
        match self {
            Bytes::Mapped { file, .. } => Some(file),
            Bytes::Memory(_) => None,
        }
    }

    /// Where `part` starts in these bytes, if it is a slice of them.
    fn offset_of(&self, part: &[u8]) -> Option<usize> {
        let at = (part.as_ptr() as usize).checked_sub(self.as_ptr() as usize)?;
        (at.checked_add(part.len())? <= self.len()).then_some(at)
    }
}

pub(crate) type ObjectFile<'data> = object::File<'data, &'data [u8]>;

/// A loadable segment: `file_size` bytes at `file_offset` appear at `svma`.
#[derive(Clone, Copy, Debug)]
struct Segment {
    file_offset: u64,
    file_size: u64,
    svma: u64,
}

/// How a module's file is laid out in memory: plain data, shareable
/// between threads.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    segments: Vec<Segment>,
    /// The lowest loadable address, page-aligned: relative addresses count
    /// from here.
    base: u64,
}

/// A parsed ELF file with its layout.
pub(crate) struct Image<'data> {
    pub object: ObjectFile<'data>,
    pub layout: Layout,
}

impl<'data> Image<'data> {
    pub(crate) fn parse(bytes: &'data Bytes) -> object::Result<Image<'data>> {
        let object = object::File::parse(&**bytes)?;
        let segments: Vec<Segment> = object
            .segments()
            .map(|s| {
                let (file_offset, file_size) = s.file_range();
                Segment {
                    file_offset,
                    file_size,
                    svma: s.address(),
                }
            })
            .collect();
        let base = segments.iter().map(|s| s.svma).min().unwrap_or(0) & !0xfff;
        Ok(Image {
            object,
            layout: Layout { segments, base },
        })
    }

    pub(crate) fn build_id(&self) -> Option<BuildId> {
        self.object
            .build_id()
            .ok()
            .flatten()
            .map(|id| BuildId(id.to_vec()))
    }
}

impl Layout {
    /// The stated address of the byte at `offset` in the file.
    pub(crate) fn svma(&self, offset: FileOffset) -> Option<Svma> {
        self.segments
            .iter()
            .find(|s| offset.0 >= s.file_offset && offset.0 - s.file_offset < s.file_size)
            .and_then(|s| s.svma.checked_add(offset.0 - s.file_offset))
            .map(Svma)
    }

    /// The file offset of the byte stated at `svma`, if a segment holds it.
    pub(crate) fn file_offset(&self, svma: Svma) -> Option<FileOffset> {
        self.segments
            .iter()
            .find(|s| svma.0 >= s.svma && svma.0 - s.svma < s.file_size)
            .and_then(|s| s.file_offset.checked_add(svma.0 - s.svma))
            .map(FileOffset)
    }

    /// Where the code stated at `start..end` lies in the file: the file
    /// offset of `start` and how many bytes from there one segment holds,
    /// `end - start` at most.
    pub(crate) fn file_range(&self, start: Svma, end: Svma) -> Option<(FileOffset, u64)> {
        self.segments
            .iter()
            .find(|s| start.0 >= s.svma && start.0 - s.svma < s.file_size)
            .and_then(|s| {
                let skipped = start.0 - s.svma;
                let len = (s.file_size - skipped).min(end.0.saturating_sub(start.0));
                Some((FileOffset(s.file_offset.checked_add(skipped)?), len))
            })
    }

    pub(crate) fn relative(&self, svma: Svma) -> RelativeAddress {
        RelativeAddress(svma.0.wrapping_sub(self.base))
    }
}

/// Maps the regular file at `path` read-only.
pub(crate) fn open(path: &std::path::Path) -> io::Result<Bytes> {
    let file = open_regular(path)?;
    let map = map(&file)?;
    Ok(Bytes::Mapped { map, file })
}

/// Bytes held in memory.
pub(crate) fn in_memory(data: Vec<u8>) -> Bytes {
    Bytes::Memory(data)
}

/// The symbols crate's one memory map.
#[allow(unsafe_code)]
fn map(file: &File) -> io::Result<memmap2::Mmap> {
    // SAFETY: the map is private and read-only, and `open_regular` let
    // through only a regular file, so no device or FIFO is mapped. What
    // the mapping cannot rule out is another process changing the file
    // while it is mapped: bytes rewritten in place are read as they are
    // now (parsing is bounds-checked throughout, so a changed ELF file is
    // at worst misread, as a damaged one would be), and a file truncated
    // underneath makes the pages past its new end fault with SIGBUS,
    // ending the process. Profilers and debuggers (perf, addr2line, gdb)
    // read binaries the same way and bear the same risk: binaries are
    // replaced by rename, not rewritten in place, by every installer and
    // linker in common use, which leaves this mapping on the old file.
    unsafe { memmap2::Mmap::map(file) }
}

/// Drops the map's pages from this process's memory (`MADV_DONTNEED`).
#[allow(unsafe_code)]
fn release(map: &memmap2::Mmap) {
    // SAFETY: the map is private and read-only, so no page of it was ever
    // written: a page dropped is read again from the file when next
    // touched, with the bytes it had, which borrowers of the map go on
    // seeing. Only a file changed in place underneath could make them
    // differ, the risk the mapping itself bears (see `map`). Failure
    // leaves the pages where they are, which is harmless.
    let _ = unsafe { map.unchecked_advise(memmap2::UncheckedAdvice::DontNeed) };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The resident pages of the mappings of `path` in this process, in KiB.
    fn resident_kib(path: &std::path::Path) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut ours = false;
        let mut total = 0;
        for line in smaps.lines() {
            if let Some(rss) = line.strip_prefix("Rss:") {
                if ours {
                    total += rss.trim().trim_end_matches(" kB").parse::<u64>().unwrap();
                }
            } else if line.split_whitespace().count() >= 5 && line.contains('-') {
                ours = line.ends_with(&*path.to_string_lossy());
            }
        }
        total
    }

    #[test]
    fn released_pages_leave_memory_and_read_back_the_same() {
        let path = std::env::temp_dir().join(format!("release-{}", std::process::id()));
        let data: Vec<u8> = (0..8u32 << 20).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let bytes = open(&path).unwrap();
        assert_eq!(*bytes, *data);
        assert!(
            resident_kib(&path) >= 4 << 10,
            "{} KiB",
            resident_kib(&path)
        );
        bytes.release_pages();
        assert!(resident_kib(&path) < 1 << 10, "{} KiB", resident_kib(&path));
        assert_eq!(*bytes, *data);
        std::fs::remove_file(&path).unwrap();
    }
}
