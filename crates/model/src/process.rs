//! The process model: which file each address of each process belonged to,
//! and when.
//!
//! [`LiveMappings`] holds the mappings of every process as they stand after
//! the side-band records (mappings, exec, fork) applied so far. The
//! [`ProcessModel`] replays a whole recording's side-band records in time
//! order through it, logging the interval of time each mapping was live, so
//! that a sample resolves by process, address and time, in any order:
//! samples need not be sorted, which keeps a report's pass over them
//! streaming.

use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::ops::Range;

use crate::address::{Avma, FileOffset};
use crate::module::{Module, ModuleId, ModuleTable};
use crate::record::{CpuMode, Record, Sample};
use crate::unwind::MappedRange;

/// Where a sampled address lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Location {
    /// In a mapped module, at this offset into its file.
    Module {
        module: ModuleId,
        offset: FileOffset,
    },
    /// In the kernel, at this address.
    Kernel { address: Avma },
    /// In no mapping known to the recording.
    Unmapped,
}

/// Whether a sample was taken in the kernel.
fn in_kernel(sample: &Sample) -> bool {
    sample.ip.is_kernel() || matches!(sample.mode, CpuMode::Kernel | CpuMode::GuestKernel)
}

/// The order side-band records must be applied in: by time, and at equal
/// times an exec or fork before the mappings that follow it.
pub fn side_band_order(record: &Record) -> (u64, bool) {
    (
        record.time(),
        !matches!(record, Record::Comm(_) | Record::Fork(_)),
    )
}

/// A mapping as it stands: `start..end` (the map's key is `start`) shows the
/// file from `offset`, live since `from`.
#[derive(Clone, Copy, Debug)]
struct Live {
    end: u64,
    offset: u64,
    module: ModuleId,
    from: u64,
}

/// A mapping that has ended: live in `pid` from `live.from` until `until`.
struct Ended {
    pid: u32,
    start: u64,
    live: Live,
    until: u64,
}

/// The mappings of every process after the side-band records applied so
/// far, which must come in [`side_band_order`].
#[derive(Debug, Default)]
pub struct LiveMappings {
    modules: ModuleTable,
    live: FxHashMap<u32, BTreeMap<u64, Live>>,
}

impl LiveMappings {
    pub fn new() -> LiveMappings {
        LiveMappings::default()
    }

    /// Applies a mapping, exec or fork record; ignores other records.
    /// Returns the module a mapping record mapped.
    pub fn apply(&mut self, record: &Record) -> Option<ModuleId> {
        self.apply_logged(record, &mut Vec::new())
    }

    /// Where `ip` lies in process `pid` now.
    pub fn resolve(&self, sample: &Sample) -> Location {
        if in_kernel(sample) {
            return Location::Kernel { address: sample.ip };
        }
        self.resolve_address(sample.pid, sample.ip)
    }

    /// Where user-space address `ip` lies in process `pid` now.
    pub fn resolve_address(&self, pid: u32, ip: Avma) -> Location {
        let ip = ip.0;
        let found = self.live.get(&pid).and_then(|maps| {
            let (&start, live) = maps.range(..=ip).next_back()?;
            (ip < live.end).then_some((start, live))
        });
        match found {
            Some((start, live)) => Location::Module {
                module: live.module,
                // A mapping may state any file offset.
                offset: FileOffset((ip - start).saturating_add(live.offset)),
            },
            None => Location::Unmapped,
        }
    }

    /// The executable mappings of process `pid` now, sorted by start.
    pub fn mappings(&self, pid: u32) -> Vec<MappedRange> {
        self.live.get(&pid).map_or_else(Vec::new, |maps| {
            maps.iter()
                .map(|(&start, live)| MappedRange {
                    start: Avma(start),
                    end: Avma(live.end),
                    offset: FileOffset(live.offset),
                    module: live.module,
                })
                .collect()
        })
    }

    pub fn modules(&self) -> &ModuleTable {
        &self.modules
    }

    /// Drops what is known of process `pid`'s mappings, once it has exited:
    /// a model kept for hours of whole-CPU sampling holds only the
    /// processes still running.
    pub fn forget(&mut self, pid: u32) {
        self.live.remove(&pid);
    }

    /// Applies `record`, adding the mappings it ends to `ended`.
    fn apply_logged(&mut self, record: &Record, ended: &mut Vec<Ended>) -> Option<ModuleId> {
        match record {
            Record::Mmap(m) if m.len > 0 => {
                let pid = Module::is_anonymous(&m.path).then_some(m.pid);
                let module = self.modules.intern(&m.path, m.build_id.as_ref(), pid);
                let end = m.start.0.saturating_add(m.len);
                let live = Live {
                    end,
                    offset: m.offset.0,
                    module,
                    from: m.time,
                };
                self.map(m.pid, m.start.0, live, ended);
                return Some(module);
            }
            Record::Comm(c) if c.exec => self.unmap_all(c.pid, c.time, ended),
            Record::Fork(f) if f.pid != f.ppid => {
                self.unmap_all(f.pid, f.time, ended);
                if let Some(parent) = self.live.get(&f.ppid) {
                    let copied = parent
                        .iter()
                        .map(|(&s, &m)| (s, Live { from: f.time, ..m }));
                    let copied = copied.collect();
                    self.live.insert(f.pid, copied);
                }
            }
            _ => {}
        }
        None
    }

