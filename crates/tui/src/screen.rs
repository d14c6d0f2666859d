//! One screen's whole state: the counts, the names, what the user chose,
//! and the header; refreshed from deliveries, drawn as a [`View`].

use std::collections::BTreeMap;
use std::sync::Arc;

use ratatui::Frame;

use profiler_model::{EventDescription, Location, Sampling, Svma};
use profiler_report::{AnnotateOptions, AnnotateView, SampledCode, annotate_sampled};

use crate::annotate_view::AnnotateScreen;
use crate::app::App;
use crate::code::Code;
use crate::draw::{self, Header, Neighbours, View};
use crate::intake::{Delivery, Intake};
use crate::names::{FunctionId, Names};
use crate::printable::printable;
use crate::table::{Scratch, Table, TableInput, build_table};
use crate::tally::{MAX_EDGES, MAX_PLACES, Tally};

/// How many callers and callees the panel lists.
const NEIGHBOURS: usize = 12;

pub(crate) struct Screen<'c> {
    pub app: App,
    pub header: Header,
    pub names: Names,
    pub tally: Tally,
    pub commands: Vec<Arc<str>>,
    pub code: Code<'c>,
    pub color: bool,
    pub table: Table,
    /// The most rows the table holds (the hottest): the snapshots show a
    /// few, the screen scrolls through all.
    pub rows: usize,
    scratch: Scratch,
    /// The last delivery's maps, emptied, for the next.
    spare: Delivery,
    /// Name every place at once, however long it takes (a recording);
    /// otherwise a module costly to name waits its turn (see `names`).
    pub name_all: bool,
    neighbours: Option<Neighbours>,
}

