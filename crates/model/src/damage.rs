//! What could not be read of a damaged recording, and the totals recounted
//! from what could.

use std::collections::BTreeSet;
use std::fmt;

use crate::error::RecordingError;
use crate::header::{ModuleEntry, Trailer};
use crate::record::Record;
use crate::stats::StatsCollector;

/// What a reader could not read of a recording. The views read only the
/// good chunks; this says what they are missing, for the user to be told
/// once (its `Display` is one line).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Damage {
    /// The file ends before its trailer (the profiler was killed, the disk
    /// filled up, the file was cut short): how many bytes at its end are
    /// not a whole chunk.
    pub ends_early: Option<u64>,
    /// Chunks that failed their checksums and were skipped.
    pub skipped_chunks: u64,
    /// Bytes of those chunks.
    pub skipped_bytes: u64,
    /// The trailer was written but is damaged; its totals were recounted.
    pub trailer_damaged: bool,
    /// Samples in the chunks that were read.
    pub samples_read: u64,
    /// Samples the trailer says were written, when it could be read.
    pub samples_written: Option<u64>,
    /// A histogram-mode recording: its buckets are written when recording
    /// ends, so a recording that ends early has none.
    pub histogram: bool,
}

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let skipped = match self.skipped_chunks {
            0 => String::new(),
            1 => format!(
                "1 damaged chunk ({} bytes) failed its checksum and was skipped",
                grouped(self.skipped_bytes)
            ),
            n => format!(
                "{n} damaged chunks ({} bytes) failed their checksums and were skipped",
                grouped(self.skipped_bytes)
            ),
        };
        let read = grouped(self.samples_read);
        if self.ends_early.is_some() {
            if self.histogram {
                write!(
                    f,
                    "recording ends early: its histograms, written when recording ends, are lost"
                )?;
            } else {
                write!(
                    f,
                    "recording ends early: {read} samples read, the rest is lost"
                )?;
            }
            if !skipped.is_empty() {
                write!(f, "; before that, {skipped}")?;
            }
            return Ok(());
        }
        if !skipped.is_empty() {
            write!(f, "{skipped}")?;
            match self.samples_written {
                _ if self.histogram => write!(f, ": the histograms in it are lost")?,
                Some(written) => write!(
                    f,
                    ": {} of {} samples lost",
                    grouped(written.saturating_sub(self.samples_read)),
                    grouped(written)
                )?,
                None => write!(f, ": {read} samples read")?,
            }
            if self.trailer_damaged {
                write!(f, "; the trailer is damaged too, totals were recounted")?;
            }
            return Ok(());
        }
        write!(
            f,
            "the trailer is damaged: totals were recounted from the records ({read} samples), \
             how the command ended is unknown"
        )
    }
}

/// `7514` as `7,514`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() * 4 / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// What the good chunks hold, counted as the writer counts when it writes
/// the trailer.
pub(crate) struct Recount {
    stats: StatsCollector,
    modules: BTreeSet<ModuleEntry>,
    times: Option<(u64, u64)>,
}

impl Recount {
    pub fn new(events: usize) -> Recount {
        Recount {
            stats: StatsCollector::new(events),
            modules: BTreeSet::new(),
            times: None,
        }
    }

    pub fn add_all(
        &mut self,
        records: impl Iterator<Item = Result<Record, RecordingError>>,
    ) -> Result<(), RecordingError> {
        for record in records {
            self.add(&record?);
        }
        Ok(())
    }

    fn add(&mut self, record: &Record) {
        self.stats.add(record);
        let (time, module) = match record {
            Record::Sample(s) => (Some(s.time), None),
            Record::Mmap(m) => (Some(m.time), Some((&m.path, &m.build_id))),
            Record::Comm(c) => (Some(c.time), None),
            Record::Fork(t) | Record::Exit(t) => (Some(t.time), None),
            Record::Lost(l) => (Some(l.time), None),
            Record::Throttle(t) => (Some(t.time), None),
            Record::Histogram(h) => (None, Some((&h.path, &h.build_id))),
            Record::Switch(w) => (Some(w.time), None),
        };
        if let Some((path, build_id)) = module {
            self.modules.insert(ModuleEntry {
                path: path.clone(),
                build_id: build_id.clone(),
            });
        }
        if let Some(time) = time.filter(|&t| t > 0) {
            let (first, last) = self.times.get_or_insert((time, time));
            *first = (*first).min(time);
            *last = (*last).max(time);
        }
    }

    pub fn samples(&self) -> u64 {
        self.stats.snapshot().total().samples
    }

    /// `trailer`, as written, with its totals replaced by the recount; or,
    /// when it was lost, one made from the records alone.
    pub fn trailer(self, written: Option<Trailer>) -> Trailer {
        let stats = self.stats.snapshot();
        match written {
            Some(trailer) => Trailer { stats, ..trailer },
            None => Trailer {
                stats,
                modules: self.modules.into_iter().collect(),
                duration_ns: self.times.map_or(0, |(first, last)| last - first),
                outcome: "has no recorded end: the recording ends early".into(),
                ..Trailer::default()
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_grouped_in_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(7514), "7,514");
        assert_eq!(grouped(1_234_567), "1,234,567");
    }

    #[test]
    fn each_kind_of_damage_is_one_line() {
        let cut = Damage {
            ends_early: Some(100),
            samples_read: 7514,
            ..Damage::default()
        };
        assert_eq!(
            cut.to_string(),
            "recording ends early: 7,514 samples read, the rest is lost"
        );
        let flipped = Damage {
            skipped_chunks: 1,
            skipped_bytes: 65556,
            samples_read: 48_000,
            samples_written: Some(50_000),
            ..Damage::default()
        };
        assert_eq!(
            flipped.to_string(),
            "1 damaged chunk (65,556 bytes) failed its checksum and was skipped: \
             2,000 of 50,000 samples lost"
        );
        let trailer = Damage {
            trailer_damaged: true,
            samples_read: 3,
            ..Damage::default()
        };
        assert!(trailer.to_string().starts_with("the trailer is damaged"));
        let histograms = Damage {
            ends_early: Some(0),
            histogram: true,
            ..Damage::default()
        };
        assert_eq!(
            histograms.to_string(),
            "recording ends early: its histograms, written when recording ends, are lost"
        );
        let histogram_chunk = Damage {
            skipped_chunks: 1,
            skipped_bytes: 100,
            samples_written: Some(9),
            histogram: true,
            ..Damage::default()
        };
        assert!(
            histogram_chunk
                .to_string()
                .ends_with("was skipped: the histograms in it are lost")
        );
        for damage in [cut, flipped, trailer, histograms, histogram_chunk] {
            assert_eq!(damage.to_string().lines().count(), 1);
        }
    }
}