    /// Maps `mapping` at `start`, cutting away whatever it overlaps.
    fn map(&mut self, pid: u32, start: u64, mapping: Live, ended: &mut Vec<Ended>) {
        let maps = self.live.entry(pid).or_default();
        let time = mapping.from;
        // Live mappings never overlap, so their ends ascend with their starts.
        let overlapping: Vec<u64> = maps
            .range(..mapping.end)
            .rev()
            .take_while(|(_, m)| m.end > start)
            .map(|(&s, _)| s)
            .collect();
        for old_start in overlapping {
            let Some(old) = maps.remove(&old_start) else {
                continue;
            };
            ended.push(Ended {
                pid,
                start: old_start,
                live: old,
                until: time,
            });
            if old_start < start {
                maps.insert(
                    old_start,
                    Live {
                        end: start,
                        from: time,
                        ..old
                    },
                );
            }
            if old.end > mapping.end {
                let offset = old.offset.saturating_add(mapping.end - old_start);
                maps.insert(
                    mapping.end,
                    Live {
                        offset,
                        from: time,
                        ..old
                    },
                );
            }
        }
        maps.insert(start, mapping);
    }

    fn unmap_all(&mut self, pid: u32, time: u64, ended: &mut Vec<Ended>) {
        if let Some(maps) = self.live.remove(&pid) {
            let gone = maps.into_iter().map(|(start, live)| Ended {
                pid,
                start,
                live,
                until: time,
            });
            ended.extend(gone);
        }
    }
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
        self.records.sort_by_key(side_band_order);
        let mut mappings = LiveMappings::new();
        let mut ended = Vec::new();
        let mut names: Names = FxHashMap::default();
        let mut ranges: FxHashMap<ModuleId, Vec<(FileOffset, u64)>> = FxHashMap::default();
        for record in &self.records {
            if let Some(module) = mappings.apply_logged(record, &mut ended)
                && let Record::Mmap(m) = record
            {
                let module_ranges = ranges.entry(module).or_default();
                if !module_ranges.contains(&(m.offset, m.len)) {
                    module_ranges.push((m.offset, m.len));
                }
            }
            match record {
                Record::Comm(c) => names
                    .entry(c.tid)
                    .or_default()
                    .push((c.time, c.name.clone())),
                Record::Fork(f) => {
                    if let Some(name) = name_at(&names, f.ptid, f.time).map(str::to_owned) {
                        names.entry(f.tid).or_default().push((f.time, name));
                    }
                }
                _ => {}
            }
        }
        let pids: Vec<u32> = mappings.live.keys().copied().collect();
        for pid in pids {
            mappings.unmap_all(pid, u64::MAX, &mut ended);
        }
        let mut by_pid: FxHashMap<u32, Vec<Interval>> = FxHashMap::default();
        for Ended {
            pid,
            start,
            live,
            until,
        } in ended
        {
            let interval = Interval {
                start,
                end: live.end,
                offset: live.offset,
                module: live.module,
                from: live.from,
                until,
            };
            by_pid.entry(pid).or_default().push(interval);
        }
        let timelines = by_pid
            .into_iter()
            .map(|(pid, v)| (pid, Timeline::new(v)))
            .collect();
        ProcessModel {
            modules: mappings.modules,
            timelines,
            names,
            ranges,
        }
    }
}

/// Mappings and thread names over the whole recording.
#[derive(Debug, Default)]
pub struct ProcessModel {
    modules: ModuleTable,
    timelines: FxHashMap<u32, Timeline>,
    names: Names,
    ranges: FxHashMap<ModuleId, Vec<(FileOffset, u64)>>,
}

impl ProcessModel {
    /// Where the sample's program counter lay when it was taken.
    pub fn resolve(&self, sample: &Sample) -> Location {
        self.resolve_after(sample, &mut LastMapping::default())
    }

    /// [`ProcessModel::resolve`], trying first the mapping `last` holds (see
    /// [`ProcessModel::resolve_address_after`]).
    pub fn resolve_after(&self, sample: &Sample, last: &mut LastMapping) -> Location {
        if in_kernel(sample) {
            return Location::Kernel { address: sample.ip };
        }
        self.resolve_address_after(sample.pid, sample.ip, sample.time, last)
    }

