//! An archive in a recording file: written after the last chunk of
//! records, one checksummed chunk per module (and one for the kernel's
//! names), before the trailer, which lists where they start.
//!
//! Archiving copies the recording's bytes up to its trailer as they are,
//! so its chunks, and what a reader makes of them, do not change. A reader
//! that does not know archives steps over their chunks as over any chunk of
//! a kind it does not know; one whose checksum fails is skipped, as any
//! damaged chunk, and its module is named from the files on disk again.

use std::io::{self, Write};

use crate::archive::Archive;
use crate::archive_codec::{self, ArchivePart};
use crate::chunk::{CHUNK_HEADER_LEN, ChunkHeader, ChunkKind};
use crate::error::RecordingError;
use crate::reader::Recording;
use crate::writer::ending;

/// Bytes copied at a time.
const COPY_LEN: u64 = 1 << 20;

/// A recording's archive, as read back.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadArchive {
    pub archive: Archive,
    /// Archive chunks that failed their checksums or could not be
    /// decoded, and were skipped.
    pub skipped: usize,
}

/// Why an archived recording was not written.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error(transparent)]
    Recording(#[from] RecordingError),
    #[error(transparent)]
    Write(io::Error),
}

/// Writes `recording` to `out` with `archive` added. The recording must be
/// a profiler recording read whole (a damaged one would lose, in the copy,
/// the record of what it lost) and not archived yet.
pub fn write_archived(
    recording: &Recording,
    archive: &Archive,
    out: &mut impl Write,
) -> Result<(), ArchiveError> {
    let refuse = |what: &str| RecordingError::Unreadable {
        path: recording.path().to_owned(),
        what: what.to_owned(),
    };
    let end = recording
        .chunks_end()
        .ok_or_else(|| refuse("only profiler recordings are archived"))?;
    if recording.damage.is_some() {
        return Err(refuse("it is damaged, and archiving would hide what it lost").into());
    }
    if !recording.trailer.archive.is_empty() {
        return Err(refuse("it is archived already").into());
    }
    let write_error = ArchiveError::Write;
    let mut buf = vec![0; COPY_LEN as usize];
    let mut at = 0;
    while at < end {
        let len = (end - at).min(COPY_LEN) as usize;
        recording.read_at(&mut buf[..len], at)?;
        out.write_all(&buf[..len]).map_err(write_error)?;
        at += len as u64;
    }
    let mut parts: Vec<Vec<u8>> = Vec::new();
    if !archive.kernel.is_empty() {
        parts.push(archive_codec::encode_kernel(&archive.kernel));
    }
    parts.extend(archive.modules.iter().map(archive_codec::encode_module));
    let mut trailer = recording.trailer.clone();
    for payload in parts {
        let header = ChunkHeader::encode(ChunkKind::Archive, 0, &payload);
        out.write_all(&header).map_err(write_error)?;
        out.write_all(&payload).map_err(write_error)?;
        trailer.archive.push(at);
        at += (header.len() + payload.len()) as u64;
    }
    let ending = ending(&trailer, at).map_err(write_error)?;
    out.write_all(&ending).map_err(write_error)?;
    Ok(())
}

/// The archive of `recording`, if it has one: empty otherwise.
pub fn read_archive(recording: &Recording) -> Result<ReadArchive, RecordingError> {
    let mut read = ReadArchive::default();
    for &offset in &recording.trailer.archive {
        match read_part(recording, offset)? {
            Some(ArchivePart::Module(module)) => read.archive.modules.push(module),
            Some(ArchivePart::Kernel(names)) => read.archive.kernel.extend(names),
            None => read.skipped += 1,
        }
    }
    read.archive.kernel.sort();
    read.archive.kernel.dedup_by_key(|(address, _)| *address);
    Ok(read)
}

