//! pprof's profile.proto, gzipped: what `go tool pprof` and the services
//! that keep profiles of whole fleets (Pyroscope, Parca, Grafana) read.
//!
//! Everything is named here, so pprof never needs the binaries: each mapping
//! says it has functions, files, lines and inline frames, which keeps pprof
//! from symbolizing it again. A location is an address as the process had
//! it (a caller's is its return address less one, inside the call), with
//! the functions of its inline chain innermost first, each with its line;
//! functions carry the name every view prints and the mangled one. Samples
//! carry `comm`, `pid` and `tid` labels (and `rank` and `host` when the
//! recordings of a job were read together), and one pair of values per event:
//! samples and the events they stand for (`cpu`/`nanoseconds` for the
//! clocks, as Go's own CPU profiles say).

mod proto;

use rustc_hash::FxHashMap;
use std::io::Write;

use flate2::Compression;
use flate2::write::GzEncoder;
use profiler_model::{Avma, EventDescription, EventRole, Location, ModuleId, Recording};
use prost::Message;

use crate::error::ReportError;
use crate::read::events::{events_of, sample_period};
use crate::read::located::{Located, LocatedStack};
use crate::read::naming::{FunctionId, ModuleKey};
use crate::read::stacks::StackProfile;
use crate::read::thread_stack::CommandId;

/// Writes the stacks (read with
/// [`StackOptions::locations`](crate::StackOptions::locations)) as a
/// gzipped pprof profile.
pub fn render_pprof(
    recording: &Recording,
    stacks: &StackProfile,
    out: impl Write,
) -> Result<(), ReportError> {
    let located = stacks.located.as_ref().ok_or_else(|| {
        ReportError::Options("a pprof profile needs stacks read with their locations".into())
    })?;
    let profile = Builder::new(recording, stacks, located).build();
    let mut gz = GzEncoder::new(out, Compression::fast());
    gz.write_all(&profile.encode_to_vec())?;
    gz.finish()?.flush()?;
    Ok(())
}

/// pprof's string table: every string once, `""` first.
#[derive(Default)]
struct Strings {
    table: Vec<String>,
    index: FxHashMap<String, i64>,
}

impl Strings {
    fn new() -> Strings {
        let mut strings = Strings::default();
        strings.get("");
        strings
    }

    fn get(&mut self, text: &str) -> i64 {
        if let Some(&index) = self.index.get(text) {
            return index;
        }
        let index = self.table.len() as i64;
        self.table.push(text.to_owned());
        self.index.insert(text.to_owned(), index);
        index
    }
}

/// What a column of sample values counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Column {
    Samples(usize),
    Events(usize),
}

/// The value columns of the events read: samples and events for each
/// event that samples, events alone for a group's members (which count
/// with their leader's samples). Types are named as Go names them where
/// it can: the first clock event is `cpu`/`nanoseconds`, the first
/// event's samples `samples`/`count`; the others take the event's name
/// (`off-cpu`/`nanoseconds`, `wall`/`nanoseconds`).
fn columns(events: &[EventDescription], wanted: &[bool]) -> Vec<(Column, String, &'static str)> {
    let mut columns = Vec::new();
    let (mut named_samples, mut named_cpu) = (false, false);
    for (index, event) in events.iter().enumerate() {
        if !wanted.get(index).copied().unwrap_or(false) {
            continue;
        }
        if event.leader.is_none() {
            let name = match named_samples {
                false => "samples".to_owned(),
                true => format!("{}_samples", event.name),
            };
            named_samples = true;
            columns.push((Column::Samples(index), name, "count"));
        }
        let (name, unit) = match event.unit.as_str() {
            "ns" if !named_cpu && event.role == EventRole::Sampled => {
                ("cpu".to_owned(), "nanoseconds")
            }
            "ns" => (event.name.clone(), "nanoseconds"),
            _ => (event.name.clone(), "count"),
        };
        named_cpu |= name == "cpu";
        columns.push((Column::Events(index), name, unit));
    }
    columns
}

/// Where a pprof location's address lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum MappingKey {
    /// A mapping of a process, `start..end` holding the module from
    /// `offset` (the same mapping in several processes is one).
    Range {
        start: u64,
        end: u64,
        offset: u64,
        module: ModuleId,
    },
    /// A module whose mappings are not known (histogram recordings keep no
    /// processes): its addresses are file offsets.
    Offsets(ModuleId),
    Kernel,
    /// An address in no mapping, which the recording does not keep.
    Unmapped,
}

