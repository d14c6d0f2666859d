//! `profiler script`: every sample on its own, in time order, with what
//! `perf script` prints of it: command, process and thread, CPU, time,
//! period, event, and the sampled code (its address, function and offset,
//! and module), or its whole stack where stacks were recorded. Made for
//! awk, FlameGraph's stackcollapse-perf.pl and other readers of perf
//! script's output.
//!
//! Each place in the code is named once, and its lines kept as text, so
//! that printing a sample copies bytes rather than looking anything up.

use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::io::Write;

use profiler_model::{Location, ModuleTable, Recording, StackUnwinder, Symbolizer};

use crate::error::ReportError;
use crate::read::events::select_events;
use crate::read::naming::{FunctionKey, ModuleKey, Names, Places, name_locations};
use crate::read::samples::{Keep, SampleFilter, TaskDetail, count_samples};
use crate::read::stacks::nothing_matches;
use crate::read::timeline::TimedSample;

/// What `script` prints.
#[derive(Clone, Debug, Default)]
pub struct ScriptOptions {
    /// Only this event (by name or index); `None`: every event.
    pub event: Option<String>,
    pub filter: SampleFilter,
    /// Leave out the frames of inlined functions.
    pub no_inline: bool,
    /// Keep this many frames of each stack at most, from the leaf.
    pub max_stack: Option<usize>,
    /// Print each sample's own line alone, without its stack.
    pub hide_stacks: bool,
}

/// Every sample of a recording, named, in time order.
pub struct Script {
    /// With stacks: the stack under each sample's line; without: the
    /// sampled code on it.
    pub(crate) stacks_recorded: bool,
    /// The time samples are counted from (the recording's first sample).
    pub(crate) start: u64,
    /// Each sample, and the event it is of (indexed like `events`).
    pub(crate) samples: Vec<(TimedSample, usize)>,
    pub(crate) events: Vec<String>,
    pub(crate) commands: Vec<String>,
    /// Per stack of the samples: its process, thread, command, and its
    /// frames as indices into `places`, leaf first.
    pub(crate) stacks: Vec<ScriptStack>,
    pub(crate) places: Vec<PlaceText>,
}

pub(crate) struct ScriptStack {
    pub pid: u32,
    pub tid: u32,
    pub command: usize,
    pub frames: Box<[u32]>,
}

/// What `script` prints of a place in the code.
pub(crate) struct PlaceText {
    /// Its lines under a sample: `\t   ADDRESS function+0xOFFSET (module)`,
    /// each inlined function first on a line of its own; empty where the
    /// address is not known (code outside any mapping): then the line is
    /// made with the sample's address.
    pub lines: Vec<u8>,
    /// What follows the address on a sample's own line, and on a line of
    /// code outside any mapping: ` function+0xOFFSET (module)\n`.
    pub tail: Vec<u8>,
}

/// Reads and names every sample of `recording` that `options` keeps.
pub fn script(
    recording: &Recording,
    symbolizer: &dyn Symbolizer,
    unwinder: &dyn StackUnwinder,
    options: &ScriptOptions,
) -> Result<Script, ReportError> {
    let header = &recording.header;
    if header.histogram.is_some() {
        return Err(ReportError::Options(
            "a histogram recording keeps buckets, not samples: there is nothing to list one by \
             one; `profiler hist` shows its buckets"
                .into(),
        ));
    }
    let mut wanted = select_events(&header.events, options.event.as_deref())?;
    // Group members are read with their leader's samples, not sampled.
    for (wanted, event) in wanted.iter_mut().zip(&header.events) {
        *wanted &= event.leader.is_none();
    }
    let keep = Keep {
        timeline: true,
        mappings: false,
        tasks: TaskDetail::Threads,
        max_stack: options.max_stack,
        states: false,
        one_pass: false,
    };
    let counts = count_samples(recording, &wanted, &options.filter, unwinder, keep)?;
    let timeline = counts.timeline.unwrap_or_default();
    let filter = &options.filter;
    if !filter.is_empty() && timeline.samples.iter().all(Vec::is_empty) {
        return Err(nothing_matches(recording, filter, &counts.excluded)?);
    }
    let locations = timeline.stacks.iter().flat_map(|s| s.frames.iter());
    let names = name_locations(
        &counts.modules,
        locations,
        symbolizer,
        !options.no_inline,
        Places::Addresses,
        false,
    );
    let mut texts = PlaceTexts {
        modules: &counts.modules,
        names: &names,
        ids: FxHashMap::default(),
        places: Vec::new(),
    };
    let stacks = (timeline.stacks.iter())
        .map(|stack| ScriptStack {
            pid: stack.pid,
            tid: stack.tid,
            command: stack.command.index(),
            frames: stack.frames.iter().map(|l| texts.id(*l)).collect(),
        })
        .collect();
    let mut samples: Vec<(TimedSample, usize)> = (timeline.samples.into_iter().enumerate())
        .filter(|(event, _)| wanted[*event])
        .flat_map(|(event, samples)| samples.into_iter().map(move |s| (s, event)))
        .collect();
    samples.sort_by_key(|(sample, _)| sample.time);
    Ok(Script {
        stacks_recorded: header.call_graph.is_some() && !options.hide_stacks,
        start: counts.span.map_or(0, |(first, _)| first),
        samples,
        events: header.events.iter().map(|e| e.name.clone()).collect(),
        commands: (counts.commands.iter())
            .map(|command| printable(command).into_owned())
            .collect(),
        stacks,
        places: texts.places,
    })
}

