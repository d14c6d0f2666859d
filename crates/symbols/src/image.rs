//! An ELF file as a map from file offsets to stated addresses.

use object::{Object, ObjectSegment};
use profiler_model::{BuildId, FileOffset, RelativeAddress, Svma};

/// A loadable segment: `file_size` bytes at `file_offset` appear at `svma`.
#[derive(Clone, Copy, Debug)]
struct Segment {
    file_offset: u64,
    file_size: u64,
    svma: u64,
}

/// A parsed ELF file with its loadable segments.
pub(crate) struct Image<'data> {
    pub object: object::File<'data>,
    segments: Vec<Segment>,
    /// The lowest loadable address, page-aligned: relative addresses count
    /// from here.
    base: u64,
}

impl<'data> Image<'data> {
    pub fn parse(data: &'data [u8]) -> object::Result<Image<'data>> {
        let object = object::File::parse(data)?;
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
            segments,
            base,
        })
    }

    pub fn build_id(&self) -> Option<BuildId> {
        self.object
            .build_id()
            .ok()
            .flatten()
            .map(|id| BuildId(id.to_vec()))
    }

    /// The stated address of the byte at `offset` in the file.
    pub fn svma(&self, offset: FileOffset) -> Option<Svma> {
        self.segments
            .iter()
            .find(|s| offset.0 >= s.file_offset && offset.0 - s.file_offset < s.file_size)
            .map(|s| Svma(s.svma + (offset.0 - s.file_offset)))
    }

    /// The file offset of the byte stated at `svma`, if a segment holds it.
    pub fn file_offset(&self, svma: Svma) -> Option<FileOffset> {
        self.segments
            .iter()
            .find(|s| svma.0 >= s.svma && svma.0 - s.svma < s.file_size)
            .map(|s| FileOffset(s.file_offset + (svma.0 - s.svma)))
    }

    pub fn relative(&self, svma: Svma) -> RelativeAddress {
        RelativeAddress(svma.0.wrapping_sub(self.base))
    }
}