struct Builder<'a> {
    recording: &'a Recording,
    stacks: &'a StackProfile,
    located: &'a Located,
    strings: Strings,
    /// pprof location ids by rank, process and location.
    locations: FxHashMap<(u32, u32, u32), u64>,
    location_table: Vec<(MappingKey, Avma, u32)>,
    location_ids: FxHashMap<(MappingKey, Avma, u32), u64>,
    /// pprof function ids by function (0: not yet given one).
    function_ids: Vec<u64>,
    functions: Vec<proto::Function>,
}

impl<'a> Builder<'a> {
    fn new(recording: &'a Recording, stacks: &'a StackProfile, located: &'a Located) -> Self {
        Builder {
            recording,
            stacks,
            located,
            strings: Strings::new(),
            locations: FxHashMap::default(),
            location_table: Vec::new(),
            location_ids: FxHashMap::default(),
            function_ids: vec![0; stacks.functions.len()],
            functions: Vec::new(),
        }
    }

    fn build(mut self) -> proto::Profile {
        let header = &self.recording.header;
        let columns = columns(&header.events, &self.stacks.wanted);
        let sample_type: Vec<proto::ValueType> = (columns.iter())
            .map(|(_, name, unit)| proto::ValueType {
                r#type: self.strings.get(name),
                unit: self.strings.get(unit),
            })
            .collect();
        let samples = self.samples(&columns);
        let (mappings, mapping_ids) = self.mappings();
        let location = self.pprof_locations(&mapping_ids);
        // The first event's: its events per sample, and the type pprof
        // shows unless told otherwise.
        let first = columns
            .iter()
            .find_map(|(column, name, unit)| match column {
                Column::Events(event) => Some((*event, name, unit)),
                Column::Samples(_) => None,
            });
        let (period_type, period) = match first {
            Some((event, name, unit)) => (
                Some(proto::ValueType {
                    r#type: self.strings.get(name),
                    unit: self.strings.get(unit),
                }),
                sample_period(self.recording, event) as i64,
            ),
            None => (None, 0),
        };
        let comment = vec![self.strings.get(&header.command.join(" "))];
        proto::Profile {
            sample_type,
            sample: samples,
            mapping: mappings,
            location,
            function: self.functions,
            time_nanos: header.start_unix_ns as i64,
            duration_nanos: self.recording.trailer.duration_ns as i64,
            default_sample_type: period_type.map_or(0, |t| t.r#type),
            period_type,
            period,
            comment,
            string_table: self.strings.table,
            ..proto::Profile::default()
        }
    }

    /// One pprof sample per stack and thread, with every event's values.
    fn samples(&mut self, columns: &[(Column, String, &str)]) -> Vec<proto::Sample> {
        let mut samples: Vec<proto::Sample> = Vec::new();
        type SampleKey<'a> = (u32, u32, u32, CommandId, &'a [u32]);
        let mut index: FxHashMap<SampleKey<'_>, usize> = FxHashMap::default();
        let located = self.located;
        for (position, (column, _, _)) in columns.iter().enumerate() {
            let (Column::Samples(event) | Column::Events(event)) = *column;
            for stack in &located.stacks[event] {
                let value = match column {
                    Column::Samples(_) => stack.weight.samples,
                    Column::Events(_) => events_of(self.recording, event, stack.weight),
                };
                if value == 0 {
                    continue;
                }
                let key = (
                    stack.rank,
                    stack.pid,
                    stack.tid,
                    stack.command,
                    &stack.locations[..],
                );
                let sample = *index.entry(key).or_insert_with(|| {
                    samples.push(proto::Sample {
                        location_id: Vec::new(),
                        value: vec![0; columns.len()],
                        label: Vec::new(),
                    });
                    samples.len() - 1
                });
                if samples[sample].location_id.is_empty() {
                    samples[sample].location_id = self.stack_locations(stack);
                    samples[sample].label = self.labels(stack);
                }
                let total = &mut samples[sample].value[position];
                *total = total.saturating_add(i64::try_from(value).unwrap_or(i64::MAX));
            }
        }
        samples
    }

