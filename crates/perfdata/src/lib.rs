//! Reading perf's recordings (`perf.data`) as profiler recordings, so that
//! every view works on the files users already have: the report opens the
//! file here instead of with `Recording::open`, and reads on as usual.
//!
//! It reads with linux-perf-data (samply's reader), after checking
//! everything in the file that crate would trust: the header and its
//! sections, the event descriptions, the records' sizes (see layout.rs and
//! data_check.rs). perf's records become the profiler's nearly one for one:
//! samples with their call chains and stack copies, executable mappings
//! with their build-ids, exec, fork and exit, lost and throttled samples.
//! What the profiler has no use for (AUX area traces, BPF symbols, branch
//! stacks) is skipped and said so in [`PerfData::notes`].
//!
//! ```no_run
//! let perf_data = profiler_perfdata::open("perf.data".as_ref())?;
//! for note in &perf_data.notes {
//!     eprintln!("perf.data: {note}");
//! }
//! let samples = perf_data.recording.trailer.stats.total().samples;
//! # Ok::<(), profiler_perfdata::PerfDataError>(())
//! ```

mod data_check;
mod error;
mod header;
mod layout;
mod notes;
mod program;
mod records;
mod source;
#[cfg(test)]
mod tests;

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use profiler_model::{Recording, count_records, open_regular};

pub use error::{PerfDataError, Refusal};

use crate::data_check::DataSummary;
use crate::layout::{Layout, Reader, feature};
use crate::program::ProgramFinder;
use crate::records::{FileFacts, fixed_period};
use crate::source::PerfDataSource;

/// A perf.data file, read as a recording.
#[derive(Debug)]
pub struct PerfData {
    pub recording: Recording,
    /// What of the file the views will not show (AUX traces, branch
    /// stacks...), one line each.
    pub notes: Vec<String>,
}

/// Whether `start`, a file's first bytes, are perf.data's signature (of
/// either byte order, or of perf's first format).
pub fn has_signature(start: &[u8]) -> bool {
    [b"PERFILE2", b"2ELIFREP", b"PERFFILE"]
        .iter()
        .any(|magic| start.starts_with(*magic))
}

/// Whether `path` is a perf.data file, or a directory of them as `perf
/// record --threads` writes.
pub fn is_perf_data(path: &Path) -> bool {
    let path = match path.is_dir() {
        true => path.join("data"),
        false => path.to_owned(),
    };
    let mut start = [0; 8];
    open_regular(&path).is_ok_and(|file| file.read_exact_at(&mut start, 0).is_ok())
        && has_signature(&start)
}

/// Opens the perf.data file at `path`.
pub fn open(path: &Path) -> Result<PerfData, PerfDataError> {
    let refused = |refusal| PerfDataError::Refused {
        path: path.to_owned(),
        refusal,
    };
    if path.is_dir() {
        return Err(refused(Refusal::Directory));
    }
    let file = open_regular(path).map_err(|e| refused(Refusal::Read(e)))?;
    from_file(file, path)
}

/// Reads the perf.data file `file`, named `path` in messages.
pub fn from_file(file: File, path: &Path) -> Result<PerfData, PerfDataError> {
    let refused = |refusal| PerfDataError::Refused {
        path: path.to_owned(),
        refusal,
    };
    let metadata = file.metadata().map_err(|e| refused(Refusal::Read(e)))?;
    let size = metadata.len();
    let file = Arc::new(file);
    let (layout, summary) = check(&file, size).map_err(refused)?;
    let reader = Reader {
        file: &file,
        size,
        big_endian: layout.big_endian,
    };
    let perf_file = source::read_header(&file).map_err(|e| refused(Refusal::Corrupt(e)))?;
    let attributes = perf_file.event_attributes();
    if attributes.is_empty() {
        return Err(refused(Refusal::NoEvents));
    }
    let facts = FileFacts {
        build_ids: perf_file.build_ids().unwrap_or_default(),
        periods: (attributes.iter())
            .map(|a| fixed_period(a.attr.sampling_policy))
            .collect(),
        x86_64: perf_file.arch().ok().flatten() == Some("x86_64"),
    };
    let mut header = header::recording_header(&perf_file, &layout, &reader);
    let source = PerfDataSource {
        path: path.to_owned(),
        file: Arc::clone(&file),
        stamp: (size, metadata.modified().ok()),
        facts: Arc::new(facts),
    };
    let mut records = source.open_records()?;
    let mut program = ProgramFinder::default();
    let counted = (records.by_ref()).inspect(|record| {
        if let Ok(record) = record {
            program.see(record);
        }
    });
    let mut trailer = count_records(header.events.len(), counted)?;
    header.program = program.program;
    trailer.outcome = "was recorded by perf, which does not keep how it ended".into();
    // perf keeps no wall-clock time: the file was last written as
    // recording ended.
    if let Ok(end) = metadata.modified()
        && let Ok(since_epoch) = end.duration_since(UNIX_EPOCH)
    {
        let start = since_epoch.saturating_sub(Duration::from_nanos(trailer.duration_ns));
        header.start_unix_ns = start.as_nanos() as u64;
    }
    let notes = notes::notes(
        &perf_file,
        &layout,
        &reader,
        &summary,
        &records.skipped,
        &header,
    );
    Ok(PerfData {
        recording: Recording::from_source(path, header, trailer, Box::new(source)),
        notes,
    })
}

/// Everything in the file that linux-perf-data would trust, checked.
fn check(file: &File, size: u64) -> Result<(Layout, DataSummary), Refusal> {
    let layout = layout::check(file, size)?;
    if layout.has(feature::STAT) {
        return Err(Refusal::Stat);
    }
    if layout.has(feature::DIR_FORMAT) {
        return Err(Refusal::Directory);
    }
    let reader = Reader {
        file,
        size,
        big_endian: layout.big_endian,
    };
    let summary = data_check::check_records(&reader, layout.data, data_check::ROUND_BUDGET)?;
    Ok((layout, summary))
}
