//! Stacks as the addresses they were sampled at, for exports that list
//! addresses (pprof): each distinct location once, with the functions of its
//! inline chain and their source lines, and the mappings of each process,
//! which turn a location back into the address it had in its process.

use rustc_hash::FxHashMap;

use profiler_model::{Avma, Location, MappedRange};

use crate::read::naming::{FunctionId, Names};
use crate::read::thread_stack::{CommandId, ThreadStack};
use crate::read::weight::Weight;

/// A location and what is there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LocatedFrames {
    pub location: Location,
    /// The profile's functions, innermost first: the inlined functions,
    /// then the one holding the code.
    pub functions: Box<[FunctionId]>,
    /// The source line in each of `functions` (0 where unknown).
    pub lines: Box<[u32]>,
}

/// A sampled stack of locations in one thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LocatedStack {
    /// The rank of the job whose recording holds it (0 when one recording
    /// is read).
    pub rank: u32,
    pub pid: u32,
    pub tid: u32,
    /// The command name the samples were taken under.
    pub command: CommandId,
    /// Indices into [`Located::locations`], leaf first.
    pub locations: Box<[u32]>,
    pub weight: Weight,
}

/// A recording's stacks by location.
#[derive(Debug, Default)]
pub(crate) struct Located {
    pub locations: Vec<LocatedFrames>,
    /// Per event (indexed like the header's events), by thread and
    /// locations.
    pub stacks: Vec<Vec<LocatedStack>>,
    /// The executable mappings of each process with samples, by rank and
    /// pid.
    pub mappings: FxHashMap<(u32, u32), Vec<MappedRange>>,
}

impl Located {
    pub(crate) fn new(
        by_stack: &[FxHashMap<ThreadStack, Weight>],
        names: &Names,
        mappings: FxHashMap<u32, Vec<MappedRange>>,
    ) -> Located {
        let mut located = Located {
            mappings: (mappings.into_iter())
                .map(|(pid, ranges)| ((0, pid), ranges))
                .collect(),
            ..Located::default()
        };
        let mut ids: FxHashMap<Location, u32> = FxHashMap::default();
        for stacks in by_stack {
            // In a fixed order, so that locations are numbered alike in
            // every run.
            let mut sorted: Vec<(&ThreadStack, &Weight)> = stacks.iter().collect();
            sorted.sort_by(|(a, _), (b, _)| {
                (a.pid, a.tid, a.command, &a.frames).cmp(&(b.pid, b.tid, b.command, &b.frames))
            });
            let event: Vec<LocatedStack> = (sorted.into_iter())
                .map(|(stack, weight)| {
                    let locations = (stack.frames.iter())
                        .map(|&location| {
                            *ids.entry(location).or_insert_with(|| {
                                located.locations.push(frames_at(location, names));
                                located.locations.len() as u32 - 1
                            })
                        })
                        .collect();
                    LocatedStack {
                        rank: 0,
                        pid: stack.pid,
                        tid: stack.tid,
                        command: stack.command,
                        locations,
                        weight: *weight,
                    }
                })
                .collect();
            located.stacks.push(event);
        }
        located
    }

    /// The mapping `location` lay in, in process `pid` of `rank`, and its
    /// address there; `None` where the process's mappings do not hold it
    /// (a histogram recording keeps no processes).
    pub(crate) fn address(
        &self,
        rank: u32,
        pid: u32,
        location: Location,
    ) -> Option<(&MappedRange, Avma)> {
        let Location::Module { module, offset } = location else {
            return None;
        };
        let mappings = self.mappings.get(&(rank, pid))?;
        mappings.iter().find_map(|m| {
            let size = m.end.0 - m.start.0;
            let within = offset.0.checked_sub(m.offset.0).filter(|&d| d < size);
            match (m.module == module, within) {
                (true, Some(delta)) => Some((m, Avma(m.start.0 + delta))),
                _ => None,
            }
        })
    }
}

fn frames_at(location: Location, names: &Names) -> LocatedFrames {
    let functions: Box<[FunctionId]> = names.frames(&location).into();
    let lines = match names.lines(&location) {
        Some(lines) => lines.into(),
        None => vec![0; functions.len()].into(),
    };
    LocatedFrames {
        location,
        functions,
        lines,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use profiler_model::FileOffset;

    #[test]
    fn a_location_is_found_again_at_its_address_in_its_process() {
        let range = |start, offset, module| MappedRange {
            start: Avma(start),
            end: Avma(start + 0x1000),
            offset: FileOffset(offset),
            module,
        };
        let located = Located {
            mappings: [(
                (0, 7),
                vec![range(0x40_0000, 0, 0), range(0x40_1000, 0x1000, 0)],
            )]
            .into_iter()
            .collect(),
            ..Located::default()
        };
        let at = |pid, offset| {
            let location = Location::Module {
                module: 0,
                offset: FileOffset(offset),
            };
            located.address(0, pid, location).map(|(m, a)| (m.start, a))
        };
        assert_eq!(at(7, 0x1234), Some((Avma(0x40_1000), Avma(0x40_1234))));
        assert_eq!(at(7, 0x234), Some((Avma(0x40_0000), Avma(0x40_0234))));
        assert_eq!(at(7, 0x2000), None);
        assert_eq!(at(8, 0x1234), None);
    }
}
