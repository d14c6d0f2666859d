//! Reading a recording's samples the way every view of them needs: the
//! side-band records first (mappings, exec, fork, in any order in the file)
//! into the process model, then the samples, streamed, each resolved
//! against the model by process, address and time.

use crate::error::RecordingError;
use crate::process::{ProcessModel, ProcessModelBuilder};
use crate::reader::{RecordStream, Recording};
use crate::record::{Record, Sample};

/// The samples of a recording, in file order.
pub struct Samples {
    records: RecordStream,
}

impl Iterator for Samples {
    type Item = Result<Sample, RecordingError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match self.records.next()? {
                Ok(Record::Sample(sample)) => return Some(Ok(sample)),
                Ok(_) => {}
                Err(error) => return Some(Err(error)),
            }
        }
    }
}

impl Samples {
    /// The next sample, decoded into `sample`: where a recording's samples
    /// are only looked at one at a time, one sample's memory serves all.
    pub fn next_into(&mut self, sample: &mut Sample) -> Option<Result<(), RecordingError>> {
        match &mut self.records {
            RecordStream::Chunks(records) => records.next_sample(sample),
            RecordStream::Source(_) => Some(self.next()?.map(|next| *sample = next)),
        }
    }
}

impl Recording {
    /// The process model of the whole recording, and its samples to read
    /// against it: two streaming passes over the records, the second as
    /// the caller iterates. The first pass decodes no samples.
    pub fn replay(&self) -> Result<(ProcessModel, Samples), RecordingError> {
        let mut builder = ProcessModelBuilder::new();
        for record in self.side_band_records()? {
            builder.add(&record?);
        }
        let samples = Samples {
            records: self.records()?,
        };
        Ok((builder.build(), samples))
    }
}

impl Recording {
    /// The samples of a recording in up to `parts` stretches, in file
    /// order, to be read side by side (see [`Recording::records_in_parts`]);
    /// `None` for other formats.
    pub fn samples_in_parts(&self, parts: usize) -> Result<Option<Vec<Samples>>, RecordingError> {
        Ok(self.records_in_parts(parts)?.map(|parts| {
            (parts.into_iter())
                .map(|records| Samples {
                    records: RecordStream::Chunks(records),
                })
                .collect()
        }))
    }
}
