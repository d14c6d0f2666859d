//! The live sink: records as the sampler drains them, resolved against the
//! processes' mappings and poured into the shared [`Intake`]. It keeps only
//! what is running: an exited process's mappings and its threads' names
//! are let go.

use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use rustc_hash::FxHashMap;

use profiler_model::{
    Avma, CallchainEntry, CpuMode, LiveMappings, Location, Record, RecordSink, Sample,
    side_band_order,
};

use crate::intake::{CommandId, HitKey, Intake, Weight};

/// How many callers of a sample are followed: enough for the panel of
/// callers, and a bound on the work per sample.
pub(crate) const STACK_DEPTH: usize = 32;

/// Command names by thread, interned.
#[derive(Debug, Default)]
pub(crate) struct CommandNames {
    by_thread: FxHashMap<u32, CommandId>,
    interned: FxHashMap<Arc<str>, CommandId>,
}

impl CommandNames {
    /// The id of `name`, adding it to `commands` when new.
    pub(crate) fn intern(&mut self, name: &str, commands: &mut Vec<Arc<str>>) -> CommandId {
        if let Some(&id) = self.interned.get(name) {
            return id;
        }
        let id = commands.len() as CommandId;
        let name: Arc<str> = Arc::from(name);
        commands.push(Arc::clone(&name));
        self.interned.insert(name, id);
        id
    }

    fn of(&self, pid: u32, tid: u32) -> Option<CommandId> {
        self.by_thread
            .get(&tid)
            .or_else(|| self.by_thread.get(&pid))
            .copied()
    }
}

/// A [`RecordSink`] that counts samples into an [`Intake`] shared with the
/// screen.
pub(crate) struct LiveFeed {
    intake: Arc<Mutex<Intake>>,
    mappings: LiveMappings,
    names: CommandNames,
    /// The current drain cycle's records.
    batch: Vec<Record>,
    /// Threads and processes that exited in the last cycle: forgotten one
    /// cycle later, since another CPU's ring may still hold their samples.
    exited: Vec<(u32, u32)>,
    stack: Vec<Location>,
}

impl LiveFeed {
    pub(crate) fn new(intake: Arc<Mutex<Intake>>) -> LiveFeed {
        LiveFeed {
            intake,
            mappings: LiveMappings::new(),
            names: CommandNames::default(),
            batch: Vec::new(),
            exited: Vec::new(),
            stack: Vec::new(),
        }
    }

    fn apply(&mut self, record: &Record, intake: &mut Intake) {
        match record {
            Record::Sample(sample) => self.count(sample, intake),
            Record::Mmap(_) => {
                self.mappings.apply(record);
                let known = intake.modules.len();
                let table = self.mappings.modules();
                intake
                    .modules
                    .extend((known..table.len()).map(|id| table.get(id as u32).clone()));
            }
            Record::Comm(comm) => {
                let id = self.names.intern(&comm.name, &mut intake.commands);
                self.names.by_thread.insert(comm.tid, id);
                self.mappings.apply(record);
            }
            Record::Fork(fork) => {
                if let Some(id) = self.names.of(fork.ppid, fork.ptid) {
                    self.names.by_thread.insert(fork.tid, id);
                }
                self.mappings.apply(record);
            }
            Record::Exit(exit) => self.exited.push((exit.pid, exit.tid)),
            Record::Lost(lost) => add(&mut intake.lost, lost.event as usize, lost.count),
            Record::Throttle(t) if !t.unthrottle => add(&mut intake.throttled, t.event as usize, 1),
            Record::Throttle(_) | Record::Histogram(_) | Record::Switch(_) => {}
        }
    }

    fn count(&mut self, sample: &Sample, intake: &mut Intake) {
        let command = match self.names.of(sample.pid, sample.tid) {
            Some(id) => id,
            None => self.names.intern("-", &mut intake.commands),
        };
        let key = HitKey {
            event: sample.event,
            pid: sample.pid,
            command,
            location: self.mappings.resolve(sample),
        };
        let weight = Weight {
            samples: 1,
            period: sample.period,
        };
        self.stack.clear();
        callers(sample, &mut self.stack, |pid, address| {
            self.mappings.resolve_address(pid, address)
        });
        intake.hit(key, weight, &self.stack);
    }
}

fn add(counts: &mut [u64], index: usize, by: u64) {
    if let Some(count) = counts.get_mut(index) {
        *count = count.saturating_add(by);
    }
}

/// The places of `sample`'s callers, innermost first, up to
/// [`STACK_DEPTH`]: each return address a byte back, inside its call.
pub(crate) fn callers(
    sample: &Sample,
    stack: &mut Vec<Location>,
    mut resolve: impl FnMut(u32, Avma) -> Location,
) {
    let mut mode = CpuMode::Unknown;
    let mut leaf_seen = false;
    for entry in &sample.callchain {
        let address = match *entry {
            CallchainEntry::Context(context) => {
                mode = context;
                continue;
            }
            CallchainEntry::Address(address) => address,
        };
        if !leaf_seen {
            // The chain starts at the sampled address itself.
            leaf_seen = true;
            if address == sample.ip {
                continue;
            }
        }
        if stack.len() == STACK_DEPTH {
            break;
        }
        let place = Avma(address.0.saturating_sub(1));
        stack.push(match mode {
            CpuMode::Kernel | CpuMode::GuestKernel => Location::Kernel { address: place },
            _ => resolve(sample.pid, place),
        });
    }
}

