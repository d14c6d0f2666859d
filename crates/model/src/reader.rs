//! Reading a recording: validation of its frame, then the records, streamed.

use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::codec::{self, FRAME_HEADER_LEN};
use crate::error::RecordingError;
use crate::header::{RecordingHeader, Trailer};
use crate::layout::{END_MAGIC, FOOTER_LEN, FORMAT_VERSION, MAGIC, MAX_METADATA_LEN, PREAMBLE_LEN};
use crate::record::Record;

/// An opened, validated recording. Records are read on demand, as many times
/// as needed, with [`Recording::records`].
#[derive(Debug)]
pub struct Recording {
    path: PathBuf,
    pub header: RecordingHeader,
    pub trailer: Trailer,
    records_start: u64,
    records_end: u64,
}

impl Recording {
    /// Opens `path` and checks its signature, version, end marker, header
    /// and trailer.
    pub fn open(path: &Path) -> Result<Recording, RecordingError> {
        let open_error = |error| RecordingError::Open {
            path: path.to_owned(),
            error,
        };
        let mut file = File::open(path).map_err(open_error)?;
        let metadata = file.metadata().map_err(open_error)?;
        if metadata.is_dir() {
            return Err(open_error(io::Error::from(io::ErrorKind::IsADirectory)));
        }
        let size = metadata.len();
        let mut frame = Frame {
            path,
            file: &mut file,
        };

        let preamble = frame.read_at(0, PREAMBLE_LEN.min(size) as usize)?;
        if preamble.len() < 8 || &preamble[..8] != MAGIC {
            return Err(RecordingError::NotARecording {
                path: path.to_owned(),
            });
        }
        if preamble.len() < PREAMBLE_LEN as usize {
            return Err(RecordingError::Truncated {
                path: path.to_owned(),
            });
        }
        let version = u32::from_le_bytes(le(&preamble[8..12]));
        if version != FORMAT_VERSION {
            return Err(RecordingError::Version {
                path: path.to_owned(),
                found: version,
                supported: FORMAT_VERSION,
            });
        }
        let header_len = u64::from(u32::from_le_bytes(le(&preamble[12..16])));
        let records_start = PREAMBLE_LEN + header_len;
        if size < records_start + FOOTER_LEN {
            return Err(RecordingError::Truncated {
                path: path.to_owned(),
            });
        }
        let footer = frame.read_at(size - FOOTER_LEN, FOOTER_LEN as usize)?;
        if &footer[16..24] != END_MAGIC {
            return Err(RecordingError::Truncated {
                path: path.to_owned(),
            });
        }
        let trailer_start = u64::from_le_bytes(le(&footer[0..8]));
        let trailer_len = u64::from_le_bytes(le(&footer[8..16]));
        if trailer_start < records_start
            || trailer_len > MAX_METADATA_LEN
            || trailer_start.checked_add(trailer_len) != Some(size - FOOTER_LEN)
        {
            return Err(frame.corrupt(size - FOOTER_LEN, "the end marker points outside the file"));
        }
        let header = frame.json(PREAMBLE_LEN, header_len, "header")?;
        let trailer = frame.json(trailer_start, trailer_len, "trailer")?;
        Ok(Recording {
            path: path.to_owned(),
            header,
            trailer,
            records_start,
            records_end: trailer_start,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Iterates over the records in file order (not time order).
    pub fn records(&self) -> Result<Records, RecordingError> {
        let mut file = File::open(&self.path).map_err(|error| RecordingError::Open {
            path: self.path.clone(),
            error,
        })?;
        file.seek(SeekFrom::Start(self.records_start))
            .map_err(|e| self.read_error(e))?;
        Ok(Records {
            path: self.path.clone(),
            reader: BufReader::with_capacity(256 << 10, file),
            position: self.records_start,
            end: self.records_end,
            payload: Vec::new(),
        })
    }

    fn read_error(&self, error: io::Error) -> RecordingError {
        RecordingError::Read {
            path: self.path.clone(),
            error,
        }
    }
}

/// The records of a recording, in file order.
pub struct Records {
    path: PathBuf,
    reader: BufReader<File>,
    position: u64,
    end: u64,
    payload: Vec<u8>,
}

impl Iterator for Records {
    type Item = Result<Record, RecordingError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.position >= self.end {
                return None;
            }
            match self.next_frame() {
                Ok(Some(record)) => return Some(Ok(record)),
                Ok(None) => continue,
                Err(e) => {
                    self.position = self.end;
                    return Some(Err(e));
                }
            }
        }
    }
}

impl Records {
    fn next_frame(&mut self) -> Result<Option<Record>, RecordingError> {
        let start = self.position;
        let corrupt = |what: &str| RecordingError::Corrupt {
            path: self.path.clone(),
            offset: start,
            what: what.to_owned(),
        };
        if self.end - start < FRAME_HEADER_LEN as u64 {
            return Err(corrupt("a record frame runs into the trailer"));
        }
        let mut frame = [0; FRAME_HEADER_LEN];
        self.reader
            .read_exact(&mut frame)
            .map_err(|e| self.read_error(e))?;
        let (tag, len) = codec::frame_header(frame);
        let next = start + FRAME_HEADER_LEN as u64 + u64::from(len);
        if next > self.end {
            return Err(corrupt("a record runs into the trailer"));
        }
        self.payload.resize(len as usize, 0);
        self.reader
            .read_exact(&mut self.payload)
            .map_err(|e| self.read_error(e))?;
        self.position = next;
        codec::decode(tag, &self.payload).map_err(corrupt)
    }

