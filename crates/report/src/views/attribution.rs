//! Which row of a flat profile a sample counts for. By default the function
//! holding the sampled code, as `perf report --no-children` and gprof count
//! it: code inlined into a function is that function's, and the inlined
//! functions are a breakdown of its row. With `--inline`, the innermost
//! inlined function the instruction came from, and a function's inlined
//! copies and its own code are one row.

use rustc_hash::FxHashMap;

use crate::read::naming::{FunctionId, FunctionKey, ModuleKey};
use crate::read::weight::Weight;

/// The rows functions count for.
pub(crate) struct Attribution {
    /// Per function id: its row (a function id standing for every function
    /// of that module and name), or `None` for an inlined frame that is no
    /// row of its own.
    row_of: Vec<Option<FunctionId>>,
    inline: bool,
}

impl Attribution {
    pub(crate) fn new(functions: &[FunctionKey], inline: bool) -> Attribution {
        // With `--inline`, an inlined `burn` and an out-of-line `burn` are
        // one row: the first id of the module and name stands for both.
        let mut first: FxHashMap<(ModuleKey, &str), FunctionId> = FxHashMap::default();
        let row_of = functions
            .iter()
            .enumerate()
            .map(|(index, key)| {
                let id = FunctionId::new(index);
                match (inline, key.inlined) {
                    (false, true) => None,
                    (false, false) => Some(id),
                    (true, _) => Some(*first.entry((key.module, &key.name)).or_insert(id)),
                }
            })
            .collect();
        Attribution { row_of, inline }
    }

    /// The row whose self weight a stack (leaf first) adds to.
    pub(crate) fn leaf(&self, frames: &[FunctionId]) -> Option<FunctionId> {
        match self.inline {
            true => frames.first().and_then(|&f| self.row_of[f.index()]),
            false => frames.iter().find_map(|&f| self.row_of[f.index()]),
        }
    }

    /// The rows on a stack, leaf first, a row as often as it recurs.
    pub(crate) fn rows<'a>(
        &'a self,
        frames: &'a [FunctionId],
    ) -> impl Iterator<Item = FunctionId> + 'a {
        frames.iter().filter_map(|&f| self.row_of[f.index()])
    }

    /// With holder attribution, the inlined frames before the leaf's row:
    /// the functions inlined into it, innermost first. Empty with `--inline`.
    pub(crate) fn inlined_frames<'a>(&self, frames: &'a [FunctionId]) -> &'a [FunctionId] {
        if self.inline {
            return &[];
        }
        let holder = frames
            .iter()
            .position(|&f| self.row_of[f.index()].is_some())
            .unwrap_or(frames.len());
        &frames[..holder]
    }
}

/// What code inlined into one function weighs, by inlined function.
#[derive(Clone, Debug, Default)]
pub(crate) struct InlineTally {
    /// Samples in any inlined code.
    pub weight: Weight,
    /// Per inlined function id: samples in its code (with what was inlined
    /// into it), as the innermost frame, and inlined directly into the row's
    /// function.
    pub by_function: FxHashMap<FunctionId, [Weight; 3]>,
}

impl InlineTally {
    /// Adds a sample whose code came from `inlined` (innermost first).
    pub(crate) fn add(&mut self, inlined: &[FunctionId], weight: Weight) {
        let (Some(&innermost), Some(&direct)) = (inlined.first(), inlined.last()) else {
            return;
        };
        self.weight.add(weight);
        for (index, &function) in inlined.iter().enumerate() {
            if inlined[..index].contains(&function) {
                continue;
            }
            self.by_function.entry(function).or_default()[0].add(weight);
        }
        self.by_function.entry(innermost).or_default()[1].add(weight);
        self.by_function.entry(direct).or_default()[2].add(weight);
    }
}
