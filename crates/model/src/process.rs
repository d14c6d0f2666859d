//! The process model: which file each address of each process belonged to,
//! and when.
//!
//! The side-band records (mappings, exec, fork) are replayed in time order to
//! build, per process, the list of mappings with the interval of time each was
//! live. A sample then resolves by process, address and time, in any order:
//! samples need not be sorted, which keeps a report's pass over them
//! streaming.

use std::collections::{BTreeMap, HashMap};

use crate::address::{Avma, FileOffset};
use crate::module::{ModuleId, ModuleTable};
use crate::record::{CpuMode, Record, Sample};

/// Where a sampled address lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Location {
    /// In a mapped module, at this offset into its file.
    Module {
        module: ModuleId,
        offset: FileOffset,
    },
    /// In the kernel.
    Kernel,
    /// In no mapping known to the recording.
    Unmapped,
}

/// Collects the side-band records of a recording, in any order.
#[derive(Debug, Default)]
pub struct ProcessModelBuilder {
    records: Vec<Record>,
}

impl ProcessModelBuilder {
    pub fn new() -> ProcessModelBuilder {
        ProcessModelBuilder::default()
    }

    /// Keeps `record` if it changes a process's mappings or names.
    pub fn add(&mut self, record: &Record) {
        if matches!(record, Record::Mmap(_) | Record::Comm(_) | Record::Fork(_)) {
            self.records.push(record.clone());
        }
    }

    /// Replays the records in time order.
    pub fn build(mut self) -> ProcessModel {
        // At equal times an exec or fork comes before the mappings that follow it.
        self.records
            .sort_by_key(|r| (r.time(), !matches!(r, Record::Comm(_) | Record::Fork(_))));
        let mut replay = Replay::default();
        for record in &self.records {
            match record {
                Record::Mmap(m) if m.len > 0 => {
                    let module = replay.modules.intern(&m.path, m.build_id.as_ref());
                    let mapping = Live {
                        end: m.start.0.saturating_add(m.len),
                        offset: m.offset.0,
                        module,
                        from: m.time,
                    };
                    replay.map(m.pid, m.start.0, mapping);
                }
                Record::Comm(c) => {
                    if c.exec {
                        replay.unmap_all(c.pid, c.time);
                    }
                    replay
                        .names
                        .entry(c.tid)
                        .or_default()
                        .push((c.time, c.name.clone()));
                }
                Record::Fork(f) => {
                    if f.pid != f.ppid {
                        replay.unmap_all(f.pid, f.time);
                        replay.copy_mappings(f.ppid, f.pid, f.time);
                    }
                    if let Some(name) = name_at(&replay.names, f.ptid, f.time) {
                        let name = name.to_owned();
                        replay.names.entry(f.tid).or_default().push((f.time, name));
                    }
                }
                _ => {}
            }
        }
        replay.finish()
    }
}

/// Mappings and thread names over the whole recording.
#[derive(Debug, Default)]
pub struct ProcessModel {
    modules: ModuleTable,
    timelines: HashMap<u32, Timeline>,
    names: HashMap<u32, Vec<(u64, String)>>,
}

impl ProcessModel {
    /// Where the sample's program counter lay when it was taken.
    pub fn resolve(&self, sample: &Sample) -> Location {
        if sample.ip.is_kernel() || matches!(sample.mode, CpuMode::Kernel | CpuMode::GuestKernel) {
            return Location::Kernel;
        }
        self.resolve_address(sample.pid, sample.ip, sample.time)
    }

    /// Where `ip` lay in process `pid` at `time`. When no mapping covering
    /// `ip` was live at that instant (timestamps of different CPUs can be a
    /// little out of step), the mapping nearest in time is taken.
    pub fn resolve_address(&self, pid: u32, ip: Avma, time: u64) -> Location {
        match self.timelines.get(&pid).and_then(|t| t.find(ip.0, time)) {
            Some(m) => Location::Module {
                module: m.module,
                offset: FileOffset(ip.0 - m.start + m.offset),
            },
            None => Location::Unmapped,
        }
    }

    pub fn modules(&self) -> &ModuleTable {
        &self.modules
    }

    /// The name (`comm`) thread `tid` had at `time`.
    pub fn thread_name(&self, tid: u32, time: u64) -> Option<&str> {
        name_at(&self.names, tid, time)
    }
}

fn name_at(names: &HashMap<u32, Vec<(u64, String)>>, tid: u32, time: u64) -> Option<&str> {
    let history = names.get(&tid)?;
    let after = history.partition_point(|(t, _)| *t <= time);
    // Before the first rename, the first known name is the best guess.
    history
        .get(after.saturating_sub(1))
        .map(|(_, n)| n.as_str())
}

