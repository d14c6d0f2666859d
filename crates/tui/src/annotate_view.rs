//! The annotated listing of one function on screen: report's annotation
//! (its source lines, then its instructions, each with its samples) as
//! lines to scroll through, opened at the hottest source line.

use crossterm::event::KeyCode;

use profiler_report::Annotation;

use crate::names::FunctionId;
use crate::numbers::thousands;
use crate::printable::printable;

/// One line of the listing.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ListingLine {
    /// Samples and share of the function, for a line or instruction.
    pub count: Option<(u64, f64)>,
    pub text: String,
    /// A heading (a file name, the disassembly) rather than code.
    pub heading: bool,
    /// The function's hottest source line (or instruction, without source).
    pub hottest: bool,
}

/// An annotated function, scrolled somewhere.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct AnnotateScreen {
    /// The function listed.
    pub function: FunctionId,
    /// `symbol  module  N samples (P% of EVENT)`.
    pub title: String,
    pub notes: Vec<String>,
    pub lines: Vec<ListingLine>,
    pub scroll: usize,
}

impl AnnotateScreen {
    pub(crate) fn new(function: FunctionId, annotation: &Annotation) -> AnnotateScreen {
        let mut lines = Vec::new();
        for block in &annotation.sources {
            lines.push(heading(&block.file));
            for row in &block.rows {
                let inlined = match &row.inlined {
                    Some(name) => format!("  [inlined: {name}]"),
                    None => String::new(),
                };
                lines.push(ListingLine {
                    count: Some((row.samples, row.percent)),
                    text: format!("{:>5}  {}{inlined}", row.line, code(&row.text)),
                    heading: false,
                    hottest: false,
                });
            }
        }
        let first_instruction = lines.len() + 1;
        lines.push(heading("disassembly"));
        for i in annotation.instructions.iter().filter(|i| !i.hidden) {
            let target = match &i.target {
                Some(target) => format!("  <{target}>"),
                None => String::new(),
            };
            let mark = if i.jump_target { ">" } else { " " };
            lines.push(ListingLine {
                count: Some((i.samples, i.percent)),
                text: format!("{mark}{:>8x}:  {}{target}", i.svma.0, code(&i.text)),
                heading: false,
                hottest: false,
            });
        }
        // The hottest source line, or without sources the hottest
        // instruction: the line the listing opens at.
        let hottest_in = |range: std::ops::Range<usize>, lines: &[ListingLine]| {
            (range.clone().zip(&lines[range]))
                .filter_map(|(index, line)| Some((index, line.count?.0)))
                .filter(|(_, samples)| *samples > 0)
                .max_by_key(|&(index, samples)| (samples, std::cmp::Reverse(index)))
                .map(|(index, _)| index)
        };
        let source_end = first_instruction - 1;
        let hottest = hottest_in(0..source_end, &lines)
            .or_else(|| hottest_in(first_instruction..lines.len(), &lines));
        if let Some(index) = hottest {
            lines[index].hottest = true;
        }
        let share = annotation.samples as f64 * 100.0 / annotation.event_samples.max(1) as f64;
        AnnotateScreen {
            function,
            title: printable(&format!(
                "{}  {}  {} samples ({share:.1}% of {})",
                annotation.symbol,
                annotation.module,
                thousands(annotation.samples),
                annotation.event
            )),
            notes: annotation.notes.iter().map(|n| printable(n)).collect(),
            scroll: hottest.map_or(0, |index| index.saturating_sub(3)),
            lines,
        }
    }

    /// Handles a key; `false` when it leaves the listing.
    pub(crate) fn key(&mut self, code: KeyCode, page: usize) -> bool {
        let last = self.lines.len().saturating_sub(1);
        match code {
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Left | KeyCode::Backspace => {
                return false;
            }
            KeyCode::Up | KeyCode::Char('k') => self.scroll = self.scroll.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => self.scroll = (self.scroll + 1).min(last),
            KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(page.max(1)),
            KeyCode::PageDown => self.scroll = (self.scroll + page.max(1)).min(last),
            KeyCode::Home => self.scroll = 0,
            KeyCode::End => self.scroll = last,
            _ => {}
        }
        true
    }
}

fn heading(text: &str) -> ListingLine {
    ListingLine {
        count: None,
        text: printable(text),
        heading: true,
        hottest: false,
    }
}

/// Source or assembly text as shown: tabs as spaces, nothing raw.
fn code(text: &str) -> String {
    printable(&text.replace('\t', "    "))
}