    fn read_error(&self, error: io::Error) -> RecordingError {
        RecordingError::Read {
            path: self.path.clone(),
            error,
        }
    }
}

/// Positioned reads over the file being validated.
struct Frame<'a> {
    path: &'a Path,
    file: &'a mut File,
}

impl Frame<'_> {
    fn read_at(&mut self, offset: u64, len: usize) -> Result<Vec<u8>, RecordingError> {
        let mut buf = vec![0; len];
        self.file
            .seek(SeekFrom::Start(offset))
            .and_then(|_| self.file.read_exact(&mut buf))
            .map_err(|error| RecordingError::Read {
                path: self.path.to_owned(),
                error,
            })?;
        Ok(buf)
    }

    fn json<T: serde::de::DeserializeOwned>(
        &mut self,
        offset: u64,
        len: u64,
        what: &str,
    ) -> Result<T, RecordingError> {
        if len > MAX_METADATA_LEN {
            return Err(self.corrupt(offset, &format!("the {what} claims {len} bytes")));
        }
        let bytes = self.read_at(offset, len as usize)?;
        serde_json::from_slice(&bytes)
            .map_err(|e| self.corrupt(offset, &format!("unreadable {what}: {e}")))
    }

    fn corrupt(&self, offset: u64, what: &str) -> RecordingError {
        RecordingError::Corrupt {
            path: self.path.to_owned(),
            offset,
            what: what.to_owned(),
        }
    }
}

fn le<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut out = [0; N];
    out.copy_from_slice(&bytes[..N]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address::Avma;
    use crate::header::HostInfo;
    use crate::record::{CpuMode, Sample};
    use crate::writer::{RecordSink, RecordingWriter};

    fn header() -> RecordingHeader {
        RecordingHeader {
            events: vec![],
            command: vec!["./app".into(), "arg".into()],
            program: None,
            histogram: None,
            call_graph: None,
            host: HostInfo::default(),
            start_unix_ns: 42,
            profiler_version: "test".into(),
        }
    }

    fn sample(i: u64) -> Record {
        Record::Sample(Sample {
            time: i,
            pid: 1,
            tid: 1,
            cpu: 0,
            event: 0,
            mode: CpuMode::User,
            ip: Avma(0x1000 + i),
            period: 10,
            callchain: Vec::new(),
            user_stack: None,
            read: Vec::new(),
        })
    }

    fn write_recording(name: &str, count: u64) -> PathBuf {
        let path = std::env::temp_dir().join(format!("reader-{name}-{}.data", std::process::id()));
        let mut writer = RecordingWriter::new(Vec::new(), &header()).unwrap();
        for i in 0..count {
            writer.push(&sample(i)).unwrap();
        }
        let trailer = Trailer {
            outcome: "exited with status 0".into(),
            ..Trailer::default()
        };
        std::fs::write(&path, writer.finish(trailer).unwrap()).unwrap();
        path
    }

    #[test]
    fn a_written_recording_reads_back_whole_and_twice() {
        let path = write_recording("whole", 10_000);
        let recording = Recording::open(&path).unwrap();
        assert_eq!(recording.header, header());
        assert_eq!(recording.trailer.stats.events[0].samples, 10_000);
        assert_eq!(recording.trailer.stats.events[0].period, 100_000);
        assert_eq!(recording.trailer.outcome, "exited with status 0");
        for _ in 0..2 {
            let records: Vec<Record> = recording.records().unwrap().map(Result::unwrap).collect();
            assert_eq!(records.len(), 10_000);
            assert_eq!(records[9_999], sample(9_999));
        }
    }

    #[test]
    fn every_cut_of_a_recording_is_refused() {
        let path = write_recording("cut", 3);
        let bytes = std::fs::read(&path).unwrap();
        for len in 0..bytes.len() {
            std::fs::write(&path, &bytes[..len]).unwrap();
            let error = Recording::open(&path).unwrap_err();
            assert!(
                matches!(
                    error,
                    RecordingError::Truncated { .. } | RecordingError::NotARecording { .. }
                ),
                "cut at {len}: {error}"
            );
        }
    }

    #[test]
    fn foreign_files_and_other_versions_are_named_as_such() {
        let path = write_recording("foreign", 1);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[8] = 99;
        std::fs::write(&path, &bytes).unwrap();
        let error = Recording::open(&path).unwrap_err();
        assert!(
            matches!(error, RecordingError::Version { found: 99, .. }),
            "{error}"
        );

        std::fs::write(
            &path,
            b"\x7fELF not a recording at all, but long enough to look",
        )
        .unwrap();
        let error = Recording::open(&path).unwrap_err();
        assert!(
            matches!(error, RecordingError::NotARecording { .. }),
            "{error}"
        );
        assert!(error.to_string().contains("profiler record"), "{error}");

        let missing = path.with_extension("missing");
        let error = Recording::open(&missing).unwrap_err();
        assert!(error.to_string().contains("No such file"), "{error}");
        assert!(error.to_string().contains("-i FILE"), "{error}");
    }

    #[test]
    fn a_damaged_record_stream_is_reported_with_its_offset() {
        let path = write_recording("damaged", 2);
        let mut bytes = std::fs::read(&path).unwrap();
        let records_start = 16 + u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
        // Claim a payload far longer than the stream.
        bytes[records_start + 1..records_start + 5].copy_from_slice(&u32::MAX.to_le_bytes());
        std::fs::write(&path, &bytes).unwrap();
        let recording = Recording::open(&path).unwrap();
        let results: Vec<_> = recording.records().unwrap().collect();
        assert_eq!(results.len(), 1);
        let error = results[0].as_ref().unwrap_err();
        assert!(
            error.to_string().contains(&format!("byte {records_start}")),
            "{error}"
        );
    }
}