    /// Where `ip` lay in process `pid` at `time`. When no mapping covering
    /// `ip` was live at that instant (timestamps of different CPUs can be a
    /// little out of step), the mapping nearest in time is taken.
    pub fn resolve_address(&self, pid: u32, ip: Avma, time: u64) -> Location {
        self.resolve_address_after(pid, ip, time, &mut LastMapping::default())
    }

    /// [`ProcessModel::resolve_address`], trying first the mappings `last`
    /// holds, and leaving there the one found: a stack's frames mostly lie
    /// in one or two mappings. Live mappings of a process never overlap, so
    /// one live at `time` and holding `ip` is the one a search would find.
    pub fn resolve_address_after(
        &self,
        pid: u32,
        ip: Avma,
        time: u64,
        last: &mut LastMapping,
    ) -> Location {
        let holds = |last: &Option<(u32, Interval)>| {
            last.as_ref()
                .filter(|(last_pid, m)| *last_pid == pid && m.holds(ip.0, time))
                .map(|(_, m)| m.location(ip.0))
        };
        if let Some(location) = holds(&last.0[0]) {
            return location;
        }
        if let Some(location) = holds(&last.0[1]) {
            last.0.swap(0, 1);
            return location;
        }
        match self.timelines.get(&pid).and_then(|t| t.find(ip.0, time)) {
            Some(m) => {
                last.0[1] = last.0[0];
                last.0[0] = Some((pid, *m));
                m.location(ip.0)
            }
            None => Location::Unmapped,
        }
    }

    pub fn modules(&self) -> &ModuleTable {
        &self.modules
    }

    /// Every executable mapping process `pid` had, sorted by start address,
    /// each once (a range mapped again with the same file bytes is one).
    pub fn mappings(&self, pid: u32) -> Vec<MappedRange> {
        let mut ranges: Vec<MappedRange> = self
            .timelines
            .get(&pid)
            .map_or(&[][..], |t| &t.intervals)
            .iter()
            .map(|i| MappedRange {
                start: Avma(i.start),
                end: Avma(i.end),
                offset: FileOffset(i.offset),
                module: i.module,
            })
            .collect();
        ranges.dedup();
        ranges
    }

    /// The module table, for callers done with resolving.
    pub fn into_modules(self) -> ModuleTable {
        self.modules
    }

    /// The file ranges (`offset`, `length`) of `module` that were mapped,
    /// each once.
    pub fn module_ranges(&self, module: ModuleId) -> &[(FileOffset, u64)] {
        self.ranges.get(&module).map_or(&[], Vec::as_slice)
    }

    /// The name (`comm`) thread `tid` had at `time`.
    pub fn thread_name(&self, tid: u32, time: u64) -> Option<&str> {
        name_at(&self.names, tid, time)
    }

    /// The name thread `tid` had at `time`, with the times it had it for:
    /// from the rename that gave it (from 0 for the first name) to the
    /// next one.
    pub fn thread_name_span(&self, tid: u32, time: u64) -> Option<(&str, Range<u64>)> {
        name_span(&self.names, tid, time)
    }
}

type Names = FxHashMap<u32, Vec<(u64, String)>>;

fn name_at(names: &Names, tid: u32, time: u64) -> Option<&str> {
    name_span(names, tid, time).map(|(name, _)| name)
}

