//! `profiler top`: the sampler records on a thread of its own into the
//! live feed, and the screen (or the snapshots) take its counts every
//! interval, until the user quits, the target ends or an interrupt comes.

use std::io::{self, Write};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::ScopedJoinHandle;
use std::time::{Duration, Instant};

use profiler_model::{CallerSplicer, StackUnwinder};
use profiler_sampler::{RecordOutcome, Recorder, SamplerError};

use crate::code::Code;
use crate::draw::Header;
use crate::error::TuiError;
use crate::feed::LiveFeed;
use crate::intake::Intake;
use crate::screen::Screen;
use crate::screen::event_labels;
use crate::snapshot::write_snapshot;
use crate::terminal::{self, Source};

/// How `top` shows what it samples.
#[derive(Clone, Debug)]
pub struct TopOptions {
    /// How often the counts are taken and shown (`-d`).
    pub interval: Duration,
    /// What is sampled, as the header says it: `all CPUs`, `pid 4242`...
    pub target: String,
    /// Colours allowed (a terminal, and no `NO_COLOR`).
    pub color: bool,
    /// Rows per snapshot in the line-by-line mode.
    pub rows: usize,
}

/// How `top` ended.
#[derive(Debug)]
pub struct TopOutcome {
    /// How the sampling ended.
    pub record: RecordOutcome,
    /// The user quit (rather than the target ending).
    pub quit: bool,
}

/// The sampler's thread and what it delivers.
struct Live<'s> {
    intake: Arc<Mutex<Intake>>,
    /// Until it has ended; then how it ended.
    thread: Option<ScopedJoinHandle<'s, Result<RecordOutcome, SamplerError>>>,
    ended: Option<Result<RecordOutcome, TuiError>>,
    started: Instant,
}

impl Live<'_> {
    /// Whether sampling has ended (for good: its outcome is kept).
    fn has_ended(&mut self) -> bool {
        if self.thread.as_ref().is_some_and(|t| t.is_finished())
            && let Some(thread) = self.thread.take()
        {
            self.ended = Some(join(thread));
        }
        self.ended.is_some()
    }

    /// Stops the sampling (as Ctrl-C would: a launched command gets a
    /// moment, then SIGTERM) and hands back how it ended.
    fn stop(mut self) -> Result<RecordOutcome, TuiError> {
        // The recorder may not have set up its handlers yet: ask until it
        // ends.
        while !self.has_ended() {
            profiler_sampler::interrupt();
            std::thread::sleep(TICK);
        }
        self.ended.unwrap_or(Err(TuiError::SamplerPanicked))
    }
}

impl Source for Live<'_> {
    fn refresh(&mut self, screen: &mut Screen<'_>) -> Result<(), TuiError> {
        let ended = self.has_ended();
        let mut intake = self.intake.lock().unwrap_or_else(PoisonError::into_inner);
        let delivery = screen.take(&mut intake);
        drop(intake);
        screen.add(delivery);
        if !ended {
            screen.header.time = format!("{:.1} s", self.started.elapsed().as_secs_f64());
        }
        if let (Some(Ok(outcome)), None) = (&self.ended, &screen.header.status) {
            screen.header.status = Some(crate::printable::printable(&format!(
                "the target {}",
                outcome.describe()
            )));
        }
        Ok(())
    }

    fn closes(&self) -> bool {
        match &self.ended {
            Some(Ok(outcome)) => outcome.interrupted_by.is_some(),
            Some(Err(_)) => true,
            None => false,
        }
    }
}

fn join(
    thread: ScopedJoinHandle<'_, Result<RecordOutcome, SamplerError>>,
) -> Result<RecordOutcome, TuiError> {
    match thread.join() {
        Ok(outcome) => Ok(outcome?),
        Err(_) => Err(TuiError::SamplerPanicked),
    }
}

