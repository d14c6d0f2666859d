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
    /// Chunks of records missing by their numbers, as `first..=last`,
    /// though every chunk read held its checksums.
    pub missing_chunks: Vec<(u64, u64)>,
    /// Chunks met again after their first copy, by number, with the
    /// samples of the copy, which were not counted again.
    pub repeated_chunks: Vec<(u64, u64)>,
    /// Chunks met after a later one, by number, with their samples.
    pub reordered_chunks: Vec<(u64, u64)>,
    /// The trailer counts other samples than the chunks hold.
    pub totals_differ: bool,
}

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let damaged = self.ends_early.is_some() || self.skipped_chunks > 0 || self.trailer_damaged;
        let order = self.order(damaged);
        if damaged {
            self.fmt_damage(f)?;
        }
        match (damaged, order) {
            (true, Some(order)) => write!(f, "; {order}"),
            (false, Some(order)) => write!(f, "{order}"),
            (_, None) => Ok(()),
        }
    }
}

impl Damage {
    /// What the chunks' numbers and the trailer's totals say, in words;
    /// the samples lost only when no `damaged` chunk tells them already.
    fn order(&self, damaged: bool) -> Option<String> {
        let mut parts = Vec::new();
        let lost = (self.samples_written.filter(|_| !damaged)).and_then(|written| {
            let lost = written.checked_sub(self.samples_read).filter(|&n| n > 0)?;
            Some(format!(
                ": {} of {} samples lost",
                grouped(lost),
                grouped(written)
            ))
        });
        if !self.missing_chunks.is_empty() {
            let numbers: Vec<String> = (self.missing_chunks.iter())
                .map(|&(first, last)| match first == last {
                    true => grouped(first),
                    false => format!("{} to {}", grouped(first), grouped(last)),
                })
                .collect();
            let one = self.missing_chunks == [(self.missing_chunks[0].0, self.missing_chunks[0].0)];
            let mut text = match one {
                true => format!("chunk {} of the records is missing", numbers[0]),
                false => format!("chunks {} of the records are missing", numbers.join(", ")),
            };
            if self.missing_chunks[0].0 == 1 {
                text.push_str(" (the first held the mappings: samples may be [unknown])");
            }
            text.push_str(lost.as_deref().unwrap_or(""));
            parts.push(text);
        }
        if !self.repeated_chunks.is_empty() {
            let (numbers, samples) = listed(&self.repeated_chunks);
            parts.push(match self.repeated_chunks.len() {
                1 => format!(
                    "chunk {numbers} appears twice: its copy's {samples} samples are not counted"
                ),
                _ => format!(
                    "chunks {numbers} appear twice: their copies' {samples} samples are not counted"
                ),
            });
        }
        if !self.reordered_chunks.is_empty() {
            let (numbers, samples) = listed(&self.reordered_chunks);
            parts.push(match self.reordered_chunks.len() {
                1 => format!("chunk {numbers} comes after a later one: its {samples} samples are read where it lies"),
                _ => format!("chunks {numbers} come after later ones: their {samples} samples are read where they lie"),
            });
        }
        if parts.is_empty() && self.totals_differ && !damaged {
            let written = self.samples_written.unwrap_or_default();
            let mut text = format!(
                "the trailer counts {} samples but the chunks hold {}",
                grouped(written),
                grouped(self.samples_read)
            );
            text.push_str(lost.as_deref().unwrap_or(": totals were recounted"));
            parts.push(text);
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    /// The damage the checksums and the end of the file tell.
    fn fmt_damage(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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

/// Chunk numbers (`3, 7`), and the sum of their samples, grouped.
fn listed(chunks: &[(u64, u64)]) -> (String, String) {
    let numbers: Vec<String> = chunks.iter().map(|&(n, _)| grouped(n)).collect();
    let samples = chunks.iter().map(|&(_, s)| s).fold(0, u64::saturating_add);
    (numbers.join(", "), grouped(samples))
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
    pub(crate) fn new(events: usize) -> Recount {
        Recount {
            stats: StatsCollector::new(events),
            modules: BTreeSet::new(),
            times: None,
        }
    }

    pub(crate) fn add_all(
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

    pub(crate) fn samples(&self) -> u64 {
        self.stats.snapshot().total().samples
    }

    /// `trailer`, as written, with its totals replaced by the recount; or,
    /// when it was lost, one made from the records alone.
    pub(crate) fn trailer(self, written: Option<Trailer>) -> Trailer {
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
        let order = Damage {
            samples_read: 60,
            samples_written: Some(100),
            missing_chunks: vec![(1, 1), (4, 5)],
            repeated_chunks: vec![(7, 20)],
            reordered_chunks: vec![(8, 12), (9, 3)],
            ..Damage::default()
        };
        assert_eq!(
            order.to_string(),
            "chunks 1, 4 to 5 of the records are missing (the first held the mappings: samples \
             may be [unknown]): 40 of 100 samples lost; chunk 7 appears twice: its copy's 20 \
             samples are not counted; chunks 8, 9 come after later ones: their 15 samples are \
             read where they lie"
        );
        let totals = Damage {
            samples_read: 4869,
            samples_written: Some(5266),
            totals_differ: true,
            ..Damage::default()
        };
        assert_eq!(
            totals.to_string(),
            "the trailer counts 5,266 samples but the chunks hold 4,869: 397 of 5,266 samples lost"
        );
        // With damage that tells the samples lost, the order does not again.
        let both = Damage {
            missing_chunks: vec![(3, 3)],
            ..flipped.clone()
        };
        assert!(
            both.to_string()
                .ends_with("2,000 of 50,000 samples lost; chunk 3 of the records is missing"),
            "{both}"
        );
        for damage in [
            cut,
            flipped,
            trailer,
            histograms,
            histogram_chunk,
            order,
            totals,
        ] {
            assert_eq!(damage.to_string().lines().count(), 1);
        }
    }
}
