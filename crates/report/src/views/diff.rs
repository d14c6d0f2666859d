//! `diff`: how each function's share changed between two recordings of the
//! same program, in points of the event's total and in samples. Functions
//! are matched by module and function name, since addresses and module
//! tables differ between runs; modules by the pairs `module_pairs` makes,
//! so that a renamed build is still the same program.

use std::collections::BTreeMap;

use crate::read::weight::Weight;
use crate::views::flat::{EventProfile, FunctionRow};
use crate::views::module_pairs::{ModulePair, PairedBy};

/// One function in both recordings (or in one of them).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DiffRow {
    pub name: String,
    /// The module, as the new recording names it.
    pub module: String,
    /// The module as the base recording names it, where that differs.
    pub base_module: Option<String>,
    /// Self and total samples and shares in the base recording.
    pub base: Share,
    pub new: Share,
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Share {
    pub self_weight: Weight,
    pub self_percent: f64,
    pub total_weight: Weight,
    pub total_percent: f64,
}

impl DiffRow {
    /// The change of the self share, in points.
    pub fn self_delta(&self) -> f64 {
        self.new.self_percent - self.base.self_percent
    }

    /// The change of the total share, in points.
    pub fn total_delta(&self) -> f64 {
        self.new.total_percent - self.base.total_percent
    }
}

/// The functions of two profiles of one event, most changed first.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileDiff {
    pub event: String,
    pub base_samples: u64,
    pub new_samples: u64,
    pub rows: Vec<DiffRow>,
    /// Functions that changed by less than this many points are left out.
    pub percent_limit: f64,
    /// The modules paired other than by name, that rows hold.
    pub pairs: Vec<ModulePair>,
}

/// Compares `new` with `base`, the modules of `base` taken for those of
/// `new` that `pairs` pair them with, leaving out functions whose self and
/// total shares both moved by less than `percent_limit` points.
pub fn diff_profiles(
    base: &EventProfile,
    new: &EventProfile,
    pairs: &[ModulePair],
    percent_limit: f64,
) -> ProfileDiff {
    let renamed: BTreeMap<&str, &ModulePair> = (pairs.iter())
        .filter(|pair| pair.by != PairedBy::Name)
        .map(|pair| (pair.base.as_str(), pair))
        .collect();
    let mut used: Vec<ModulePair> = Vec::new();
    let mut rows: BTreeMap<(String, String), DiffRow> = BTreeMap::new();
    let mut add = |row: &FunctionRow, is_new: bool| {
        let pair = (!is_new)
            .then(|| renamed.get(row.module.as_str()))
            .flatten();
        if let Some(pair) = pair
            && !used.contains(pair)
        {
            used.push((*pair).clone());
        }
        let module = pair.map_or(&row.module, |pair| &pair.new);
        let entry = rows
            .entry((module.clone(), row.name.clone()))
            .or_insert_with(|| DiffRow {
                name: row.name.clone(),
                module: module.clone(),
                ..DiffRow::default()
            });
        if let Some(pair) = pair {
            entry.base_module = Some(pair.base.clone());
        }
        let share = Share {
            self_weight: row.weight,
            self_percent: row.percent,
            total_weight: row.total,
            total_percent: row.total_percent,
        };
        match is_new {
            true => entry.new = share,
            false => entry.base = share,
        }
    };
    base.functions.iter().for_each(|row| add(row, false));
    new.functions.iter().for_each(|row| add(row, true));
    used.sort_by(|a, b| (a.by, &a.base).cmp(&(b.by, &b.base)));
    let mut rows: Vec<DiffRow> = rows
        .into_values()
        .filter(|r| r.self_delta().abs().max(r.total_delta().abs()) >= percent_limit)
        .collect();
    rows.sort_by(|a, b| {
        let key = |r: &DiffRow| (r.self_delta().abs(), r.total_delta().abs());
        key(b)
            .partial_cmp(&key(a))
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| (&a.name, &a.module).cmp(&(&b.name, &b.module)))
    });
    ProfileDiff {
        event: new.description.name.clone(),
        base_samples: base.stats.samples,
        new_samples: new.stats.samples,
        rows,
        percent_limit,
        pairs: used,
    }
}