/// Samples with `recorder` and shows the hottest functions on the
/// terminal `out` until `q`, or (when the target ends or an interrupt
/// comes) the sampling stops.
pub fn top_screen(
    recorder: Recorder,
    unwinder: Option<&dyn StackUnwinder>,
    code: Code<'_>,
    options: &TopOptions,
    out: impl Write,
) -> Result<TopOutcome, TuiError> {
    let (header, events, stacks) = header_of(&recorder, options);
    let intake = Arc::new(Mutex::new(Intake::new(events)));
    let mut screen = Screen::new(header, code, options.color);
    screen.app.stacks = stacks;
    std::thread::scope(|scope| {
        let mut live = start(scope, recorder, unwinder, &intake);
        let shown = terminal::run(&mut screen, &mut live, options.interval, out);
        let quit = !live.closes();
        let record = live.stop();
        shown?;
        Ok(TopOutcome {
            record: record?,
            quit,
        })
    })
}

/// Samples with `recorder` and writes a snapshot of the hottest functions
/// to `out` every interval, and a last one when sampling stops (the target
/// ended, the duration is up, or an interrupt came).
pub fn top_snapshots(
    recorder: Recorder,
    unwinder: Option<&dyn StackUnwinder>,
    code: Code<'_>,
    options: &TopOptions,
    out: &mut dyn Write,
) -> Result<TopOutcome, TuiError> {
    let (header, events, _) = header_of(&recorder, options);
    let intake = Arc::new(Mutex::new(Intake::new(events)));
    let mut screen = Screen::new(header, code, false);
    // Only the rows printed are sorted (one, so that an empty table still
    // tells no samples from none printed).
    screen.rows = options.rows.max(1);
    std::thread::scope(|scope| {
        let mut live = start(scope, recorder, unwinder, &intake);
        let mut next = Instant::now() + options.interval;
        loop {
            let ended = live.has_ended();
            if !ended {
                std::thread::sleep(next.saturating_duration_since(Instant::now()).min(TICK));
                if Instant::now() < next {
                    continue;
                }
                next += options.interval;
            }
            live.refresh(&mut screen)?;
            if let Err(error) = write_snapshots(&mut screen, options.rows, out) {
                let _ = live.stop();
                return Err(TuiError::Output(error));
            }
            if ended {
                return Ok(TopOutcome {
                    record: live.stop()?,
                    quit: false,
                });
            }
        }
    })
}

/// A snapshot of each event.
fn write_snapshots(screen: &mut Screen<'_>, rows: usize, out: &mut dyn Write) -> io::Result<()> {
    for event in 0..screen.app.events {
        // The refresh built the table of the event shown last.
        if event != screen.app.event {
            screen.app.event = event;
            screen.rebuild();
        }
        let counts = (
            screen.tally.lost.get(event).copied().unwrap_or(0),
            screen.tally.throttled.get(event).copied().unwrap_or(0),
        );
        let header = &screen.header;
        write_snapshot(header, event, &screen.table, counts, rows, out)?;
    }
    Ok(())
}

/// How often the snapshot loop looks whether sampling has ended.
const TICK: Duration = Duration::from_millis(50);

fn start<'s>(
    scope: &'s std::thread::Scope<'s, '_>,
    recorder: Recorder,
    unwinder: Option<&'s dyn StackUnwinder>,
    intake: &Arc<Mutex<Intake>>,
) -> Live<'s> {
    let feed = LiveFeed::new(Arc::clone(intake));
    let thread = scope.spawn(move || match unwinder {
        Some(unwinder) => {
            let mut splicer = CallerSplicer::new(feed, unwinder);
            let outcome = recorder.run(&mut splicer)?;
            splicer
                .finish()
                .map_err(|error| SamplerError::Sink { error })?;
            Ok(outcome)
        }
        None => {
            let mut feed = feed;
            recorder.run(&mut feed)
        }
    });
    Live {
        intake: Arc::clone(intake),
        thread: Some(thread),
        ended: None,
        started: Instant::now(),
    }
}

/// The header for `recorder`'s events, how many there are, and whether
/// stacks are sampled.
fn header_of(recorder: &Recorder, options: &TopOptions) -> (Header, usize, bool) {
    let recording = recorder.header();
    let events = event_labels(&recording.events);
    let count = events.len().max(1);
    let header = Header {
        title: "profiler top".into(),
        target: crate::printable::printable(&options.target),
        events,
        time: "0.0 s".into(),
        status: None,
    };
    (header, count, recording.call_graph.is_some())
}