    /// `comm`, `pid` and `tid`, as perf_data_converter labels samples;
    /// none for a histogram recording's, which keep no threads. A job's
    /// samples also carry their `rank` and `host`.
    fn labels(&mut self, stack: &LocatedStack) -> Vec<proto::Label> {
        let mut labels = self.rank_labels(stack.rank);
        if stack.pid == 0 && stack.tid == 0 {
            return labels;
        }
        let command = &self.stacks.commands[stack.command.index()];
        if !command.is_empty() {
            labels.push(proto::Label {
                key: self.strings.get("comm"),
                str: self.strings.get(command),
                ..proto::Label::default()
            });
        }
        for (key, value) in [("pid", stack.pid), ("tid", stack.tid)] {
            labels.push(proto::Label {
                key: self.strings.get(key),
                num: i64::from(value),
                ..proto::Label::default()
            });
        }
        labels
    }

    /// `rank` and `host` of a job's recording; none for one recording.
    /// Both are strings: pprof drops a number label of 0, rank 0's.
    fn rank_labels(&mut self, rank: u32) -> Vec<proto::Label> {
        let stacks = self.stacks;
        let Some(info) = stacks.ranks.iter().find(|r| r.rank == rank) else {
            return Vec::new();
        };
        vec![
            proto::Label {
                key: self.strings.get("rank"),
                str: self.strings.get(&rank.to_string()),
                ..proto::Label::default()
            },
            proto::Label {
                key: self.strings.get("host"),
                str: self.strings.get(&info.host),
                ..proto::Label::default()
            },
        ]
    }

    /// The pprof location ids of a stack, leaf first.
    fn stack_locations(&mut self, stack: &LocatedStack) -> Vec<u64> {
        (stack.locations.iter())
            .map(|&location| {
                let at = (stack.rank, stack.pid, location);
                if let Some(&id) = self.locations.get(&at) {
                    return id;
                }
                let (mapping, address) = self.place(stack.rank, stack.pid, location);
                let key = (mapping, address, location);
                let id = *self.location_ids.entry(key).or_insert_with(|| {
                    self.location_table.push(key);
                    self.location_table.len() as u64
                });
                self.locations.insert(at, id);
                id
            })
            .collect()
    }

    /// The mapping and address of location `id` in process `pid` of
    /// `rank`.
    fn place(&self, rank: u32, pid: u32, id: u32) -> (MappingKey, Avma) {
        let location = self.located.locations[id as usize].location;
        if let Some((range, address)) = self.located.address(rank, pid, location) {
            let range = MappingKey::Range {
                start: range.start.0,
                end: range.end.0,
                offset: range.offset.0,
                module: range.module,
            };
            return (range, address);
        }
        match location {
            Location::Module { module, offset } => (MappingKey::Offsets(module), Avma(offset.0)),
            Location::Kernel { address } => (MappingKey::Kernel, address),
            Location::Unmapped => (MappingKey::Unmapped, Avma(0)),
        }
    }

    /// The mappings the locations lie in, the program's first (pprof names
    /// the profile's binary after the first), and their ids.
    fn mappings(&mut self) -> (Vec<proto::Mapping>, FxHashMap<MappingKey, u64>) {
        let mut extents: FxHashMap<MappingKey, (u64, u64)> = FxHashMap::default();
        for &(mapping, address, _) in &self.location_table {
            if mapping == MappingKey::Unmapped {
                continue;
            }
            let (low, high) = extents.entry(mapping).or_insert((u64::MAX, 0));
            *low = (*low).min(address.0);
            *high = (*high).max(address.0.saturating_add(1));
        }
        let program = self.stacks.program.as_deref();
        let path = |key: &MappingKey| match key {
            MappingKey::Range { module, .. } | MappingKey::Offsets(module) => {
                self.stacks.modules.get(*module).path.as_str()
            }
            MappingKey::Kernel => "[kernel.kallsyms]",
            MappingKey::Unmapped => "",
        };
        // The program's text is listed even without samples in it, to name
        // the profile's binary.
        let program_text = (self.located.mappings.values().flatten())
            .filter(|m| Some(self.stacks.modules.get(m.module).path.as_str()) == program)
            .min_by_key(|m| (m.offset, m.start));
        if let Some(m) = program_text {
            let key = MappingKey::Range {
                start: m.start.0,
                end: m.end.0,
                offset: m.offset.0,
                module: m.module,
            };
            extents.entry(key).or_insert((m.start.0, m.end.0));
        }
        let mut keys: Vec<MappingKey> = extents.keys().copied().collect();
        keys.sort_by_key(|key| (program != Some(path(key)), path(key).to_owned(), *key));
        let ids: FxHashMap<MappingKey, u64> = (keys.iter().enumerate())
            .map(|(i, &k)| (k, i as u64 + 1))
            .collect();
        let mappings = (keys.iter())
            .map(|key| {
                let (low, high) = extents[key];
                let (start, limit, file_offset, module) = match *key {
                    MappingKey::Range {
                        start,
                        end,
                        offset,
                        module,
                    } => (start, end, offset, Some(module)),
                    MappingKey::Offsets(module) => (low, high, low, Some(module)),
                    MappingKey::Kernel | MappingKey::Unmapped => (low, high, 0, None),
                };
                let build_id = module
                    .and_then(|m| self.stacks.modules.get(m).build_id.as_ref())
                    .map(|id| id.to_string())
                    .unwrap_or_default();
                proto::Mapping {
                    id: ids[key],
                    memory_start: start,
                    memory_limit: limit,
                    file_offset,
                    filename: self.strings.get(path(key)),
                    build_id: self.strings.get(&build_id),
                    // Named here: pprof must not name it again from the
                    // files, which may have changed since.
                    has_functions: true,
                    has_filenames: true,
                    has_line_numbers: true,
                    has_inline_frames: true,
                }
            })
            .collect();
        (mappings, ids)
    }