/// A mapping as the replay sees it: live since `from`.
#[derive(Clone, Copy, Debug)]
struct Live {
    end: u64,
    offset: u64,
    module: ModuleId,
    from: u64,
}

/// A mapping with its lifetime, `from..until`.
#[derive(Clone, Copy, Debug)]
struct Interval {
    start: u64,
    end: u64,
    offset: u64,
    module: ModuleId,
    from: u64,
    until: u64,
}

#[derive(Default)]
struct Replay {
    modules: ModuleTable,
    live: HashMap<u32, BTreeMap<u64, Live>>,
    closed: HashMap<u32, Vec<Interval>>,
    names: HashMap<u32, Vec<(u64, String)>>,
}

impl Replay {
    /// Maps `mapping` at `start`, cutting away whatever it overlaps.
    fn map(&mut self, pid: u32, start: u64, mapping: Live) {
        let live = self.live.entry(pid).or_default();
        let closed = self.closed.entry(pid).or_default();
        let time = mapping.from;
        // Live mappings never overlap, so their ends ascend with their starts.
        let overlapping: Vec<u64> = live
            .range(..mapping.end)
            .rev()
            .take_while(|(_, m)| m.end > start)
            .map(|(&s, _)| s)
            .collect();
        for old_start in overlapping {
            let Some(old) = live.remove(&old_start) else {
                continue;
            };
            closed.push(interval(old_start, old, time));
            if old_start < start {
                live.insert(
                    old_start,
                    Live {
                        end: start,
                        from: time,
                        ..old
                    },
                );
            }
            if old.end > mapping.end {
                let offset = old.offset + (mapping.end - old_start);
                live.insert(
                    mapping.end,
                    Live {
                        offset,
                        from: time,
                        ..old
                    },
                );
            }
        }
        live.insert(start, mapping);
    }

    fn unmap_all(&mut self, pid: u32, time: u64) {
        if let Some(live) = self.live.remove(&pid) {
            let closed = self.closed.entry(pid).or_default();
            closed.extend(live.into_iter().map(|(start, m)| interval(start, m, time)));
        }
    }

    fn copy_mappings(&mut self, parent: u32, child: u32, time: u64) {
        let Some(parent_live) = self.live.get(&parent) else {
            return;
        };
        let copied = parent_live
            .iter()
            .map(|(&s, &m)| (s, Live { from: time, ..m }))
            .collect();
        self.live.insert(child, copied);
    }

    fn finish(mut self) -> ProcessModel {
        let pids: Vec<u32> = self.live.keys().copied().collect();
        for pid in pids {
            self.unmap_all(pid, u64::MAX);
        }
        let timelines = self
            .closed
            .into_iter()
            .map(|(pid, v)| (pid, Timeline::new(v)))
            .collect();
        ProcessModel {
            modules: self.modules,
            timelines,
            names: self.names,
        }
    }
}

fn interval(start: u64, m: Live, until: u64) -> Interval {
    Interval {
        start,
        end: m.end,
        offset: m.offset,
        module: m.module,
        from: m.from,
        until,
    }
}

/// The mappings of one process over time, sorted by start address, with the
/// running maximum of their ends so that a lookup stops scanning early.
#[derive(Debug, Default)]
struct Timeline {
    intervals: Vec<Interval>,
    max_end: Vec<u64>,
}

impl Timeline {
    fn new(mut intervals: Vec<Interval>) -> Timeline {
        intervals.sort_by_key(|i| (i.start, i.from));
        let max_end = intervals
            .iter()
            .scan(0, |max, i| {
                *max = (*max).max(i.end);
                Some(*max)
            })
            .collect();
        Timeline { intervals, max_end }
    }

