//! Load imbalance across the ranks of a job, as HPCToolkit and TAU show
//! it: per function, its self time on each rank summed up as the least,
//! the median, the mean and the most, the rank with the most, and the
//! imbalance (most / mean); functions sorted by the time the imbalance
//! costs the job, (most - mean) x ranks: what the other ranks spend
//! waiting for the slowest.

use rustc_hash::FxHashMap;

use profiler_model::{EventDescription, Recording};

use crate::read::naming::FunctionId;
use crate::read::stacks::{RankInfo, StackProfile};

/// The balance of every sampling event read.
#[derive(Clone, Debug)]
pub struct RankBalance {
    /// The ranks read, each with its host.
    pub ranks: Vec<RankInfo>,
    pub events: Vec<EventBalance>,
    /// Rows below this share of their event were left out.
    pub percent_limit: f64,
}

/// One event's functions across the ranks.
#[derive(Clone, Debug)]
pub struct EventBalance {
    pub description: EventDescription,
    /// Most time lost to imbalance first.
    pub rows: Vec<BalanceRow>,
}

/// A function's self weight (the events its samples stand for: nanoseconds
/// for the clocks) across the ranks; a rank without samples in it counts 0.
#[derive(Clone, Debug, PartialEq)]
pub struct BalanceRow {
    pub name: String,
    /// The module's short name.
    pub module: String,
    pub min: u64,
    pub median: f64,
    pub mean: f64,
    pub max: u64,
    /// The rank with the most (the lowest of several).
    pub max_rank: u32,
    /// max / mean: 1 where every rank spends the same.
    pub imbalance: f64,
    /// (max - mean) x ranks: what the ranks that wait for the slowest lose.
    pub lost: f64,
}

/// The balance of the `stacks` of a job, read (with functions holding
/// their inlined code) from `recording`, the job's stand-in. Functions
/// below `percent_limit` percent of their event are left out.
pub fn rank_balance(
    recording: &Recording,
    stacks: &StackProfile,
    percent_limit: f64,
) -> RankBalance {
    let header = &recording.header;
    let events = (header.events.iter().enumerate())
        .filter(|(index, event)| stacks.wanted[*index] && event.leader.is_none())
        .map(|(index, event)| EventBalance {
            description: event.clone(),
            rows: event_rows(stacks, index, percent_limit),
        })
        .collect();
    RankBalance {
        ranks: stacks.ranks.clone(),
        events,
        percent_limit,
    }
}

fn event_rows(stacks: &StackProfile, event: usize, percent_limit: f64) -> Vec<BalanceRow> {
    let position: FxHashMap<u32, usize> = (stacks.ranks.iter().enumerate())
        .map(|(at, info)| (info.rank, at))
        .collect();
    let ranks = stacks.ranks.len().max(1);
    let mut by_function: FxHashMap<FunctionId, Vec<u64>> = FxHashMap::default();
    let mut total = 0u64;
    for stack in &stacks.events[event] {
        let Some(&function) = stack.frames.first() else {
            continue;
        };
        let at = position.get(&stack.rank).copied().unwrap_or(0);
        let per_rank = by_function
            .entry(function)
            .or_insert_with(|| vec![0; ranks]);
        per_rank[at] = per_rank[at].saturating_add(stack.weight.period);
        total = total.saturating_add(stack.weight.period);
    }
    let mut rows: Vec<BalanceRow> = (by_function.into_iter())
        .filter(|(_, per_rank)| {
            let sum: u64 = per_rank.iter().sum();
            sum as f64 * 100.0 >= percent_limit * total as f64
        })
        .map(|(function, per_rank)| {
            let key = &stacks.functions[function.index()];
            let module = stacks.module_names(key.module).0;
            summarize(key.name.clone(), module, &per_rank, &stacks.ranks)
        })
        .collect();
    rows.sort_by(|a, b| {
        (b.lost.total_cmp(&a.lost))
            .then(b.max.cmp(&a.max))
            .then_with(|| (&a.module, &a.name).cmp(&(&b.module, &b.name)))
    });
    rows
}

/// The row of a function that weighs `per_rank` on the ranks `ranks`.
fn summarize(name: String, module: String, per_rank: &[u64], ranks: &[RankInfo]) -> BalanceRow {
    let mut sorted = per_rank.to_vec();
    sorted.sort_unstable();
    let count = sorted.len().max(1);
    let median = match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2] as f64,
        n => (sorted[n / 2 - 1] as f64 + sorted[n / 2] as f64) / 2.0,
    };
    let mean = sorted.iter().map(|&v| v as f64).sum::<f64>() / count as f64;
    let max = sorted.last().copied().unwrap_or(0);
    let max_at = per_rank.iter().position(|&v| v == max).unwrap_or(0);
    BalanceRow {
        name,
        module,
        min: sorted.first().copied().unwrap_or(0),
        median,
        mean,
        max,
        max_rank: ranks.get(max_at).map_or(0, |info| info.rank),
        imbalance: match mean > 0.0 {
            true => max as f64 / mean,
            false => 1.0,
        },
        lost: (max as f64 - mean) * count as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranks(n: u32) -> Vec<RankInfo> {
        (0..n)
            .map(|rank| RankInfo {
                rank,
                host: "h".into(),
            })
            .collect()
    }

    #[test]
    fn twice_the_work_on_one_of_four_ranks_is_an_imbalance_of_1_6() {
        let row = summarize(
            "compute".into(),
            "app".into(),
            &[200, 100, 100, 100],
            &ranks(4),
        );
        assert_eq!((row.min, row.max, row.max_rank), (100, 200, 0));
        assert_eq!(row.median, 100.0);
        assert_eq!(row.mean, 125.0);
        assert!((row.imbalance - 1.6).abs() < 1e-9);
        assert_eq!(row.lost, 300.0);
    }

    #[test]
    fn a_rank_without_samples_counts_zero_and_the_lowest_rank_of_a_tie_is_named() {
        let row = summarize("f".into(), "m".into(), &[0, 50, 50], &ranks(3));
        assert_eq!((row.min, row.max, row.max_rank), (0, 50, 1));
        assert_eq!(row.median, 50.0);
        let even = summarize("f".into(), "m".into(), &[1, 2, 3, 10], &ranks(4));
        assert_eq!(even.median, 2.5);
        let balanced = summarize("f".into(), "m".into(), &[7, 7], &ranks(2));
        assert_eq!((balanced.imbalance, balanced.lost), (1.0, 0.0));
    }
}
