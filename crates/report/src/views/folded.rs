//! Named call stacks with their weights: what flame graphs and the
//! collapsed-stack export (Brendan Gregg's `root;...;leaf count`) are made
//! of. Frames are kept once each; stacks refer to them by index. A function
//! inlined into its caller is a frame of its own, named with an
//! ` (inlined)` suffix as `perf report` marks it.

use rustc_hash::FxHashMap;
use std::io::{self, Write};

use crate::read::samples::total;

/// What kind of code a frame is, for colouring.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FrameKind {
    /// The profiled program's own executable.
    Program,
    /// A shared library.
    Library,
    /// The kernel.
    Kernel,
    /// Anonymous memory (JIT code), the vdso, or no mapping at all.
    Other,
}

/// One frame of a stack: a function of a module.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FoldedFrame {
    pub name: String,
    /// The module's short name (file name), or a bracketed pseudo-module.
    pub module: String,
    pub kind: FrameKind,
    /// A function inlined into the frame below it (no call happened).
    pub inlined: bool,
}

/// What a folded line appends to the name of an inlined function.
pub const INLINED_SUFFIX: &str = " (inlined)";

impl FoldedFrame {
    /// The frame as a folded line names it: its name, with ` (inlined)` for
    /// an inlined function, and `:` for any `;` (rare: C++ and Rust names
    /// have none), so that readers split frames where they should.
    pub fn label(&self) -> String {
        let name = self.name.replace(';', ":");
        match self.inlined {
            true => name + INLINED_SUFFIX,
            false => name,
        }
    }
}

/// Distinct stacks, root first, with what they weigh.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FoldedStacks {
    pub frames: Vec<FoldedFrame>,
    /// Frame indices from the root to the leaf, and the stack's weight
    /// (samples or period, as the caller chose). Each stack appears once.
    pub stacks: Vec<(Vec<u32>, u64)>,
}

impl FoldedStacks {
    /// The frames of `stack`, root first.
    pub fn frames_of<'a>(&'a self, stack: &'a [u32]) -> impl Iterator<Item = &'a FoldedFrame> {
        stack.iter().map(|&i| &self.frames[i as usize])
    }

    /// The total weight of every stack.
    pub fn total(&self) -> u64 {
        total(self.stacks.iter().map(|(_, w)| *w))
    }

    /// Writes one `root;...;leaf weight` line per stack, sorted, each frame
    /// named by [`FoldedFrame::label`].
    pub fn write(&self, out: &mut impl Write) -> io::Result<()> {
        for (line, weight) in self.lines() {
            writeln!(out, "{line} {weight}")?;
        }
        Ok(())
    }

    /// The stacks as folded lines, sorted, with their weights; stacks that
    /// fold to the same line are merged.
    pub fn lines(&self) -> Vec<(String, u64)> {
        let names: Vec<String> = self.frames.iter().map(FoldedFrame::label).collect();
        let mut merged: FxHashMap<String, u64> = FxHashMap::default();
        for (stack, weight) in &self.stacks {
            let line = stack
                .iter()
                .map(|&i| names[i as usize].as_str())
                .collect::<Vec<_>>()
                .join(";");
            let total = merged.entry(line).or_default();
            *total = total.saturating_add(*weight);
        }
        let mut lines: Vec<(String, u64)> = merged.into_iter().collect();
        lines.sort();
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(name: &str) -> FoldedFrame {
        FoldedFrame {
            name: name.into(),
            module: "app".into(),
            kind: FrameKind::Program,
            inlined: false,
        }
    }

    #[test]
    fn stacks_fold_to_sorted_merged_lines() {
        let burn = FoldedFrame {
            inlined: true,
            ..frame("burn")
        };
        let stacks = FoldedStacks {
            frames: vec![frame("main"), frame("work"), frame("a;b"), burn],
            stacks: vec![
                (vec![0, 2], 3),
                (vec![0, 1], 5),
                (vec![0], 1),
                (vec![0, 2], 2),
                (vec![0, 1, 3], 4),
            ],
        };
        let mut out = Vec::new();
        stacks.write(&mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "main 1\nmain;a:b 5\nmain;work 5\nmain;work;burn (inlined) 4\n"
        );
        assert_eq!(stacks.total(), 15);
    }
}
