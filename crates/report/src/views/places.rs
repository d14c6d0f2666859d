//! Flat profiles below functions: samples by source line or by instruction
//! address, across the whole program (`report --sort line|address`).

use rustc_hash::FxHashMap;
use std::sync::Arc;

use profiler_model::{Location, Svma};

use crate::read::naming::{FunctionId, ModuleKey};
use crate::read::stacks::PlaceId;
use crate::read::stacks::StackProfile;
use crate::read::weight::Weight;
use crate::views::sort::PlaceKind;
use crate::views::tasks::{Leaf, Task, TaskKey};

/// One source line, or one instruction address, with its self samples.
#[derive(Clone, Debug, PartialEq)]
pub struct PlaceRow {
    /// The command or process, when the sort keys tell them apart.
    pub task: Task,
    /// The module's short name (file name).
    pub module: String,
    /// The function the samples are in: by line, named as function rows
    /// are (by default the function holding the code; with `--inline`, the
    /// function inlined there); by address, the function holding the
    /// address.
    pub function: String,
    /// The source file and line (by line: the row's; by address: the
    /// instruction's); `None` without debug info.
    pub file: Option<Arc<str>>,
    pub line: Option<u32>,
    /// By address: the address as the file states it (kernel code: its
    /// address in memory), and how far into its function it lies.
    pub address: Option<u64>,
    pub function_offset: Option<u64>,
    pub weight: Weight,
    /// Share of the event's total period, in percent.
    pub percent: f64,
}

/// What rows are told apart by.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum RowKey {
    /// Module, file, line and function (a line inlined into several
    /// functions is a row in each).
    Line(ModuleKey, Option<Arc<str>>, Option<u32>, FunctionId),
    /// The sampled location itself.
    Address(PlaceId),
}

/// The rows of `leaves` (stacks read with places), most samples first;
/// rows below `percent_limit` percent of `total_period` are left out.
pub(crate) fn place_rows(
    stacks: &StackProfile,
    leaves: &[Leaf],
    kind: PlaceKind,
    total_period: u64,
    percent_limit: f64,
) -> Vec<PlaceRow> {
    let mut by_key: FxHashMap<(TaskKey, RowKey), (FunctionId, PlaceId, Weight)> =
        FxHashMap::default();
    for leaf in leaves {
        let (function, Some(place_id)) = (leaf.row, leaf.stack.place) else {
            continue;
        };
        let place = &stacks.places[place_id.index()].1;
        let module = stacks.functions[function.index()].module;
        let key = match kind {
            PlaceKind::Line => RowKey::Line(module, place.file.clone(), place.line, function),
            PlaceKind::Address => RowKey::Address(place_id),
        };
        let entry =
            by_key
                .entry((leaf.task, key))
                .or_insert((function, place_id, Weight::default()));
        entry.2.add(leaf.stack.weight);
    }
    let total = total_period.max(1) as f64;
    let mut rows: Vec<PlaceRow> = by_key
        .into_iter()
        .map(|((task, _), (function, place_id, weight))| {
            let key = &stacks.functions[function.index()];
            let (location, place) = &stacks.places[place_id.index()];
            let address = match (kind, location) {
                (PlaceKind::Line, _) => None,
                (_, Location::Kernel { address }) => Some(address.0),
                (_, _) => place.svma.map(|Svma(a)| a),
            };
            PlaceRow {
                task: stacks.task(task),
                module: stacks.module_names(key.module).0,
                function: match (kind, &place.function) {
                    (PlaceKind::Address, Some(holder)) => holder.to_string(),
                    _ => key.name.clone(),
                },
                file: place.file.clone(),
                line: place.line,
                address,
                function_offset: match kind {
                    PlaceKind::Line => None,
                    PlaceKind::Address => place.function_offset,
                },
                percent: weight.period as f64 * 100.0 / total,
                weight,
            }
        })
        .filter(|row| row.percent >= percent_limit)
        .collect();
    rows.sort_by(|a, b| {
        (b.weight.period, b.weight.samples)
            .cmp(&(a.weight.period, a.weight.samples))
            .then_with(|| {
                (&a.module, &a.file, a.line, a.address)
                    .cmp(&(&b.module, &b.file, b.line, b.address))
            })
            .then_with(|| (&a.function, &a.task).cmp(&(&b.function, &b.task)))
    });
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::naming::{FunctionKey, Place};
    use crate::read::stacks::NamedStack;
    use crate::read::thread_stack::CommandId;
    use profiler_model::{FileOffset, ModuleTable};

    fn profile() -> StackProfile {
        let mut modules = ModuleTable::default();
        let app = modules.intern("/bin/app", None, None);
        let location = |offset| Location::Module {
            module: app,
            offset: FileOffset(offset),
        };
        let place = |svma, line| Place {
            svma: Some(Svma(svma)),
            function: Some("work".into()),
            function_offset: Some(svma - 0x1100),
            file: Some("/src/app.c".into()),
            line,
        };
        StackProfile::for_tests(
            modules,
            vec![FunctionKey {
                module: ModuleKey::Module(app),
                name: "work".into(),
                inlined: false,
            }],
            vec![
                (location(0x1110), place(0x1110, Some(20))),
                (location(0x1114), place(0x1114, Some(20))),
                (location(0x1120), place(0x1120, Some(21))),
                (location(0x1130), place(0x1130, None)),
            ],
        )
    }

    fn stack(place: usize, samples: u64) -> NamedStack {
        NamedStack {
            rank: 0,
            pid: 1,
            tid: 1,
            command: CommandId::new(0),
            state: None,
            frames: vec![FunctionId::new(0)],
            place: Some(PlaceId::new(place)),
            weight: Weight {
                samples,
                period: samples,
            },
        }
    }

    #[test]
    fn lines_add_up_their_addresses_and_addresses_stay_apart() {
        let stacks = profile();
        let part = [stack(0, 5), stack(1, 3), stack(2, 1), stack(3, 1)];
        let part: Vec<Leaf> = (part.iter())
            .map(|stack| Leaf {
                stack,
                task: (None, None, None, None),
                row: FunctionId::new(0),
            })
            .collect();
        let lines = place_rows(&stacks, &part, PlaceKind::Line, 10, 0.0);
        let summary: Vec<(Option<u32>, u64)> =
            lines.iter().map(|r| (r.line, r.weight.samples)).collect();
        assert_eq!(summary, [(Some(20), 8), (None, 1), (Some(21), 1)]);
        assert_eq!(lines[0].percent, 80.0);
        assert_eq!(lines[0].address, None);

        let addresses = place_rows(&stacks, &part, PlaceKind::Address, 10, 15.0);
        let summary: Vec<(Option<u64>, Option<u64>, u64)> = addresses
            .iter()
            .map(|r| (r.address, r.function_offset, r.weight.samples))
            .collect();
        assert_eq!(
            summary,
            [(Some(0x1110), Some(0x10), 5), (Some(0x1114), Some(0x14), 3)]
        );
    }
}
