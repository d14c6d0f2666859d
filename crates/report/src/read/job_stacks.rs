//! A job's samples as one profile: each rank's recording counted on its
//! own (ranks side by side, on every CPU), their modules made one table
//! (a binary every rank ran is one module, found by its build-id wherever
//! each rank had it), the locations of all ranks named once, then each
//! rank's stacks kept with its rank.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use profiler_model::{
    BuildId, Location, ModuleId, ModuleTable, Recording, StackUnwinder, Symbolizer,
};

use crate::error::ReportError;
use crate::read::events::select_events;
use crate::read::job::{Job, in_parallel};
use crate::read::located::{Located, LocatedStack};
use crate::read::naming::{Place, name_locations};
use crate::read::samples::{SampleCounts, count_samples};
use crate::read::stacks::{
    NamedStack, PlaceId, StackOptions, StackProfile, assemble, check_filter, keep,
};
use crate::read::thread_stack::CommandId;

/// Reads the samples of every rank of `job` that `options` selects, as
/// [`read_stacks`](crate::read_stacks) reads one recording's; each stack
/// keeps its rank.
pub fn read_job_stacks(
    job: &Job,
    symbolizer: &dyn Symbolizer,
    unwinder: &dyn StackUnwinder,
    options: &StackOptions,
) -> Result<StackProfile, ReportError> {
    if options.timeline {
        return Err(ReportError::Job(
            "samples in time order are exported one recording at a time: give one -i for each \
             rank"
                .into(),
        ));
    }
    let header = &job.recording().header;
    let wanted = select_events(&header.events, options.event.as_deref())?;
    let keep = crate::read::samples::Keep {
        one_pass: true,
        ..keep(options)
    };
    let recordings: Vec<(u32, &Recording)> = job.ranks().collect();
    let counted = in_parallel(&recordings, |(_, recording)| {
        count_samples(recording, &wanted, &options.filter, unwinder, keep)
    });
    let mut counts: Vec<SampleCounts> = counted.into_iter().collect::<Result<_, _>>()?;
    if counts.iter().all(|c| c.stacks.is_empty()) {
        let mut excluded = BTreeMap::new();
        for c in &counts {
            excluded.extend(c.excluded.iter().map(|(k, v)| (*k, v.clone())));
        }
        check_filter(&options.filter, &excluded)?;
    }
    let modules = one_module_table(&mut counts);
    let names = name_locations(
        &modules,
        counts.iter().flat_map(|c| c.stacks.locations()),
        symbolizer,
        !options.without_inline_frames,
        options.places,
        options.locations,
    );
    let parts: Vec<(u32, StackProfile)> = (recordings.iter().zip(counts))
        .map(|((rank, _), counts)| {
            let part = assemble(counts, &names, options, header, wanted.clone(), None);
            (*rank, part)
        })
        .collect();
    let mut profile = merge(parts, modules);
    profile.program = header.program.clone();
    profile.ranks = job.rank_infos();
    Ok(profile)
}

/// Makes the modules of every rank's counts one table, renumbering their
/// locations into it. A module with a build-id is one module whatever
/// path each rank mapped it from: it is named once.
fn one_module_table(counts: &mut [SampleCounts]) -> ModuleTable {
    let mut table = ModuleTable::default();
    let mut by_build: FxHashMap<BuildId, ModuleId> = FxHashMap::default();
    for counts in counts.iter_mut() {
        let own = std::mem::take(&mut counts.modules);
        let ids: Vec<ModuleId> = (own.iter())
            .map(|(_, module)| {
                let build = module.build_id.as_ref().filter(|_| module.pid.is_none());
                if let Some(&id) = build.and_then(|build| by_build.get(build)) {
                    return id;
                }
                let id = table.intern(&module.path, module.build_id.as_ref(), module.pid);
                if let Some(build) = build {
                    by_build.insert(build.clone(), id);
                }
                id
            })
            .collect();
        counts.stacks.renumber_modules(&ids);
        for range in counts.mappings.values_mut().flatten() {
            range.module = ids
                .get(range.module as usize)
                .copied()
                .unwrap_or(range.module);
        }
    }
    table
}

