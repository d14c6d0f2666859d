//! `annotate` of an inlined function: it has no code of its own, so the
//! answer is where it was inlined (each function holding a copy, and the
//! line of the call), with the samples of each copy, and the advice to
//! annotate one of those functions.

use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::sync::Arc;

use profiler_model::{Detail, FileOffset, Location, ModuleId, Recording, Symbolizer};

use crate::read::naming::{FunctionId, ModuleKey};
use crate::read::stacks::StackProfile;
use crate::read::weight::total;
use crate::views::annotate_target::plain_name;
use crate::wording::event_phrase;

/// Where an inlined function was inlined, and what each copy weighs.
#[derive(Clone, Debug, PartialEq)]
pub struct InlineSites {
    /// The inlined function.
    pub function: String,
    /// The event counted.
    pub event: String,
    /// Samples in its code, and of the event in all.
    pub samples: u64,
    pub event_samples: u64,
    /// Most samples first.
    pub sites: Vec<InlineSite>,
}

/// One place a function was inlined.
#[derive(Clone, Debug, PartialEq)]
pub struct InlineSite {
    /// The function holding the copy, and its module's short name.
    pub holder: String,
    pub module: String,
    /// The line of the call the copy stands for (in the holder, or in a
    /// function inlined into it).
    pub file: Option<Arc<str>>,
    pub line: Option<u32>,
    pub samples: u64,
    /// Share of the inlined function's samples, in percent.
    pub percent: f64,
}

/// Where the inlined function `symbol` (its name as any view prints it, or
/// a prefix only one inlined function with samples has) was inlined, from
/// `stacks` read from `recording` with inline frames and places, for their
/// first event; `None` if no inlined function with samples is so named.
pub fn inline_sites(
    recording: &Recording,
    stacks: &StackProfile,
    symbol: &str,
    symbolizer: &dyn Symbolizer,
) -> Option<InlineSites> {
    let mut sites = stacks.inline_sites(plain_name(symbol), symbolizer)?;
    let event = stacks.wanted.iter().position(|&w| w)?;
    sites.event = recording.header.events.get(event).map(event_phrase)?;
    Some(sites)
}

/// A copy of an inlined function: the function holding it, its module, and
/// the file and line of the call.
type SiteKey = (String, ModuleId, Option<Arc<str>>, Option<u32>);

impl StackProfile {
    fn inline_sites(&self, symbol: &str, symbolizer: &dyn Symbolizer) -> Option<InlineSites> {
        let event = self.wanted.iter().position(|&w| w)?;
        let stacks = self.events.get(event)?;
        let chosen = self.inlined_named(symbol);
        let &first = chosen.first()?;
        // Samples per sampled location whose code came from it.
        let mut by_location: FxHashMap<Location, u64> = FxHashMap::default();
        for stack in stacks {
            let holder = stack.frames.iter().position(|&f| !self.is_inlined(f));
            let inlined = &stack.frames[..holder.unwrap_or(0)];
            let from_it = inlined.iter().any(|f| chosen.contains(f));
            if let (true, Some(place)) = (from_it, stack.place) {
                *by_location.entry(self.places[place.index()].0).or_default() +=
                    stack.weight.samples;
            }
        }
        let name = self.functions[first.index()].name.clone();
        let mut by_module: BTreeMap<ModuleId, Vec<(FileOffset, u64)>> = BTreeMap::new();
        for (location, samples) in by_location {
            if let Location::Module { module, offset } = location {
                by_module.entry(module).or_default().push((offset, samples));
            }
        }
        let mut sites: FxHashMap<SiteKey, u64> = FxHashMap::default();
        for (module, mut offsets) in by_module {
            offsets.sort_unstable();
            let wanted: Vec<FileOffset> = offsets.iter().map(|(o, _)| *o).collect();
            let answer = symbolizer.symbolize(self.modules.get(module), &wanted, Detail::Frames);
            for (symbol, (_, samples)) in answer.addresses.iter().zip(&offsets) {
                // The outermost copy of the function in the chain, and the
                // frame that called it.
                let Some(at) = symbol
                    .frames
                    .iter()
                    .rposition(|f| f.function.as_deref() == Some(&name))
                else {
                    continue;
                };
                let caller = symbol.frames.get(at + 1);
                let holder = (symbol.function.as_ref())
                    .and_then(|f| f.name.as_deref())
                    .or_else(|| symbol.frames.last()?.function.as_deref())
                    .unwrap_or("??");
                let key = (
                    holder.to_owned(),
                    module,
                    caller.and_then(|f| f.file.clone()),
                    caller.and_then(|f| f.line),
                );
                let count = sites.entry(key).or_default();
                *count = count.saturating_add(*samples);
            }
        }
        let samples = total(sites.values().copied());
        let mut sites: Vec<InlineSite> = sites
            .into_iter()
            .map(|((holder, module, file, line), n)| InlineSite {
                holder,
                module: self.module_names(ModuleKey::Module(module)).0,
                file,
                line,
                samples: n,
                percent: n as f64 * 100.0 / samples.max(1) as f64,
            })
            .collect();
        sites.sort_by(|a, b| {
            (b.samples, &a.holder, &a.module, &a.file, a.line)
                .cmp(&(a.samples, &b.holder, &b.module, &b.file, b.line))
        });
        Some(InlineSites {
            function: name,
            event: String::new(),
            samples,
            event_samples: total(stacks.iter().map(|s| s.weight.samples)),
            sites,
        })
    }

    /// The inlined function with samples named `symbol`, or the only one
    /// whose name starts with it: in every module it was inlined in.
    fn inlined_named(&self, symbol: &str) -> Vec<FunctionId> {
        let mut inlined: Vec<FunctionId> = (self.events.iter().flatten())
            .flat_map(|stack| stack.frames.iter().copied())
            .filter(|&f| self.is_inlined(f))
            .collect();
        inlined.sort_unstable();
        inlined.dedup();
        let name = |f: &FunctionId| self.functions[f.index()].name.as_str();
        let mut names: Vec<&str> = inlined.iter().map(name).collect();
        names.sort_unstable();
        names.dedup();
        let wanted = match names.iter().find(|&&n| n == symbol) {
            Some(exact) => *exact,
            None => match names
                .iter()
                .filter(|n| n.starts_with(symbol))
                .collect::<Vec<_>>()[..]
            {
                [one] => *one,
                _ => return Vec::new(),
            },
        };
        inlined.retain(|f| name(f) == wanted);
        inlined
    }
}