/// The text of each place, made once.
struct PlaceTexts<'a> {
    modules: &'a ModuleTable,
    names: &'a Names,
    ids: FxHashMap<Location, u32>,
    places: Vec<PlaceText>,
}

impl PlaceTexts<'_> {
    fn id(&mut self, location: Location) -> u32 {
        if let Some(&id) = self.ids.get(&location) {
            return id;
        }
        let id = self.places.len() as u32;
        let text = self.text(location);
        self.places.push(text);
        self.ids.insert(location, id);
        id
    }

    fn text(&self, location: Location) -> PlaceText {
        let functions = self.names.functions();
        let frames = self.names.frames(&location);
        let Some((holder, inlined)) = frames.split_last() else {
            return PlaceText {
                lines: Vec::new(),
                tail: b" [unknown] ([unknown])\n".to_vec(),
            };
        };
        let holder = &functions[holder.index()];
        let (address, module) = match location {
            // As perf script prints a stack: addresses in a file as
            // offsets into it.
            Location::Module { module, offset } => {
                (Some(offset.0), self.modules.get(module).path.as_str())
            }
            Location::Kernel { address } => (Some(address.0), "[kernel.kallsyms]"),
            Location::Unmapped => (None, "[unknown]"),
        };
        let offset = self.offset(&location, holder);
        let (name, module) = (printable(&holder.name), printable(module));
        let tail = format!(" {name}{offset} ({module})\n").into_bytes();
        let Some(address) = address else {
            return PlaceText {
                lines: Vec::new(),
                tail,
            };
        };
        let mut lines = Vec::new();
        for function in inlined {
            let name = printable(&functions[function.index()].name);
            let _ = writeln!(lines, "\t{address:16x} {name} (inlined)");
        }
        let _ = write!(lines, "\t{address:16x}");
        lines.extend_from_slice(&tail);
        PlaceText { lines, tail }
    }

    /// `+0xOFFSET` into the function holding `location`'s code, where its
    /// start is known; `+0x0` where the name is the address itself
    /// (`module+0x1139`, code of no known function).
    fn offset(&self, location: &Location, holder: &FunctionKey) -> String {
        let place = self.names.places.get(location);
        match (place, holder.module) {
            (Some(place), ModuleKey::Module(_)) => match (place.function_offset, &place.function) {
                (Some(offset), _) => format!("+{offset:#x}"),
                (None, None) => "+0x0".into(),
                (None, Some(_)) => String::new(),
            },
            _ => String::new(),
        }
    }
}

/// `text` with each control character written as `\xNN`: a command or
/// function name can neither break a sample's line nor drive the terminal.
fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c.is_control() {
            true => shown.push_str(&format!("\\x{:02x}", u32::from(c))),
            false => shown.push(c),
        }
    }
    Cow::Owned(shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_written_out() {
        assert!(matches!(printable("burn_60"), Cow::Borrowed("burn_60")));
        assert_eq!(printable("x\x1b[31my"), "x\\x1b[31my");
        assert_eq!(printable("a\nb\tc\u{7f}\u{9b}"), "a\\x0ab\\x09c\\x7f\\x9b");
        assert_eq!(printable("Größe"), "Größe");
    }
}