/// The ranks' profiles (whose functions were named alike) as one, each
/// stack with its rank.
fn merge(parts: Vec<(u32, StackProfile)>, modules: ModuleTable) -> StackProfile {
    let mut merged = StackProfile::for_job(modules);
    let Some((_, first)) = parts.first() else {
        return merged;
    };
    merged.functions = first.functions.clone();
    merged.details = first.details.clone();
    merged.wanted = first.wanted.clone();
    merged.roles = first.roles.clone();
    merged.event_names = first.event_names.clone();
    merged.filter = first.filter.clone();
    merged.problems = first.problems.clone();
    merged.events = vec![Vec::new(); first.events.len()];
    merged.timeline = vec![Vec::new(); first.events.len()];
    merged.places = one_place_list(&parts);
    let mut command_ids: FxHashMap<String, CommandId> = FxHashMap::default();
    let mut located = parts
        .iter()
        .any(|(_, p)| p.located.is_some())
        .then(JobLocated::default);
    for (rank, part) in parts {
        let commands: Vec<CommandId> = (part.commands.iter())
            .map(|name| {
                *command_ids.entry(name.clone()).or_insert_with(|| {
                    merged.commands.push(name.clone());
                    CommandId::new(merged.commands.len() - 1)
                })
            })
            .collect();
        let places: Vec<PlaceId> = (part.places.iter())
            .map(|(location, _)| {
                let at = merged.places.partition_point(|(l, _)| l < location);
                PlaceId::new(at)
            })
            .collect();
        for (mine, stacks) in merged.events.iter_mut().zip(part.events) {
            mine.extend(stacks.into_iter().map(|stack| NamedStack {
                rank,
                command: commands[stack.command.index()],
                place: stack.place.map(|p| places[p.index()]),
                ..stack
            }));
        }
        if let (Some(located), Some(part_located)) = (&mut located, part.located) {
            located.add(rank, part_located, &commands);
        }
        merged.threads.extend(part.threads);
    }
    merged.located = located.map(|l| l.located);
    // The busiest first, as one recording's: ties in rank order.
    merged.threads.sort_by_key(|t| std::cmp::Reverse(t.samples));
    merged.index_threads();
    merged
}

/// Every rank's sampled places, each once, in the order of their
/// locations.
fn one_place_list(parts: &[(u32, StackProfile)]) -> Vec<(Location, Place)> {
    let mut places: BTreeMap<Location, Place> = BTreeMap::new();
    for (_, part) in parts {
        for (location, place) in &part.places {
            places.entry(*location).or_insert_with(|| place.clone());
        }
    }
    places.into_iter().collect()
}

/// The ranks' located stacks gathered: each location once.
#[derive(Default)]
struct JobLocated {
    located: Located,
    ids: FxHashMap<Location, u32>,
}

impl JobLocated {
    fn add(&mut self, rank: u32, part: Located, commands: &[CommandId]) {
        let ids: Vec<u32> = (part.locations.into_iter())
            .map(|frames| {
                *self.ids.entry(frames.location).or_insert_with(|| {
                    self.located.locations.push(frames);
                    self.located.locations.len() as u32 - 1
                })
            })
            .collect();
        let events = &mut self.located.stacks;
        if events.len() < part.stacks.len() {
            events.resize(part.stacks.len(), Vec::new());
        }
        for (mine, stacks) in events.iter_mut().zip(part.stacks) {
            mine.extend(stacks.into_iter().map(|stack| LocatedStack {
                rank,
                command: commands[stack.command.index()],
                locations: stack.locations.iter().map(|&l| ids[l as usize]).collect(),
                ..stack
            }));
        }
        for ((_, pid), ranges) in part.mappings {
            self.located.mappings.insert((rank, pid), ranges);
        }
    }
}
