//! The flat profile: per event, the functions (or modules) sorted by the
//! share of the event they account for.

use std::collections::HashMap;

use profiler_model::{
    EventDescription, EventStats, HistogramSettings, HistogramTotals, Recording, RecordingHeader,
    Symbolizer,
};

use crate::error::ReportError;
use crate::events::select_events;
use crate::naming::{FunctionKey, ModuleKey, name_locations};
use crate::samples::{Weight, count_samples};

/// What the rows of a text report are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SortKey {
    /// One row per function (the default).
    #[default]
    Symbol,
    /// One row per module.
    Module,
}

/// Choices for [`flat_profile`].
#[derive(Clone, Debug, Default)]
pub struct ReportOptions {
    /// Only this event (by name or index); `None` reports every event.
    pub event: Option<String>,
    pub sort: SortKey,
    /// Rows below this percentage of their event are left out.
    pub percent_limit: f64,
    /// Count code inlined into a function as that function's, rather than
    /// as the inlined function's (`--no-inline`).
    pub fold_inline: bool,
}

/// A flat profile of a recording.
#[derive(Clone, Debug)]
pub struct FlatProfile {
    pub header: RecordingHeader,
    pub duration_ns: u64,
    /// How the profiled command ended.
    pub outcome: String,
    pub processes: u64,
    pub thread_count: u64,
    pub events: Vec<EventProfile>,
    /// Why some modules' code is unnamed.
    pub problems: Vec<String>,
    /// Samples per thread, all reported events together, most first
    /// (empty for histogram recordings, which keep no threads).
    pub threads: Vec<ThreadRow>,
    /// For a histogram recording: its settings, and per event what became
    /// of the samples (those outside the histograms are not in the rows).
    pub histogram: Option<(HistogramSettings, Vec<HistogramTotals>)>,
    pub sort: SortKey,
}

/// The rows of one event.
#[derive(Clone, Debug)]
pub struct EventProfile {
    pub description: EventDescription,
    pub stats: EventStats,
    /// Functions by share of the event, most first.
    pub functions: Vec<FunctionRow>,
    /// Modules by share of the event, most first.
    pub modules: Vec<ModuleRow>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FunctionRow {
    pub name: String,
    /// The module's short name (file name).
    pub module: String,
    pub weight: Weight,
    /// Share of the event's total period, in percent.
    pub percent: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ModuleRow {
    pub module: String,
    /// The module's path, or its bracketed name.
    pub path: String,
    pub weight: Weight,
    pub percent: f64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadRow {
    pub pid: u32,
    pub tid: u32,
    pub name: String,
    pub samples: u64,
}

/// Builds the flat profile of `recording`, naming code with `symbolizer`.
/// Shares are of each event's total period (the events the samples stand
/// for), as `perf report` computes its overhead.
pub fn flat_profile(
    recording: &Recording,
    symbolizer: &dyn Symbolizer,
    options: &ReportOptions,
) -> Result<FlatProfile, ReportError> {
    let events = &recording.header.events;
    let wanted = select_events(events, options.event.as_deref())?;
    let counts = count_samples(recording, &wanted)?;
    let locations = counts.by_location.iter().flat_map(|m| m.keys());
    let names = name_locations(&counts.modules, locations, symbolizer, !options.fold_inline);
    let module_names = |key: ModuleKey| -> (String, String) {
        match key {
            ModuleKey::Module(id) => {
                let module = counts.modules.get(id);
                (module.name().to_owned(), module.path.clone())
            }
            ModuleKey::Kernel => ("[kernel]".into(), "[kernel]".into()),
            ModuleKey::Unmapped => ("[unknown]".into(), "[unknown]".into()),
        }
    };

    let mut profiles = Vec::new();
    for (index, description) in events.iter().enumerate().filter(|(i, _)| wanted[*i]) {
        let mut by_function: HashMap<&FunctionKey, Weight> = HashMap::new();
        let mut by_module: HashMap<ModuleKey, Weight> = HashMap::new();
        for (location, weight) in &counts.by_location[index] {
            let key = names.function(location);
            by_function.entry(key).or_default().add(*weight);
            by_module.entry(key.module).or_default().add(*weight);
        }
        let total = by_module.values().map(|w| w.period).sum::<u64>().max(1) as f64;
        let percent = |w: &Weight| w.period as f64 * 100.0 / total;
        let mut functions: Vec<FunctionRow> = by_function
            .into_iter()
            .map(|(key, weight)| FunctionRow {
                name: key.name.clone(),
                module: module_names(key.module).0,
                percent: percent(&weight),
                weight,
            })
            .filter(|row| row.percent >= options.percent_limit)
            .collect();
        functions.sort_by(|a, b| {
            (b.weight.period, b.weight.samples, &a.name, &a.module).cmp(&(
                a.weight.period,
                a.weight.samples,
                &b.name,
                &b.module,
            ))
        });
        let mut modules: Vec<ModuleRow> = by_module
            .into_iter()
            .map(|(key, weight)| {
                let (module, path) = module_names(key);
                ModuleRow {
                    module,
                    path,
                    percent: percent(&weight),
                    weight,
                }
            })
            .filter(|row| row.percent >= options.percent_limit)
            .collect();
        modules.sort_by(|a, b| {
            (b.weight.period, b.weight.samples, &a.path).cmp(&(
                a.weight.period,
                a.weight.samples,
                &b.path,
            ))
        });
        let stats = recording
            .trailer
            .stats
            .events
            .get(index)
            .copied()
            .unwrap_or_default();
        profiles.push(EventProfile {
            description: description.clone(),
            stats,
            functions,
            modules,
        });
    }

    let threads = counts
        .threads
        .into_iter()
        .map(|t| ThreadRow {
            pid: t.pid,
            tid: t.tid,
            name: t.name,
            samples: t.samples,
        })
        .collect();
    let trailer = &recording.trailer;
    Ok(FlatProfile {
        header: recording.header.clone(),
        duration_ns: trailer.duration_ns,
        outcome: trailer.outcome.clone(),
        processes: trailer.stats.processes,
        thread_count: trailer.stats.threads,
        events: profiles,
        problems: names.problems,
        threads,
        histogram: recording.header.histogram.clone().map(|settings| {
            let totals = events
                .iter()
                .enumerate()
                .filter(|(i, _)| wanted[*i])
                .map(|(i, _)| trailer.histogram_totals.get(i).copied().unwrap_or_default())
                .collect();
            (settings, totals)
        }),
        sort: options.sort,
    })
}
