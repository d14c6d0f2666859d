//! Reading a recording's samples the way every view of them needs: the
//! side-band records first (mappings, exec, fork, in any order in the file)
//! into the process model, then the samples, streamed, each resolved
//! against the model by process, address and time.
//!
//! With `record --off-cpu` the stream also holds the samples of the
//! events read rather than recorded (see
//! [`EventRole`](crate::EventRole)): each sample of the switch-out event
//! comes as a sample of the off-CPU event, weighing the nanoseconds its
//! thread then spent off the CPU; each switch out without such a sample
//! as one at an unknown stack (address 0); and each sample of the off-CPU
//! event and of the clock event comes a second time as a sample of the
//! wall event.

use std::sync::Arc;

use crate::address::Avma;
use crate::error::RecordingError;
use crate::off_cpu::OffCpu;
use crate::process::{ProcessModel, ProcessModelBuilder};
use crate::reader::{RecordStream, Recording};
use crate::record::{CpuMode, Record, Sample, Switch};

/// The samples of a recording, in file order.
pub struct Samples {
    records: RecordStream,
    off_cpu: Option<Arc<OffCpu>>,
    /// The wall event, when the sample last handed out comes again as one
    /// of it.
    again_as_wall: Option<u16>,
    /// That sample, for [`Iterator::next`], which hands out owned samples.
    held: Option<Sample>,
}

impl Iterator for Samples {
    type Item = Result<Sample, RecordingError>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut sample = self.held.take().unwrap_or_default();
        let read = self.next_into(&mut sample)?;
        if self.again_as_wall.is_some() {
            self.held = Some(sample.clone());
        }
        Some(read.map(|()| sample))
    }
}

impl Samples {
    fn new(records: RecordStream, off_cpu: Option<Arc<OffCpu>>) -> Samples {
        Samples {
            records,
            off_cpu,
            again_as_wall: None,
            held: None,
        }
    }

    /// The next sample, decoded into `sample`: where a recording's samples
    /// are only looked at one at a time, one sample's memory serves all.
    /// `sample` must hold the sample this call handed out last.
    pub fn next_into(&mut self, sample: &mut Sample) -> Option<Result<(), RecordingError>> {
        if let Some(wall) = self.again_as_wall.take() {
            sample.event = wall;
            return Some(Ok(()));
        }
        let Some(off_cpu) = self.off_cpu.clone() else {
            return Some(self.next_raw(sample, false)?.map(drop));
        };
        let events = off_cpu.events;
        loop {
            let switch = match self.next_raw(sample, true)? {
                Ok(switch) => switch,
                Err(error) => return Some(Err(error)),
            };
            let stretch = match switch {
                // A switch out without its sample: off the CPU at an
                // unknown stack.
                Some(s) if s.out && !(s.sampled && events.switch_out.is_some()) => {
                    let Some(stretch) = off_cpu.stretch(s.tid, s.time) else {
                        continue;
                    };
                    unknown_stack(sample, &s);
                    stretch
                }
                Some(_) => continue,
                None if Some(sample.event) == events.switch_out => {
                    match off_cpu.stretch(sample.tid, sample.time) {
                        Some(stretch) => stretch,
                        None => continue,
                    }
                }
                None => {
                    if let Some((wall, clock)) = events.wall
                        && sample.event == clock
                    {
                        self.again_as_wall = Some(wall);
                    }
                    return Some(Ok(()));
                }
            };
            sample.event = events.off_cpu;
            sample.period = stretch.len();
            self.again_as_wall = events.wall.map(|(wall, _)| wall);
            return Some(Ok(()));
        }
    }

    /// The next sample into `sample` (then `Ok(None)`), or, with
    /// `switches`, the next switch, whichever comes first.
    fn next_raw(
        &mut self,
        sample: &mut Sample,
        switches: bool,
    ) -> Option<Result<Option<Switch>, RecordingError>> {
        match &mut self.records {
            RecordStream::Chunks(records) => records.next_sample_or_switch(sample, switches),
            RecordStream::Source(records) => loop {
                match records.next()? {
                    Ok(Record::Sample(next)) => {
                        *sample = next;
                        return Some(Ok(None));
                    }
                    Ok(Record::Switch(switch)) if switches => return Some(Ok(Some(switch))),
                    Ok(_) => {}
                    Err(error) => return Some(Err(error)),
                }
            },
        }
    }
}