/// The archive chunk at `offset`; `None` if it is not a whole, good one.
fn read_part(recording: &Recording, offset: u64) -> Result<Option<ArchivePart>, RecordingError> {
    let end = recording.chunks_end().unwrap_or(0);
    let mut bytes = [0; CHUNK_HEADER_LEN];
    if offset
        .checked_add(CHUNK_HEADER_LEN as u64)
        .is_none_or(|e| e > end)
    {
        return Ok(None);
    }
    recording.read_at(&mut bytes, offset)?;
    let Some(header) = ChunkHeader::decode(&bytes) else {
        return Ok(None);
    };
    if header.kind != ChunkKind::Archive || offset + header.total_len() > end {
        return Ok(None);
    }
    let mut payload = vec![0; header.len as usize];
    recording.read_at(&mut payload, offset + CHUNK_HEADER_LEN as u64)?;
    if !header.verifies(&payload) {
        return Ok(None);
    }
    Ok(archive_codec::decode(&payload).ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address::{Avma, FileOffset};
    use crate::archive::ModuleArchive;
    use crate::header::{HostInfo, RecordingHeader, Trailer};
    use crate::record::{CpuMode, Mmap, Record, Sample};
    use crate::writer::{RecordSink, RecordingWriter};

    fn recording_file(name: &str) -> std::path::PathBuf {
        let header = RecordingHeader {
            events: vec![],
            command: vec!["./app".into()],
            program: None,
            user: None,
            histogram: None,
            call_graph: None,
            host: HostInfo::default(),
            job: None,
            start_unix_ns: 0,
            profiler_version: "test".into(),
        };
        let mut writer = RecordingWriter::new(Vec::new(), &header).unwrap();
        writer
            .push(&Record::Mmap(Mmap {
                time: 1,
                pid: 1,
                tid: 1,
                start: Avma(0x1000),
                len: 0x1000,
                offset: FileOffset(0),
                path: "/bin/app".into(),
                build_id: None,
            }))
            .unwrap();
        for i in 0..100 {
            writer
                .push(&Record::Sample(Sample {
                    time: i + 2,
                    pid: 1,
                    tid: 1,
                    cpu: 0,
                    event: 0,
                    mode: CpuMode::User,
                    ip: Avma(0x1000 + i),
                    period: 1,
                    callchain: Vec::new(),
                    user_stack: None,
                    read: Vec::new(),
                }))
                .unwrap();
        }
        let bytes = writer.finish(Trailer::default()).unwrap();
        let path = std::env::temp_dir().join(format!("archive-{name}-{}.data", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        path
    }

    fn archive() -> Archive {
        let module = |path: &str| ModuleArchive {
            path: path.into(),
            ..archive_codec::tests::module()
        };
        Archive {
            modules: vec![module("/bin/app"), module("/lib/libc.so.6")],
            kernel: vec![(Avma(0xffff_ffff_8100_0000), "do_syscall_64".into())],
        }
    }

    fn records(recording: &Recording) -> Vec<Record> {
        recording.records().unwrap().map(Result::unwrap).collect()
    }

    /// The archived copy, and where its archive chunks start.
    fn archived(name: &str) -> (std::path::PathBuf, Vec<u64>) {
        let path = recording_file(name);
        let recording = Recording::open(&path).unwrap();
        let mut out = Vec::new();
        write_archived(&recording, &archive(), &mut out).unwrap();
        let archived = path.with_extension("archived");
        std::fs::write(&archived, out).unwrap();
        let offsets = Recording::open(&archived).unwrap().trailer.archive;
        (archived, offsets)
    }

    #[test]
    fn an_archived_recording_reads_as_before_with_its_archive() {
        let path = recording_file("plain");
        let before = Recording::open(&path).unwrap();
        assert_eq!(read_archive(&before).unwrap(), ReadArchive::default());
        let (archived, offsets) = archived("whole");
        let after = Recording::open(&archived).unwrap();
        assert_eq!(after.damage, None);
        assert_eq!(offsets.len(), 3);
        assert_eq!(records(&after), records(&before));
        assert_eq!(after.trailer.stats, before.trailer.stats);
        let read = read_archive(&after).unwrap();
        assert_eq!((read.archive, read.skipped), (archive(), 0));

        let mut out = Vec::new();
        let error = write_archived(&after, &archive(), &mut out).unwrap_err();
        assert!(error.to_string().contains("archived already"), "{error}");
    }

    #[test]
    fn a_damaged_archive_chunk_is_skipped_alone() {
        let (path, offsets) = archived("damaged");
        let mut bytes = std::fs::read(&path).unwrap();
        // Within the payload of the first module's chunk.
        bytes[offsets[1] as usize + CHUNK_HEADER_LEN + 3] ^= 0x40;
        std::fs::write(&path, &bytes).unwrap();
        let recording = Recording::open(&path).unwrap();
        let damage = recording.damage.clone().unwrap();
        assert_eq!(damage.skipped_chunks, 1);
        assert!(
            damage.to_string().contains("0 of 100 samples lost"),
            "{damage}"
        );
        assert_eq!(records(&recording).len(), 101);
        let read = read_archive(&recording).unwrap();
        assert_eq!(read.skipped, 1);
        assert_eq!(read.archive.modules.len(), 1);
        assert_eq!(read.archive.modules[0].path, "/lib/libc.so.6");
        assert_eq!(read.archive.kernel.len(), 1);
    }
}