    /// The locations, each with its inline chain innermost first.
    fn pprof_locations(
        &mut self,
        mapping_ids: &FxHashMap<MappingKey, u64>,
    ) -> Vec<proto::Location> {
        let table = std::mem::take(&mut self.location_table);
        let located = self.located;
        (table.iter().enumerate())
            .map(|(index, &(mapping, address, location))| {
                let frames = &located.locations[location as usize];
                let line = (frames.functions.iter().zip(&frames.lines))
                    .map(|(&function, &line)| proto::Line {
                        function_id: self.function_id(function),
                        line: i64::from(line),
                        column: 0,
                    })
                    .collect();
                proto::Location {
                    id: index as u64 + 1,
                    mapping_id: mapping_ids.get(&mapping).copied().unwrap_or(0),
                    address: address.0,
                    line,
                    is_folded: false,
                }
            })
            .collect()
    }

    fn function_id(&mut self, function: FunctionId) -> u64 {
        let slot = function.index();
        if self.function_ids[slot] == 0 {
            let stacks = self.stacks;
            let (key, detail) = (&stacks.functions[slot], &stacks.details[slot]);
            let name = self.strings.get(&key.name);
            let system_name = match (&detail.linkage_name, key.module) {
                (Some(linkage), ModuleKey::Module(_)) => self.strings.get(linkage),
                _ => name,
            };
            let id = self.functions.len() as u64 + 1;
            self.functions.push(proto::Function {
                id,
                name,
                system_name,
                filename: self.strings.get(detail.file.as_deref().unwrap_or("")),
                start_line: 0,
            });
            self.function_ids[slot] = id;
        }
        self.function_ids[slot]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use profiler_model::Sampling;

    fn event(name: &str, unit: &str, leader: Option<u16>) -> EventDescription {
        EventDescription {
            name: name.into(),
            perf_type: 1,
            config: 0,
            config1: 0,
            config2: 0,
            sampling: Sampling::Period(1),
            unit: unit.into(),
            user: true,
            kernel: false,
            leader,
            role: EventRole::Sampled,
        }
    }

    #[test]
    fn value_types_are_named_as_go_names_them_and_stay_distinct() {
        let events = [
            event("cpu-clock", "ns", None),
            event("page-faults", "events", None),
            event("task-clock", "ns", None),
            event("context-switches", "events", Some(2)),
        ];
        let named: Vec<(String, &str)> = columns(&events, &[true; 4])
            .into_iter()
            .map(|(_, name, unit)| (name, unit))
            .collect();
        let expected = [
            ("samples", "count"),
            ("cpu", "nanoseconds"),
            ("page-faults_samples", "count"),
            ("page-faults", "count"),
            ("task-clock_samples", "count"),
            ("task-clock", "nanoseconds"),
            ("context-switches", "count"),
        ];
        assert_eq!(named, expected.map(|(n, u)| (n.to_owned(), u)));
        let only_faults = columns(&events, &[false, true, false, false]);
        assert_eq!(only_faults[0].1, "samples");
        assert_eq!(only_faults[1].1, "page-faults");
    }

    #[test]
    fn the_string_table_starts_empty_and_keeps_each_string_once() {
        let mut strings = Strings::new();
        assert_eq!(strings.get("main"), 1);
        assert_eq!(strings.get(""), 0);
        assert_eq!(strings.get("main"), 1);
        assert_eq!(strings.table, ["", "main"]);
    }
}