/// `sample` made a sample of `switch`'s thread at an unknown address.
fn unknown_stack(sample: &mut Sample, switch: &Switch) {
    sample.time = switch.time;
    sample.pid = switch.pid;
    sample.tid = switch.tid;
    sample.cpu = 0;
    sample.mode = CpuMode::Unknown;
    sample.ip = Avma(0);
    sample.callchain.clear();
    sample.user_stack = None;
    sample.read.clear();
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
        let samples = Samples::new(self.records()?, self.off_cpu.clone());
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
                .map(|records| Samples::new(RecordStream::Chunks(records), self.off_cpu.clone()))
                .collect()
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{EventDescription, EventRole, Sampling};
    use crate::header::{HostInfo, RecordingHeader, Trailer};
    use crate::record::Comm;
    use crate::writer::{RecordSink, RecordingWriter};

    fn event(name: &str, role: EventRole) -> EventDescription {
        EventDescription {
            name: name.into(),
            perf_type: 1,
            config: 0,
            config1: 0,
            config2: 0,
            sampling: Sampling::Period(1),
            unit: "ns".into(),
            user: true,
            kernel: false,
            leader: None,
            role,
        }
    }

    fn sample(time: u64, event: u16, ip: u64, period: u64) -> Record {
        Record::Sample(Sample {
            time,
            pid: 1,
            tid: 1,
            event,
            ip: Avma(ip),
            period,
            ..Sample::default()
        })
    }

    fn switch(time: u64, out: bool, preempt: bool, sampled: bool) -> Record {
        Record::Switch(Switch {
            time,
            pid: 1,
            tid: 1,
            out,
            preempt,
            sampled,
        })
    }

    /// A thread that runs (two clock samples), blocks 300 at a stack
    /// sampled as it left, is preempted 50 with no sample, runs again.
    fn recording() -> Recording {
        let header = RecordingHeader {
            events: vec![
                event("cpu-clock", EventRole::Sampled),
                event("context-switches", EventRole::SwitchOut),
                event("off-cpu", EventRole::OffCpu),
                event("wall", EventRole::Wall),
            ],
            command: vec!["./app".into()],
            program: None,
            histogram: None,
            call_graph: None,
            host: HostInfo::default(),
            start_unix_ns: 0,
            profiler_version: "0".into(),
            user: None,
            job: None,
        };
        let mut writer = RecordingWriter::new(Vec::new(), &header).unwrap();
        let records = [
            Record::Comm(Comm {
                time: 10,
                pid: 1,
                tid: 1,
                name: "app".into(),
                exec: true,
            }),
            sample(20, 0, 0x1000, 100),
            sample(100, 1, 0x2000, 1),
            switch(100, true, false, true),
            switch(400, false, false, false),
            sample(450, 0, 0x1000, 100),
            switch(500, true, true, false),
            switch(550, false, false, false),
        ];
        for record in &records {
            writer.push(record).unwrap();
        }
        let bytes = writer.finish(Trailer::default()).unwrap();
        let path = std::env::temp_dir().join(format!("replay-{}.data", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        Recording::open(&path).unwrap()
    }

    #[test]
    fn switches_are_read_as_off_cpu_and_wall_samples() {
        let recording = recording();
        let (_, samples) = recording.replay().unwrap();
        let read: Vec<(u64, u16, u64, u64)> = samples
            .map(|s| s.unwrap())
            .map(|s| (s.time, s.event, s.ip.0, s.period))
            .collect();
        assert_eq!(
            read,
            [
                (20, 0, 0x1000, 100),
                (20, 3, 0x1000, 100),
                (100, 2, 0x2000, 300),
                (100, 3, 0x2000, 300),
                (450, 0, 0x1000, 100),
                (450, 3, 0x1000, 100),
                (500, 2, 0, 50),
                (500, 3, 0, 50),
            ]
        );
        // One sample's memory serves the whole stream.
        let (_, mut samples) = recording.replay().unwrap();
        let mut sample = Sample::default();
        let mut events = Vec::new();
        while let Some(read) = samples.next_into(&mut sample) {
            read.unwrap();
            events.push(sample.event);
        }
        assert_eq!(events, [0, 3, 2, 3, 0, 3, 2, 3]);

        let stats = &recording.trailer.stats.events;
        assert_eq!((stats[2].samples, stats[2].period), (2, 350));
        assert_eq!((stats[3].samples, stats[3].period), (4, 550));
        let times = recording.thread_times();
        assert_eq!(times.len(), 1);
        assert_eq!((times[0].start, times[0].end), (10, 550));
        assert_eq!(
            (times[0].on_cpu, times[0].blocked, times[0].preempted),
            (90 + 100, 300, 50)
        );
        let stretch = recording.off_cpu_stretch(1, 500).unwrap();
        assert!(stretch.preempt);
    }
}
