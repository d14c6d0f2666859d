//! The collapsed-stack export: Brendan Gregg's `root;...;leaf count`
//! lines, which flamegraph.pl, inferno, speedscope and many other tools
//! read.

use rustc_hash::FxHashMap;
use std::io::{self, Write};

use crate::views::folded::{FoldedFrame, FoldedStacks};

impl FoldedStacks {
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
    use crate::views::folded::{FrameKind, StackWeight};

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
            weight: StackWeight::Samples,
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