impl<'c> Screen<'c> {
    pub(crate) fn new(header: Header, code: Code<'c>, color: bool) -> Screen<'c> {
        let events = header.events.len().max(1);
        Screen {
            app: App {
                events,
                ..App::default()
            },
            header,
            names: Names::default(),
            tally: Tally::new(events),
            commands: Vec::new(),
            code,
            color,
            table: Table::default(),
            rows: usize::MAX,
            scratch: Scratch::default(),
            spare: Delivery::default(),
            name_all: false,
            neighbours: None,
        }
    }

    /// Takes what `intake` holds: the modules and commands it has learnt of,
    /// and the interval's counts, to [`add`](Screen::add) once the intake
    /// is let go (naming takes a while, and the sampler waits for it).
    pub(crate) fn take(&mut self, intake: &mut Intake) -> Delivery {
        self.names.add_modules(&intake.modules);
        let known = self.commands.len();
        self.commands
            .extend(intake.commands.iter().skip(known).cloned());
        intake.exchange(std::mem::take(&mut self.spare))
    }

    /// Adds an interval's counts (after decaying the old ones, with decay
    /// on), naming what is new.
    pub(crate) fn add(&mut self, mut delivery: Delivery) {
        if self.app.decay {
            self.tally.decay();
        }
        let symbolizer = self.code.symbolizer;
        let remap = (self.tally).add(&mut delivery, &mut self.names, symbolizer, self.name_all);
        // An interval of a burst does not keep its maps' size for good.
        delivery.hits.shrink_to(MAX_PLACES);
        delivery.edges.shrink_to(MAX_EDGES);
        self.spare = delivery;
        if let (Some(remap), Some(open)) = (remap, &mut self.app.annotate) {
            match remap.get(open.function as usize).copied().flatten() {
                Some(function) => open.function = function,
                None => self.app.annotate = None,
            }
        }
        self.rebuild();
        // An open listing follows the counts, where it was scrolled to.
        if let Some(open) = &self.app.annotate
            && let Ok(mut listing) = self.annotation(open.function)
        {
            listing.scroll = open.scroll;
            self.app.annotate = Some(listing);
        }
    }

    /// Rebuilds the table (and the panel) after the counts or the choices
    /// changed.
    pub(crate) fn rebuild(&mut self) {
        let input = TableInput {
            tally: &self.tally,
            names: &self.names,
            commands: &self.commands,
            event: self.app.event as u16,
            key: self.app.key,
            filter: &self.app.filter,
            limit: self.rows,
        };
        build_table(&input, &mut self.scratch, &mut self.table);
        self.neighbours = self.app.callers.then(|| self.neighbours());
    }

    fn neighbours(&self) -> Neighbours {
        let event = self.app.event as u16;
        let selected = self
            .table
            .rows
            .get(self.app.selected)
            .and_then(|r| r.function);
        let Some(function) = selected else {
            return Neighbours::default();
        };
        let name = |id: FunctionId| self.names.functions[id as usize].name.clone();
        let list = |pick: &dyn Fn(&crate::tally::EdgeKey) -> Option<FunctionId>| {
            let mut found: Vec<(Arc<str>, u64)> = (self.tally.edges.iter())
                .filter(|(edge, _)| edge.event == event)
                .filter_map(|(edge, n)| Some((name(pick(edge)?), *n)))
                .collect();
            found.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            found.truncate(NEIGHBOURS);
            found
        };
        Neighbours {
            callers: list(&|e| (e.callee == function).then_some(e.caller)),
            callees: list(&|e| (e.caller == function).then_some(e.callee)),
        }
    }

    /// Opens the annotated listing of `function`, or says why it cannot.
    pub(crate) fn annotate(&mut self, function: FunctionId) {
        match self.annotation(function) {
            Ok(screen) => self.app.annotate = Some(screen),
            Err(why) => self.app.message = Some(printable(&why)),
        }
    }

    fn annotation(&self, function: FunctionId) -> Result<AnnotateScreen, String> {
        let event = self.app.event as u16;
        let named = &self.names.functions[function as usize];
        let Some(module_id) = named.module else {
            return Err(format!(
                "{} is not code of a file: nothing to list",
                named.name
            ));
        };
        let mut by_offset = BTreeMap::new();
        let mut hottest: Option<(u64, Svma)> = None;
        for (&(place_event, place), &samples) in &self.tally.places {
            let Location::Module { module, offset } = place else {
                continue;
            };
            if place_event != event || module != module_id {
                continue;
            }
            let Some(found) = self.names.get(&place) else {
                continue;
            };
            if found.function != function {
                continue;
            }
            by_offset.insert(offset.0, samples);
            if let Some(svma) = found.svma
                && hottest.is_none_or(|(n, _)| samples > n)
            {
                hottest = Some((samples, svma));
            }
        }
        let Some((_, address)) = hottest else {
            return Err(format!("{}: no address of it is known to list", named.name));
        };
        let module = &self.names.modules[module_id as usize];
        let listing = (self.code.disassembler)
            .listing(module, address, self.code.syntax)
            .map_err(|problem| format!("cannot annotate {}: {problem}", named.name))?;
        let event_name = self.header.events.get(self.app.event).cloned();
        let counts = SampledCode {
            module,
            name: Some(named.name.to_string()),
            event: event_name.unwrap_or_default(),
            event_samples: self.table.total.samples,
            by_offset: &by_offset,
            bucket_bytes: None,
        };
        let options = AnnotateOptions {
            view: AnnotateView::Both,
            context: None,
        };
        let annotation = annotate_sampled(&counts, &listing, self.code.sources, &options);
        Ok(AnnotateScreen::new(function, &annotation))
    }

    /// Draws the screen, keeping the selection in view.
    pub(crate) fn draw(&mut self, frame: &mut Frame<'_>) {
        let height = draw::table_height(frame.area().height, self.app.callers);
        self.app.clamp(self.table.rows.len(), height);
        let event = self.app.event;
        let view = View {
            header: &self.header,
            table: &self.table,
            app: &self.app,
            lost: self.tally.lost.get(event).copied().unwrap_or(0),
            throttled: self.tally.throttled.get(event).copied().unwrap_or(0),
            neighbours: self.neighbours.as_ref(),
            color: self.color,
        };
        draw::draw(frame, &view);
    }
}

/// Each event as the header names it: `cpu-clock 4000 Hz`.
pub(crate) fn event_labels(events: &[EventDescription]) -> Vec<String> {
    (events.iter())
        .map(|event| {
            let rate = match event.sampling {
                Sampling::Frequency(hz) => format!("{hz} Hz"),
                Sampling::Period(period) => format!("every {period}"),
            };
            printable(&format!("{} {rate}", event.name))
        })
        .collect()
}