/// The name `tid` had at `time`, and from when until when it had it.
fn name_span(names: &Names, tid: u32, time: u64) -> Option<(&str, Range<u64>)> {
    let history = names.get(&tid)?;
    // Before the first rename, the first known name is the best guess.
    let index = history
        .partition_point(|(t, _)| *t <= time)
        .saturating_sub(1);
    let (_, name) = history.get(index)?;
    let from = if index == 0 { 0 } else { history[index].0 };
    let until = history.get(index + 1).map_or(u64::MAX, |(t, _)| *t);
    Some((name, from..until))
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

impl Interval {
    /// Whether it held `address` and was live at `time`.
    fn holds(&self, address: u64, time: u64) -> bool {
        (self.start..self.end).contains(&address) && (self.from..self.until).contains(&time)
    }

    fn location(&self, address: u64) -> Location {
        Location::Module {
            module: self.module,
            // A mapping may state any file offset.
            offset: FileOffset((address - self.start).saturating_add(self.offset)),
        }
    }
}

/// The mappings [`ProcessModel::resolve_address_after`] last found, the
/// latest first: two, as a program's samples and stacks alternate between
/// its own code and its libraries'.
#[derive(Clone, Copy, Debug, Default)]
pub struct LastMapping([Option<(u32, Interval)>; 2]);

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
                (time - interval.until).saturating_add(1)
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
            callchain: Vec::new(),
            user_stack: None,
            read: Vec::new(),
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
            Location::Kernel {
                address: Avma(0xffff_ffff_8100_0000)
            }
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
    fn the_last_mapping_found_gives_what_a_search_would() {
        let m = model(&[
            mmap(1, 5, 0x1000, 0x3000, 0, "/app"),
            mmap(2, 5, 0x8000, 0x1000, 0, "/lib.so"),
            // Mapped over the middle of /app, then again over part of it.
            mmap(5, 5, 0x2000, 0x800, 0x10_000, "/patch"),
            mmap(8, 5, 0x2400, 0x1000, 0, "/other"),
            Record::Fork(TaskEvent {
                time: 6,
                pid: 6,
                ppid: 5,
                tid: 6,
                ptid: 5,
            }),
            Record::Comm(Comm {
                time: 9,
                pid: 6,
                tid: 6,
                name: "new".into(),
                exec: true,
            }),
            mmap(9, 6, 0x1000, 0x1000, 0, "/new"),
        ]);
        let mut last = LastMapping::default();
        let mut state = 1_u64;
        for _ in 0..20_000 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            let pid = 5 + (state >> 60) as u32 % 3;
            let ip = Avma(0x800 + (state >> 20) % 0x9000);
            let time = (state >> 40) % 12;
            assert_eq!(
                m.resolve_address_after(pid, ip, time, &mut last),
                m.resolve_address(pid, ip, time),
                "pid {pid}, {ip:?} at {time}"
            );
        }
    }

    #[test]
    fn a_name_is_held_from_its_rename_to_the_next() {
        let comm = |time, name: &str| {
            Record::Comm(Comm {
                time,
                pid: 5,
                tid: 5,
                name: name.into(),
                exec: true,
            })
        };
        let m = model(&[comm(10, "sh"), comm(20, "app"), comm(30, "tool")]);
        // Before the first rename, the first name is the best guess.
        assert_eq!(m.thread_name_span(5, 3), Some(("sh", 0..20)));
        assert_eq!(m.thread_name_span(5, 20), Some(("app", 20..30)));
        assert_eq!(m.thread_name_span(5, 99), Some(("tool", 30..u64::MAX)));
        assert_eq!(m.thread_name_span(6, 5), None);
        for time in [3, 20, 29, 99] {
            let (name, _) = m.thread_name_span(5, time).unwrap();
            assert_eq!(m.thread_name(5, time), Some(name));
        }
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
    fn live_mappings_resolve_as_of_the_records_applied() {
        let mut live = LiveMappings::new();
        let module = live.apply(&mmap(1, 5, 0x1000, 0x1000, 0x2000, "/app"));
        assert_eq!(live.modules().get(module.unwrap()).path, "/app");
        let at = |live: &LiveMappings, ip| live.resolve(&sample(0, 5, ip));
        assert_eq!(
            at(&live, 0x1010),
            Location::Module {
                module: 0,
                offset: FileOffset(0x2010)
            }
        );
        assert_eq!(at(&live, 0x2000), Location::Unmapped);
        live.apply(&Record::Fork(TaskEvent {
            time: 2,
            pid: 6,
            ppid: 5,
            tid: 6,
            ptid: 5,
        }));
        assert_eq!(live.resolve(&sample(0, 6, 0x1010)), at(&live, 0x1010));
        let child = [MappedRange {
            start: Avma(0x1000),
            end: Avma(0x2000),
            offset: FileOffset(0x2000),
            module: 0,
        }];
        assert_eq!(live.mappings(6), child);
        live.apply(&Record::Comm(Comm {
            time: 3,
            pid: 5,
            tid: 5,
            name: "x".into(),
            exec: true,
        }));
        assert_eq!(at(&live, 0x1010), Location::Unmapped);
        assert_eq!(live.mappings(5), []);
        assert_eq!(
            live.resolve_address(6, Avma(0x1010)),
            live.resolve(&sample(0, 6, 0x1010))
        );
        assert_eq!(live.resolve_address(6, Avma(0x2000)), Location::Unmapped);
        assert_eq!(
            live.resolve(&sample(0, 6, 0xffff_ffff_8000_0000)),
            Location::Kernel {
                address: Avma(0xffff_ffff_8000_0000)
            }
        );
    }

    #[test]
    fn each_mapped_range_of_a_module_is_remembered_once() {
        let m = model(&[
            mmap(1, 5, 0x1000, 0x1000, 0x1000, "/app"),
            Record::Fork(TaskEvent {
                time: 2,
                pid: 6,
                ppid: 5,
                tid: 6,
                ptid: 5,
            }),
            mmap(3, 7, 0x9000, 0x1000, 0x1000, "/app"),
            mmap(4, 7, 0xa000, 0x2000, 0x3000, "/app"),
        ]);
        assert_eq!(
            m.module_ranges(0),
            [(FileOffset(0x1000), 0x1000), (FileOffset(0x3000), 0x2000)]
        );
        assert!(m.module_ranges(9).is_empty());
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
