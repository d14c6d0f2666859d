//! `report --tui` (and `top --replay`): the same screen over a recording,
//! its samples put through the same counts, the whole recording or a
//! window of it that `[` and `]` move.

use std::io::Write;
use std::time::Duration;

use profiler_model::{Location, Module, ProcessModel, Record, Recording, Sample};

use crate::code::Code;
use crate::draw::Header;
use crate::error::TuiError;
use crate::feed::{CommandNames, callers};
use crate::intake::{HitKey, Intake, Weight};
use crate::printable::printable;
use crate::screen::{Screen, event_labels};
use crate::terminal::{self, Source};

/// How a recording is shown.
#[derive(Clone, Debug)]
pub struct BrowseOptions {
    /// How long a window `[` and `]` move through is.
    pub window: Duration,
    pub color: bool,
}

/// A recording and the window of it shown.
struct Replay<'r> {
    recording: &'r Recording,
    model: ProcessModel,
    modules: Vec<Module>,
    names: CommandNames,
    /// The first and last sample's times, in ns.
    span: (u64, u64),
    window_ns: u64,
    /// The window shown: `None` for the whole recording.
    window: Option<u64>,
    loaded: bool,
}

impl<'r> Replay<'r> {
    fn open(recording: &'r Recording, window: Duration) -> Result<Replay<'r>, TuiError> {
        let (model, samples) = recording.replay()?;
        let mut span: Option<(u64, u64)> = None;
        for sample in samples {
            let time = sample?.time;
            span = Some(span.map_or((time, time), |(a, b)| (a.min(time), b.max(time))));
        }
        let modules = model.modules().iter().map(|(_, m)| m.clone()).collect();
        Ok(Replay {
            recording,
            model,
            modules,
            names: CommandNames::default(),
            span: span.unwrap_or((0, 0)),
            window_ns: (window.as_nanos() as u64).max(1),
            window: None,
            loaded: false,
        })
    }

    /// How many windows the recording spans.
    fn windows(&self) -> u64 {
        (self.span.1 - self.span.0) / self.window_ns + 1
    }

    /// The times shown: `start..end` in ns.
    fn range(&self) -> (u64, u64) {
        match self.window {
            None => (self.span.0, self.span.1.saturating_add(1)),
            Some(index) => {
                let start = self.span.0 + index * self.window_ns;
                (start, start.saturating_add(self.window_ns))
            }
        }
    }

    /// Counts the samples of the window into a fresh intake.
    fn load(&mut self, screen: &mut Screen<'_>) -> Result<(), TuiError> {
        let events = self.recording.header.events.len();
        let mut intake = Intake::new(events);
        intake.modules = self.modules.clone();
        intake.commands = screen.commands.clone();
        let (start, end) = self.range();
        let mut stack = Vec::new();
        for record in self.recording.records()? {
            match record? {
                Record::Sample(sample) if (start..end).contains(&sample.time) => {
                    self.count(&sample, &mut intake, &mut stack);
                }
                Record::Lost(lost) if (start..end).contains(&lost.time) => {
                    if let Some(n) = intake.lost.get_mut(lost.event as usize) {
                        *n = n.saturating_add(lost.count);
                    }
                }
                _ => {}
            }
        }
        screen.tally.zero();
        let delivery = screen.take(&mut intake);
        screen.add(delivery);
        let seconds = |ns: u64| (ns - self.span.0) as f64 / 1e9;
        let whole = seconds(self.span.1);
        screen.header.time = match self.window {
            None => format!("all {whole:.1} s"),
            Some(_) => format!(
                "{:.1}-{:.1} s of {whole:.1} s",
                seconds(start),
                seconds(end.min(self.span.1)),
            ),
        };
        Ok(())
    }

    fn count(&mut self, sample: &Sample, intake: &mut Intake, stack: &mut Vec<Location>) {
        let name = self
            .model
            .thread_name(sample.tid, sample.time)
            .unwrap_or("-");
        let command = self.names.intern(name, &mut intake.commands);
        let key = HitKey {
            event: sample.event,
            pid: sample.pid,
            command,
            location: self.model.resolve(sample),
        };
        stack.clear();
        let model = &self.model;
        callers(sample, stack, |pid, address| {
            model.resolve_address(pid, address, sample.time)
        });
        let weight = Weight {
            samples: 1,
            period: sample.period,
        };
        intake.hit(key, weight, stack);
    }
}

impl Source for Replay<'_> {
    fn refresh(&mut self, screen: &mut Screen<'_>) -> Result<(), TuiError> {
        if !self.loaded {
            self.loaded = true;
            self.load(screen)?;
        }
        Ok(())
    }

    fn window(&mut self, screen: &mut Screen<'_>, step: i32) -> Result<(), TuiError> {
        let last = self.windows() - 1;
        self.window = match (self.window, step > 0) {
            (None, true) => Some(0),
            (None, false) => Some(last),
            (Some(index), true) if index < last => Some(index + 1),
            (Some(index), false) if index > 0 => Some(index - 1),
            // Past either end: the whole recording again.
            (Some(_), _) => None,
        };
        self.load(screen)
    }
}

/// Shows `recording` on the terminal `out` until the user quits.
pub fn browse(
    recording: &Recording,
    code: Code<'_>,
    options: &BrowseOptions,
    out: impl Write,
) -> Result<(), TuiError> {
    let mut replay = Replay::open(recording, options.window)?;
    let events = event_labels(&recording.header.events);
    let header = Header {
        title: "profiler report".into(),
        target: printable(&recording.path().display().to_string()),
        events,
        time: String::new(),
        status: None,
    };
    let mut screen = Screen::new(header, code, options.color);
    screen.app.replay = true;
    screen.name_all = true;
    screen.app.stacks = recording.header.call_graph.is_some();
    // Nothing changes between refreshes but what the keys ask for.
    terminal::run(&mut screen, &mut replay, Duration::from_secs(3600), out)
}