impl RecordSink for LiveFeed {
    fn push(&mut self, record: &Record) -> io::Result<()> {
        match record {
            Record::Sample(sample) if sample.user_stack.is_some() => {
                // The stack's copy serves only the caller splicer before us.
                let mut sample = sample.clone();
                sample.user_stack = None;
                self.batch.push(Record::Sample(sample));
            }
            _ => self.batch.push(record.clone()),
        }
        Ok(())
    }

    fn end_batch(&mut self) -> io::Result<()> {
        let exited_before = std::mem::take(&mut self.exited);
        let mut batch = std::mem::take(&mut self.batch);
        batch.sort_by_key(side_band_order);
        let intake = Arc::clone(&self.intake);
        let mut intake = intake.lock().unwrap_or_else(PoisonError::into_inner);
        for record in &batch {
            self.apply(record, &mut intake);
        }
        drop(intake);
        for (pid, tid) in exited_before {
            self.names.by_thread.remove(&tid);
            if pid == tid {
                self.mappings.forget(pid);
            }
        }
        batch.clear();
        self.batch = batch;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use profiler_model::{Comm, FileOffset, Mmap, TaskEvent};

    fn sample(pid: u32, ip: u64, callchain: Vec<CallchainEntry>) -> Record {
        Record::Sample(Sample {
            time: 10,
            pid,
            tid: pid,
            ip: Avma(ip),
            period: 250_000,
            mode: CpuMode::User,
            callchain,
            ..Sample::default()
        })
    }

    fn setup(feed: &mut LiveFeed) {
        feed.push(&Record::Comm(Comm {
            time: 1,
            pid: 7,
            tid: 7,
            name: "app".into(),
            exec: true,
        }))
        .unwrap();
        feed.push(&Record::Mmap(Mmap {
            time: 2,
            pid: 7,
            tid: 7,
            start: Avma(0x40_0000),
            len: 0x1000,
            offset: FileOffset(0x1000),
            path: "/bin/app".into(),
            build_id: None,
        }))
        .unwrap();
    }

    #[test]
    fn samples_count_at_their_module_offset_under_their_command() {
        let intake = Arc::new(Mutex::new(Intake::new(1)));
        let mut feed = LiveFeed::new(Arc::clone(&intake));
        setup(&mut feed);
        let chain = vec![
            CallchainEntry::Context(CpuMode::User),
            CallchainEntry::Address(Avma(0x40_0010)),
            CallchainEntry::Address(Avma(0x40_0101)),
        ];
        feed.push(&sample(7, 0x40_0010, chain.clone())).unwrap();
        feed.push(&sample(7, 0x40_0010, chain)).unwrap();
        feed.end_batch().unwrap();
        let mut intake = intake.lock().unwrap();
        assert_eq!(intake.modules.len(), 1);
        assert_eq!(&*intake.commands[0], "app");
        let delivery = intake.take();
        let (key, weight) = delivery.hits.iter().next().unwrap();
        let at = |offset| Location::Module {
            module: 0,
            offset: FileOffset(offset),
        };
        assert_eq!(key.location, at(0x1010));
        assert_eq!(weight.samples, 2);
        let (edge, count) = delivery.edges.iter().next().unwrap();
        assert_eq!(
            (edge.callee, edge.caller, *count),
            (at(0x1010), at(0x1100), 2)
        );
        assert!(intake.take().hits.is_empty(), "taken once");
    }

    #[test]
    fn an_exited_process_is_forgotten_a_cycle_later() {
        let intake = Arc::new(Mutex::new(Intake::new(1)));
        let mut feed = LiveFeed::new(Arc::clone(&intake));
        setup(&mut feed);
        let exit = TaskEvent {
            time: 20,
            pid: 7,
            ppid: 1,
            tid: 7,
            ptid: 1,
        };
        feed.push(&Record::Exit(exit)).unwrap();
        feed.end_batch().unwrap();
        // The cycle after the exit still sees the process; the next not.
        feed.push(&sample(7, 0x40_0010, Vec::new())).unwrap();
        feed.end_batch().unwrap();
        feed.push(&sample(7, 0x40_0010, Vec::new())).unwrap();
        feed.end_batch().unwrap();
        let delivery = intake.lock().unwrap().take();
        let mut locations: Vec<_> = delivery.hits.keys().map(|k| k.location).collect();
        locations.sort();
        assert_eq!(locations.len(), 2, "one resolved, one after forgetting");
        assert!(locations.contains(&Location::Unmapped));
        assert!(feed.names.by_thread.is_empty());
    }
}