    fn find(&self, address: u64, time: u64) -> Option<&Interval> {
        let candidates = self.intervals.partition_point(|i| i.start <= address);
        let mut nearest: Option<(&Interval, u64)> = None;
        for i in (0..candidates).rev() {
            if self.max_end[i] <= address {
                break;
            }
            let interval = &self.intervals[i];
            if interval.end <= address {
                continue;
            }
            let distance = if time < interval.from {
                interval.from - time
            } else if time >= interval.until {
                time - interval.until + 1
            } else {
                return Some(interval);
            };
            if nearest.is_none_or(|(_, d)| distance < d) {
                nearest = Some((interval, distance));
            }
        }
        nearest.map(|(i, _)| i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Comm, Mmap, TaskEvent};

    fn mmap(time: u64, pid: u32, start: u64, len: u64, offset: u64, path: &str) -> Record {
        Record::Mmap(Mmap {
            time,
            pid,
            tid: pid,
            start: Avma(start),
            len,
            offset: FileOffset(offset),
            path: path.into(),
            build_id: None,
        })
    }

    fn sample(time: u64, pid: u32, ip: u64) -> Sample {
        Sample {
            time,
            pid,
            tid: pid,
            cpu: 0,
            event: 0,
            mode: CpuMode::User,
            ip: Avma(ip),
            period: 1,
        }
    }

    fn model(records: &[Record]) -> ProcessModel {
        let mut builder = ProcessModelBuilder::new();
        records.iter().for_each(|r| builder.add(r));
        builder.build()
    }

    fn path_at(model: &ProcessModel, time: u64, pid: u32, ip: u64) -> Option<(String, u64)> {
        match model.resolve(&sample(time, pid, ip)) {
            Location::Module { module, offset } => {
                Some((model.modules().get(module).path.clone(), offset.0))
            }
            _ => None,
        }
    }

    #[test]
    fn file_offset_is_address_minus_start_plus_page_offset() {
        let m = model(&[mmap(1, 7, 0x40_1000, 0x1000, 0x1000, "/bin/app")]);
        assert_eq!(
            path_at(&m, 2, 7, 0x40_1136),
            Some(("/bin/app".into(), 0x1136))
        );
        assert_eq!(m.resolve(&sample(2, 7, 0x40_2000)), Location::Unmapped);
        assert_eq!(m.resolve(&sample(2, 8, 0x40_1136)), Location::Unmapped);
        assert_eq!(
            m.resolve(&sample(2, 7, 0xffff_ffff_8100_0000)),
            Location::Kernel
        );
    }

    #[test]
    fn records_are_replayed_in_time_order_whatever_their_file_order() {
        // exec at 10 replaces the pre-exec mapping; the file lists it last.
        let m = model(&[
            mmap(11, 5, 0x1000, 0x1000, 0, "/new"),
            Record::Comm(Comm {
                time: 10,
                pid: 5,
                tid: 5,
                name: "new".into(),
                exec: true,
            }),
            mmap(1, 5, 0x1000, 0x1000, 0, "/old"),
        ]);
        assert_eq!(path_at(&m, 5, 5, 0x1800).unwrap().0, "/old");
        assert_eq!(path_at(&m, 20, 5, 0x1800).unwrap().0, "/new");
        assert_eq!(m.thread_name(5, 20), Some("new"));
    }

    #[test]
    fn a_forked_child_inherits_its_parents_mappings() {
        let m = model(&[
            mmap(1, 5, 0x1000, 0x1000, 0, "/app"),
            Record::Comm(Comm {
                time: 1,
                pid: 5,
                tid: 5,
                name: "app".into(),
                exec: true,
            }),
            Record::Fork(TaskEvent {
                time: 3,
                pid: 6,
                ppid: 5,
                tid: 6,
                ptid: 5,
            }),
            mmap(4, 6, 0x8000, 0x1000, 0, "/lib.so"),
        ]);
        assert_eq!(path_at(&m, 5, 6, 0x1010).unwrap().0, "/app");
        assert_eq!(path_at(&m, 5, 6, 0x8010).unwrap().0, "/lib.so");
        assert_eq!(m.resolve(&sample(5, 5, 0x8010)), Location::Unmapped);
        assert_eq!(m.thread_name(6, 5), Some("app"));
    }

    #[test]
    fn a_new_mapping_cuts_the_ones_it_overlaps() {
        let m = model(&[
            mmap(1, 5, 0x1000, 0x3000, 0, "/big"),
            mmap(2, 5, 0x2000, 0x1000, 0, "/middle"),
        ]);
        assert_eq!(path_at(&m, 3, 5, 0x1800), Some(("/big".into(), 0x800)));
        assert_eq!(path_at(&m, 3, 5, 0x2800), Some(("/middle".into(), 0x800)));
        assert_eq!(path_at(&m, 3, 5, 0x3800), Some(("/big".into(), 0x2800)));
        // Before the overlap, the big mapping covered the middle too.
        assert_eq!(path_at(&m, 1, 5, 0x2800), Some(("/big".into(), 0x1800)));
    }

    #[test]
    fn a_sample_slightly_before_its_mapping_takes_the_nearest_mapping() {
        let m = model(&[mmap(100, 5, 0x1000, 0x1000, 0, "/app")]);
        assert_eq!(path_at(&m, 99, 5, 0x1010).unwrap().0, "/app");
    }

    #[test]
    fn dlopen_reusing_an_address_resolves_by_time() {
        let m = model(&[
            mmap(1, 5, 0x7000, 0x1000, 0, "/liba.so"),
            mmap(10, 5, 0x7000, 0x1000, 0, "/libb.so"),
        ]);
        assert_eq!(path_at(&m, 5, 5, 0x7010).unwrap().0, "/liba.so");
        assert_eq!(path_at(&m, 15, 5, 0x7010).unwrap().0, "/libb.so");
    }
}
