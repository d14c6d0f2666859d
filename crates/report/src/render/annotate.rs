//! An annotated function as text (a commented header, the source with each
//! line's samples, then the disassembly with the source interleaved) or as
//! JSON: `{"symbol","module","samples","lines":[{"file","line","samples",
//! "percent"}],"instructions":[{"address","samples","text"}],...}`.

use std::io::{self, Write};

use serde_json::json;

use crate::views::annotate::{AnnotateView, AnnotatedInstruction, Annotation, SourceBlock};

/// Shares at which a row is highlighted, as perf annotate does: red from
/// 5%, green from 0.5%.
const RED: f64 = 5.0;
const GREEN: f64 = 0.5;

/// Renders `annotation` as text; with `color`, the hottest rows are
/// highlighted with terminal colours.
pub fn render_annotation_text(
    annotation: &Annotation,
    color: bool,
    out: &mut impl Write,
) -> io::Result<()> {
    let a = annotation;
    writeln!(
        out,
        "# Function: {} in {} ({:#x}..{:#x}, {} instructions)",
        a.symbol,
        a.module,
        a.start.0,
        a.end.0,
        a.instructions.len()
    )?;
    writeln!(
        out,
        "# Event:    {}: {} of {} samples ({:.2}%) in this function",
        a.event,
        a.samples,
        a.event_samples,
        a.samples as f64 * 100.0 / a.event_samples.max(1) as f64
    )?;
    if let Some(bytes) = a.bucket_bytes {
        writeln!(
            out,
            "# Buckets:  a histogram recording: each bucket spans {bytes} bytes, and its samples \
             count at the instruction holding its first byte (and at that instruction's line)"
        )?;
    }
    for note in &a.notes {
        writeln!(out, "# Note:     {note}")?;
    }
    let readable: Vec<&SourceBlock> = a.sources.iter().filter(|b| b.problem.is_none()).collect();
    let source = a.view != AnnotateView::Asm && !readable.is_empty();
    // The disassembly stands in for source that cannot be shown.
    let asm = a.view != AnnotateView::Source || !source;
    let paint = Painter { color };
    if source {
        for block in readable {
            render_source(block, &paint, out)?;
        }
    }
    if asm {
        render_asm(a, &paint, out)?;
    }
    Ok(())
}

/// Colours rows by their share.
struct Painter {
    color: bool,
}

impl Painter {
    fn row(&self, percent: f64, text: &str, out: &mut impl Write) -> io::Result<()> {
        let code = match (self.color, percent) {
            (true, p) if p >= RED => Some("\x1b[1;31m"),
            (true, p) if p >= GREEN => Some("\x1b[32m"),
            _ => None,
        };
        match code {
            Some(code) => writeln!(out, "{code}{text}\x1b[0m"),
            None => writeln!(out, "{text}"),
        }
    }
}

/// `  89.90%     1407` or blanks for nothing sampled.
fn share(percent: f64, samples: u64) -> String {
    match samples {
        0 => format!("{:>9}  {:>7}", "", ""),
        n => format!(" {percent:>7.2}%  {n:>7}"),
    }
}

fn render_source(block: &SourceBlock, paint: &Painter, out: &mut impl Write) -> io::Result<()> {
    let width = block
        .rows
        .iter()
        .map(|r| r.line.to_string().len())
        .max()
        .unwrap_or(0)
        .max(4);
    writeln!(out, "#")?;
    writeln!(out, "# Source:   {}", block.path)?;
    writeln!(out, "#")?;
    writeln!(out, "# Percent  Samples  {:>width$}  Source", "Line")?;
    writeln!(out, "# -------  -------  {}  ------", "-".repeat(width))?;
    for row in &block.rows {
        if row.gap_before {
            writeln!(out, "{:>9}  {:>7}  {:>width$}", "", "", "...")?;
        }
        let inlined = match &row.inlined {
            Some(function) => format!("    [inlined: {function}]"),
            None => String::new(),
        };
        let text = format!(
            "{}  {:>width$}  {}{inlined}",
            share(row.percent, row.samples),
            row.line,
            row.text
        );
        paint.row(row.percent, text.trim_end(), out)?;
    }
    Ok(())
}

fn render_asm(a: &Annotation, paint: &Painter, out: &mut impl Write) -> io::Result<()> {
    let width = format!("{:x}", a.end.0).len().max(7);
    writeln!(out, "#")?;
    writeln!(out, "# Disassembly ('>' marks where jumps land)")?;
    writeln!(out, "#")?;
    writeln!(
        out,
        "# Percent  Samples    {:>width$}  Instruction",
        "Address"
    )?;
    writeln!(
        out,
        "# -------  -------    {}  -----------",
        "-".repeat(width)
    )?;
    let mut last_line: Option<(&str, u32)> = None;
    let mut gap = false;
    for i in &a.instructions {
        if i.hidden {
            gap = true;
            continue;
        }
        if std::mem::take(&mut gap) {
            writeln!(out, "{:>9}  {:>7}    {:>width$}", "", "", "...")?;
        }
        if let (Some(file), Some(line)) = (&i.file, i.line)
            && last_line != Some((file, line))
        {
            last_line = Some((file, line));
            writeln!(out, "{:>22}{}", "", source_heading(i, file, line))?;
        }
        let mark = if i.jump_target { '>' } else { ' ' };
        let target = match &i.target {
            Some(label) => format!("  <{label}>"),
            None => String::new(),
        };
        let text = format!(
            "{}  {mark} {:>width$x}:  {}{target}",
            share(i.percent, i.samples),
            i.svma.0,
            i.text
        );
        paint.row(i.percent, &text, out)?;
    }
    Ok(())
}

/// `annotate.c:20  for (...) { ... }   [inlined: mix]`
fn source_heading(i: &AnnotatedInstruction, file: &str, line: u32) -> String {
    let name = file.rsplit('/').next().unwrap_or(file);
    let mut heading = format!("{name}:{line}");
    if let Some(text) = &i.source {
        heading.push_str("  ");
        heading.push_str(text.trim());
    }
    if let Some(function) = &i.inlined {
        heading.push_str(&format!("    [inlined: {function}]"));
    }
    heading
}

pub fn render_annotation_json(annotation: &Annotation, out: &mut impl Write) -> io::Result<()> {
    let a = annotation;
    let round = |p: f64| (p * 10_000.0).round() / 10_000.0;
    let lines: Vec<_> = a
        .lines
        .iter()
        .map(|l| {
            json!({
                "file": &*l.file,
                "line": l.line,
                "samples": l.samples,
                "percent": round(l.percent),
                "inlined": l.inlined.as_deref(),
            })
        })
        .collect();
    let instructions: Vec<_> = a
        .instructions
        .iter()
        .map(|i| {
            json!({
                "address": i.svma.0,
                "samples": i.samples,
                "percent": round(i.percent),
                "text": i.text,
                "file": i.file.as_deref(),
                "line": i.line,
                "jump_target": i.jump_target,
            })
        })
        .collect();
    let document = json!({
        "symbol": a.symbol,
        "module": a.module,
        "event": a.event,
        "samples": a.samples,
        "event_samples": a.event_samples,
        "start": a.start.0,
        "end": a.end.0,
        "bucket_bytes": a.bucket_bytes,
        "notes": a.notes,
        "lines": lines,
        "instructions": instructions,
    });
    serde_json::to_writer_pretty(&mut *out, &document)?;
    writeln!(out)
}
