//! Where inside one function the time goes: its instructions and its source
//! lines, each with the samples taken there, in the manner of `perf
//! annotate` and `opannotate`.
//!
//! Samples count where they were taken: the instruction at the sampled
//! address, and that instruction's source line (the innermost line of its
//! inline chain, so that code inlined from a callee counts on the callee's
//! line, marked as inlined). A histogram recording knows only buckets of
//! several bytes: each bucket counts at the instruction holding its first
//! byte, and the annotation says so.

use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use profiler_model::{
    Flow, FunctionListing, Instruction, Location, Module, Recording, SourceReader, SourceText, Svma,
};

use crate::read::stacks::{NamedStack, StackProfile};
use crate::read::weight::total;
use crate::views::annotate_target::AnnotateTarget;
use crate::wording::event_phrase;

/// Which views to show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AnnotateView {
    Source,
    Asm,
    /// The source, then the disassembly.
    #[default]
    Both,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AnnotateOptions {
    pub view: AnnotateView,
    /// Show only lines and instructions within this many of one with
    /// samples; `None`: all of the function.
    pub context: Option<usize>,
}

/// One function, annotated.
#[derive(Clone, Debug, PartialEq)]
pub struct Annotation {
    /// The function's name, or `module+0xSTART` for code without one.
    pub symbol: String,
    /// The module's path.
    pub module: String,
    /// The event counted, described.
    pub event: String,
    /// Samples in this function, and of the event in all.
    pub samples: u64,
    pub event_samples: u64,
    pub start: Svma,
    pub end: Svma,
    /// For a histogram recording: how many bytes each bucket spans.
    pub bucket_bytes: Option<f64>,
    pub view: AnnotateView,
    pub instructions: Vec<AnnotatedInstruction>,
    /// Every source line the function's code comes from, with its samples,
    /// in file and line order.
    pub lines: Vec<LineCount>,
    /// The source to show: the function's own lines and the lines of code
    /// inlined into it, per file.
    pub sources: Vec<SourceBlock>,
    /// What the reader should know (no debug info, a source file not
    /// found...).
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct AnnotatedInstruction {
    pub svma: Svma,
    pub text: String,
    pub samples: u64,
    /// Share of the function's samples, in percent.
    pub percent: f64,
    /// A jump of this function lands here.
    pub jump_target: bool,
    /// Where a direct jump or call goes, as `name+0xOFFSET` (inside the
    /// function) or the function it goes to.
    pub target: Option<String>,
    /// The instruction's source line (innermost inline frame).
    pub file: Option<Arc<str>>,
    pub line: Option<u32>,
    /// The function inlined here, when the code came from one.
    pub inlined: Option<Arc<str>>,
    /// The text of its source line, when the file could be read.
    pub source: Option<String>,
    /// Whether `--context` hides it.
    pub hidden: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct LineCount {
    pub file: Arc<str>,
    pub line: u32,
    pub samples: u64,
    pub percent: f64,
    /// The function inlined here, when the line's code came from one.
    pub inlined: Option<Arc<str>>,
}

/// Lines of one source file.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceBlock {
    /// The file as the debug info names it.
    pub file: Arc<str>,
    /// The file read: `file`, or where `--source-dir` says it moved.
    pub path: String,
    /// The lines to show, in order; empty when the file cannot be read.
    pub rows: Vec<SourceRow>,
    /// Why the file cannot be shown.
    pub problem: Option<String>,
    /// What of the file was left unread or cut short.
    pub cut: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SourceRow {
    pub line: u32,
    pub text: String,
    pub samples: u64,
    pub percent: f64,
    pub inlined: Option<Arc<str>>,
    /// Lines were left out before this one.
    pub gap_before: bool,
}

/// Annotates the function of `listing`, which `target` found in `stacks`
/// (read from `recording` with places, one event).
pub fn annotate(
    recording: &Recording,
    stacks: &StackProfile,
    target: &AnnotateTarget,
    listing: &FunctionListing,
    sources: &dyn SourceReader,
    options: &AnnotateOptions,
) -> Annotation {
    let event = stacks.wanted.iter().position(|&w| w).unwrap_or(0);
    let event_stacks = stacks.events.get(event).map_or(&[][..], Vec::as_slice);
    let by_offset = samples_by_offset(stacks, event_stacks, target);
    let counts = SampledCode {
        module: &target.module,
        name: target.name.clone(),
        event: recording
            .header
            .events
            .get(event)
            .map(event_phrase)
            .unwrap_or_default(),
        event_samples: total(event_stacks.iter().map(|s| s.weight.samples)),
        by_offset: &by_offset,
        bucket_bytes: recording.header.histogram.as_ref().map(|h| {
            profiler_histogram::Scale::new(u64::from(h.scale))
                .map_or(2.0, profiler_histogram::Scale::bytes_per_bucket)
        }),
    };
    annotate_sampled(&counts, listing, sources, options)
}

/// The samples of one module's code, by file offset, that
/// [`annotate_sampled`] spreads over a function's listing: from a
/// recording, or counted live.
#[derive(Clone, Debug)]
pub struct SampledCode<'a> {
    pub module: &'a Module,
    /// The function's name as the views show it, where the listing has none.
    pub name: Option<String>,
    /// The event counted, described.
    pub event: String,
    /// The event's samples in all.
    pub event_samples: u64,
    /// Samples by file offset in `module` (those outside the function are
    /// not counted).
    pub by_offset: &'a BTreeMap<u64, u64>,
    /// For histogram buckets: how many bytes each spans.
    pub bucket_bytes: Option<f64>,
}

/// Annotates the function of `listing` with the samples of `counts`.
pub fn annotate_sampled(
    counts: &SampledCode<'_>,
    listing: &FunctionListing,
    sources: &dyn SourceReader,
    options: &AnnotateOptions,
) -> Annotation {
    let instruction_counts = instruction_counts(&listing.instructions, counts.by_offset);
    let samples = total(instruction_counts.iter().copied());
    let symbol = (listing.name.clone())
        .or_else(|| counts.name.clone())
        .unwrap_or_else(|| format!("{}:{:#x}", counts.module.name(), listing.start.0));
    let instructions =
        annotated_instructions(listing, &instruction_counts, &symbol, sources, options);
    let lines = line_counts(&instructions, samples);
    let mut notes = Vec::new();
    if !listing.has_lines {
        notes.push(format!(
            "{} has no debug info (no line tables): the disassembly alone is shown",
            counts.module.path
        ));
    }
    let sources = match listing.has_lines {
        true => source_blocks(listing, &lines, sources, options.context),
        false => Vec::new(),
    };
    notes.extend((sources.iter()).flat_map(|b| b.problem.iter().chain(&b.cut).cloned()));
    Annotation {
        symbol,
        module: counts.module.path.clone(),
        event: counts.event.clone(),
        samples,
        event_samples: counts.event_samples,
        start: listing.start,
        end: listing.end,
        bucket_bytes: counts.bucket_bytes,
        view: options.view,
        instructions,
        lines,
        sources,
        notes,
    }
}

/// The samples of `stacks` by file offset in `target`'s module.
fn samples_by_offset(
    stacks: &StackProfile,
    event_stacks: &[NamedStack],
    target: &AnnotateTarget,
) -> BTreeMap<u64, u64> {
    let mut by_offset: BTreeMap<u64, u64> = BTreeMap::new();
    for stack in event_stacks {
        let Some(place) = stack.place else { continue };
        if let Location::Module { module, offset } = stacks.places[place.index()].0
            && module == target.module_id
        {
            let count = by_offset.entry(offset.0).or_default();
            *count = count.saturating_add(stack.weight.samples);
        }
    }
    by_offset
}

/// Each instruction of `listing` with its samples (`counts`), where it
/// jumps or calls (named after `symbol` inside the function), its source
/// line, and whether it is out of the context shown.
fn annotated_instructions(
    listing: &FunctionListing,
    counts: &[u64],
    symbol: &str,
    sources: &dyn SourceReader,
    options: &AnnotateOptions,
) -> Vec<AnnotatedInstruction> {
    let samples = total(counts.iter().copied());
    let targets: BTreeSet<Svma> = listing
        .instructions
        .iter()
        .filter_map(|i| match i.flow {
            Flow::Jump(to) => Some(to),
            _ => None,
        })
        .collect();
    let label = |to: Svma| {
        (listing.start..listing.end)
            .contains(&to)
            .then(|| format!("{symbol}+{:#x}", to.0 - listing.start.0))
    };
    let visible = within_context(counts, options.context);
    // Each file read once, for the lines the instructions came from.
    let mut wanted: BTreeMap<Arc<str>, BTreeSet<u32>> = BTreeMap::new();
    for i in &listing.instructions {
        if let (Some(file), Some(line), _) = source_of(i) {
            wanted.entry(file).or_default().insert(line);
        }
    }
    let texts: BTreeMap<Arc<str>, Arc<SourceText>> = (wanted.into_iter())
        .filter_map(|(file, lines)| Some((file.clone(), sources.lines(&file, &lines).ok()?)))
        .collect();
    (listing.instructions.iter().zip(counts).zip(&visible))
        .map(|((i, &n), &shown)| {
            let (file, line, inlined) = source_of(i);
            let source = match (&file, line) {
                (Some(file), Some(line)) => {
                    texts.get(file).and_then(|t| t.lines.get(&line)).cloned()
                }
                _ => None,
            };
            AnnotatedInstruction {
                svma: i.svma,
                text: i.text.clone(),
                samples: n,
                percent: n as f64 * 100.0 / samples.max(1) as f64,
                jump_target: targets.contains(&i.svma),
                target: match i.flow {
                    Flow::Jump(to) | Flow::Call(to) => label(to).or_else(|| i.callee.clone()),
                    Flow::Next => None,
                },
                file,
                line,
                inlined,
                source,
                hidden: !shown,
            }
        })
        .collect()
}

/// Samples per instruction: each count goes to the instruction holding its
/// file offset (a histogram bucket's first byte may lie inside one).
fn instruction_counts(instructions: &[Instruction], by_offset: &BTreeMap<u64, u64>) -> Vec<u64> {
    instructions
        .iter()
        .map(|i| {
            let start = i.offset.0;
            total(
                by_offset
                    .range(start..start.saturating_add(u64::from(i.len)))
                    .map(|(_, n)| *n),
            )
        })
        .collect()
}

/// The instruction's innermost source line, and the function inlined there
/// when that is not the function itself.
fn source_of(instruction: &Instruction) -> (Option<Arc<str>>, Option<u32>, Option<Arc<str>>) {
    let frames = &instruction.frames;
    let Some(innermost) = frames.first() else {
        return (None, None, None);
    };
    let inlined = match frames.len() {
        0 | 1 => None,
        _ => innermost.function.clone(),
    };
    (innermost.file.clone(), innermost.line, inlined)
}

/// Which items to show: all, or those within `context` of one with samples.
fn within_context(counts: &[u64], context: Option<usize>) -> Vec<bool> {
    let Some(context) = context else {
        return vec![true; counts.len()];
    };
    let mut shown = vec![false; counts.len()];
    for (index, _) in counts.iter().enumerate().filter(|(_, n)| **n > 0) {
        let (from, to) = (
            index.saturating_sub(context),
            (index + context).min(counts.len() - 1),
        );
        shown[from..=to].iter_mut().for_each(|s| *s = true);
    }
    shown
}

/// The samples of every source line the instructions come from.
fn line_counts(instructions: &[AnnotatedInstruction], samples: u64) -> Vec<LineCount> {
    let mut by_line: BTreeMap<(Arc<str>, u32), LineCount> = BTreeMap::new();
    for i in instructions {
        let (Some(file), Some(line)) = (&i.file, i.line) else {
            continue;
        };
        let count = by_line
            .entry((file.clone(), line))
            .or_insert_with(|| LineCount {
                file: file.clone(),
                line,
                samples: 0,
                percent: 0.0,
                inlined: None,
            });
        count.samples = count.samples.saturating_add(i.samples);
        if count.inlined.is_none() {
            count.inlined = i.inlined.clone();
        }
    }
    let mut lines: Vec<LineCount> = by_line.into_values().collect();
    for line in &mut lines {
        line.percent = line.samples as f64 * 100.0 / samples.max(1) as f64;
    }
    lines
}

/// The most lines of its own file a function's listing shows.
const MAX_OWN_LINES: u32 = 100_000;

/// The source lines to show. In the function's own file, every line from
/// its first to its last; in any file, each line code came from. With
/// `context`, only the lines within that many of one with samples.
fn source_blocks(
    listing: &FunctionListing,
    lines: &[LineCount],
    sources: &dyn SourceReader,
    context: Option<usize>,
) -> Vec<SourceBlock> {
    let own_file = own_span(listing);
    let mut wanted: BTreeMap<Arc<str>, BTreeSet<u32>> = BTreeMap::new();
    if let Some((file, first, last)) = &own_file {
        // Debug info can claim any span: a function shows at most this
        // many lines of its own.
        let last = (*last).min(first.saturating_add(MAX_OWN_LINES));
        wanted
            .entry(file.clone())
            .or_default()
            .extend(*first..=last);
    }
    for line in lines {
        wanted
            .entry(line.file.clone())
            .or_default()
            .insert(line.line);
    }
    let counts: FxHashMap<(&str, u32), &LineCount> =
        lines.iter().map(|l| ((&*l.file, l.line), l)).collect();
    let mut blocks: Vec<SourceBlock> = (wanted.into_iter())
        .map(|(file, numbers)| source_block(file, numbers, &counts, sources, context))
        .collect();
    // The function's own file first.
    if let Some((own, _, _)) = own_file {
        blocks.sort_by_key(|b| b.file != own);
    }
    blocks
}

/// The function's own file, and its first and last line there: the file
/// most of its outermost frames lie in.
fn own_span(listing: &FunctionListing) -> Option<(Arc<str>, u32, u32)> {
    let mut own: FxHashMap<Arc<str>, (u32, u32, usize)> = FxHashMap::default();
    for i in &listing.instructions {
        let Some(outer) = i.frames.last() else {
            continue;
        };
        let (Some(file), Some(line)) = (&outer.file, outer.line) else {
            continue;
        };
        let span = own.entry(file.clone()).or_insert((line, line, 0));
        span.0 = span.0.min(line);
        span.1 = span.1.max(line);
        span.2 += 1;
    }
    own.iter()
        .max_by_key(|(file, (_, _, n))| (*n, std::cmp::Reverse(file.to_string())))
        .map(|(file, &(first, last, _))| (file.clone(), first, last))
}

/// Lines `numbers` of `file`, with their samples (`counts`).
fn source_block(
    file: Arc<str>,
    numbers: BTreeSet<u32>,
    counts: &FxHashMap<(&str, u32), &LineCount>,
    sources: &dyn SourceReader,
    context: Option<usize>,
) -> SourceBlock {
    let text = match sources.lines(&file, &numbers) {
        Ok(text) => text,
        Err(problem) => {
            return SourceBlock {
                path: file.to_string(),
                file,
                rows: Vec::new(),
                problem: Some(problem),
                cut: None,
            };
        }
    };
    let numbers: Vec<u32> = numbers
        .into_iter()
        .filter(|n| text.lines.contains_key(n))
        .collect();
    let samples: Vec<u64> = numbers
        .iter()
        .map(|&n| counts.get(&(&*file, n)).map_or(0, |c| c.samples))
        .collect();
    let shown = within_context(&samples, context);
    let mut rows = Vec::new();
    let mut previous: Option<u32> = None;
    for (&number, show) in numbers.iter().zip(shown) {
        if !show {
            continue;
        }
        let count = counts.get(&(&*file, number));
        rows.push(SourceRow {
            line: number,
            text: text.lines.get(&number).cloned().unwrap_or_default(),
            samples: count.map_or(0, |c| c.samples),
            percent: count.map_or(0.0, |c| c.percent),
            inlined: count.and_then(|c| c.inlined.clone()),
            gap_before: previous.is_some_and(|p| number > p + 1),
        });
        previous = Some(number);
    }
    SourceBlock {
        file,
        path: text.path.clone(),
        rows,
        problem: None,
        cut: text.cut.clone(),
    }
}
