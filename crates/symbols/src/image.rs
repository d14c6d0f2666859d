//! An ELF file as a map from file offsets to stated addresses, read through
//! a cache: only the parts used (headers, symbol tables, the sections asked
//! for) are read from disk.

use std::fs::File;
use std::io::{self, Cursor, Read, Seek, SeekFrom};

use object::{Object, ObjectSegment, ReadCache};
use profiler_model::{BuildId, FileOffset, RelativeAddress, Svma, open_regular};

/// Where an image's bytes come from: a file, or memory (the vdso).
pub(crate) enum Source {
    File(File),
    Memory(Cursor<Vec<u8>>),
}

impl Read for Source {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Source::File(f) => f.read(buf),
            Source::Memory(m) => m.read(buf),
        }
    }
}

impl Seek for Source {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        match self {
            Source::File(f) => f.seek(pos),
            Source::Memory(m) => m.seek(pos),
        }
    }
}

pub(crate) type Bytes = ReadCache<Source>;
pub(crate) type ObjectFile<'data> = object::File<'data, &'data Bytes>;

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
    pub fn parse(bytes: &'data Bytes) -> object::Result<Image<'data>> {
        let object = object::File::parse(bytes)?;
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

    pub fn build_id(&self) -> Option<BuildId> {
        self.object
            .build_id()
            .ok()
            .flatten()
            .map(|id| BuildId(id.to_vec()))
    }
}

impl Layout {
    /// The stated address of the byte at `offset` in the file.
    pub fn svma(&self, offset: FileOffset) -> Option<Svma> {
        self.segments
            .iter()
            .find(|s| offset.0 >= s.file_offset && offset.0 - s.file_offset < s.file_size)
            .and_then(|s| s.svma.checked_add(offset.0 - s.file_offset))
            .map(Svma)
    }

    /// The file offset of the byte stated at `svma`, if a segment holds it.
    pub fn file_offset(&self, svma: Svma) -> Option<FileOffset> {
        self.segments
            .iter()
            .find(|s| svma.0 >= s.svma && svma.0 - s.svma < s.file_size)
            .and_then(|s| s.file_offset.checked_add(svma.0 - s.svma))
            .map(FileOffset)
    }

    /// Where the code stated at `start..end` lies in the file: the file
    /// offset of `start` and how many bytes from there one segment holds,
    /// `end - start` at most.
    pub fn file_range(&self, start: Svma, end: Svma) -> Option<(FileOffset, u64)> {
        self.segments
            .iter()
            .find(|s| start.0 >= s.svma && start.0 - s.svma < s.file_size)
            .and_then(|s| {
                let skipped = start.0 - s.svma;
                let len = (s.file_size - skipped).min(end.0.saturating_sub(start.0));
                Some((FileOffset(s.file_offset.checked_add(skipped)?), len))
            })
    }

    pub fn relative(&self, svma: Svma) -> RelativeAddress {
        RelativeAddress(svma.0.wrapping_sub(self.base))
    }
}

/// Opens `path` for reading through a cache.
pub(crate) fn open(path: &std::path::Path) -> io::Result<Bytes> {
    Ok(ReadCache::new(Source::File(open_regular(path)?)))
}

/// Bytes held in memory, read through the same cache type.
pub(crate) fn in_memory(data: Vec<u8>) -> Bytes {
    ReadCache::new(Source::Memory(Cursor::new(data)))
}
