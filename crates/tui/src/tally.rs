//! The counts a screen shows, kept between refreshes: per event, process,
//! command and function; per sampled place (for the annotated listing);
//! per caller edge between functions (for the panel of callers). Each map
//! has a ceiling: past it the coldest half is let go (their samples stay
//! in the totals, so shares stay shares of everything), so memory does not
//! grow with the samples however long `top` runs. With decay on, every
//! refresh keeps 7/8 of each count, as `perf top` decays, and the counts
//! that reach zero go.

use rustc_hash::FxHashMap;

use profiler_model::Location;

use crate::intake::{CommandId, Delivery, HitKey, Weight};
use crate::names::{CACHED_PLACES, FunctionId, MAX_FUNCTIONS, Names};
use profiler_model::Symbolizer;

/// The most rows (event, process, command, function) kept.
pub(crate) const MAX_ROWS: usize = 1 << 15;
/// The most sampled places kept (half of the places whose names are kept,
/// so that those of the places counted always fit).
pub(crate) const MAX_PLACES: usize = CACHED_PLACES / 2;
/// The most caller edges kept.
pub(crate) const MAX_EDGES: usize = 1 << 15;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct RowKey {
    pub event: u16,
    pub function: FunctionId,
    pub pid: u32,
    pub command: CommandId,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct EdgeKey {
    pub event: u16,
    pub callee: FunctionId,
    pub caller: FunctionId,
}

/// Counts over the time the screen covers.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub rows: FxHashMap<RowKey, Weight>,
    /// Samples by place, per event.
    pub places: FxHashMap<(u16, Location), u64>,
    pub edges: FxHashMap<EdgeKey, u64>,
    /// Per event: every sample counted, those let go included.
    pub totals: Vec<Weight>,
    pub lost: Vec<u64>,
    pub throttled: Vec<u64>,
    /// Samples at places whose module waits to be named.
    pending: FxHashMap<HitKey, Weight>,
}

impl Tally {
    pub(crate) fn new(events: usize) -> Tally {
        Tally {
            totals: vec![Weight::default(); events],
            lost: vec![0; events],
            throttled: vec![0; events],
            ..Tally::default()
        }
    }

    /// Names the places of `delivery` and adds its counts, emptying it;
    /// those at places that wait to be named (unless `name_all`) are kept
    /// for the next time. Where functions were let go, returns each old
    /// id's new one.
    pub(crate) fn add(
        &mut self,
        delivery: &mut Delivery,
        names: &mut Names,
        symbolizer: &dyn Symbolizer,
        name_all: bool,
    ) -> Option<Vec<Option<FunctionId>>> {
        let hits = &mut delivery.hits;
        for (key, weight) in self.pending.drain() {
            hits.entry(key).or_default().add(weight);
        }
        let places = hits.keys().map(|key| &key.location);
        let edge_places = delivery.edges.keys().flat_map(|e| [&e.callee, &e.caller]);
        // Waiting places are bounded too: past the ceiling, all are named.
        let all = name_all || hits.len() > MAX_PLACES;
        self.forget_names(names);
        names.name(places.chain(edge_places), symbolizer, all);
        for (key, weight) in hits.drain() {
            let Some(named) = names.get(&key.location) else {
                self.pending.insert(key, weight);
                continue;
            };
            if let Some(total) = self.totals.get_mut(key.event as usize) {
                total.add(weight);
            }
            let row = RowKey {
                event: key.event,
                function: named.function,
                pid: key.pid,
                command: key.command,
            };
            self.rows.entry(row).or_default().add(weight);
            let place = self.places.entry((key.event, key.location)).or_default();
            *place = place.saturating_add(weight.samples);
        }
        for (key, count) in delivery.edges.drain() {
            let (Some(callee), Some(caller)) = (names.get(&key.callee), names.get(&key.caller))
            else {
                continue;
            };
            let edge = EdgeKey {
                event: key.event,
                callee: callee.function,
                caller: caller.function,
            };
            let sum = self.edges.entry(edge).or_default();
            *sum = sum.saturating_add(count);
        }
        for (mine, theirs) in self.lost.iter_mut().zip(&delivery.lost) {
            *mine = mine.saturating_add(*theirs);
        }
        for (mine, theirs) in self.throttled.iter_mut().zip(&delivery.throttled) {
            *mine = mine.saturating_add(*theirs);
        }
        self.bound();
        (names.functions.len() > MAX_FUNCTIONS).then(|| self.forget_functions(names))
    }

    /// Past the ceiling of names kept, lets go of those of places no count
    /// holds (those of places counted stay: naming them again is what
    /// costs).
    fn forget_names(&self, names: &mut Names) {
        if names.named_places() <= CACHED_PLACES {
            return;
        }
        let counted: rustc_hash::FxHashSet<Location> =
            self.places.keys().map(|&(_, place)| place).collect();
        names.keep_places(|place| counted.contains(place));
    }

    /// Lets `names` go of the functions no row or edge counts any more;
    /// returns each old id's new one.
    fn forget_functions(&mut self, names: &mut Names) -> Vec<Option<FunctionId>> {
        let mut used = vec![false; names.functions.len()];
        let mut mark = |id: FunctionId| {
            if let Some(slot) = used.get_mut(id as usize) {
                *slot = true;
            }
        };
        self.rows.keys().for_each(|row| mark(row.function));
        self.edges.keys().for_each(|edge| {
            mark(edge.callee);
            mark(edge.caller);
        });
        let remap = names.keep(&used);
        let new = |id: FunctionId| remap.get(id as usize).copied().flatten();
        self.rows = std::mem::take(&mut self.rows)
            .into_iter()
            .filter_map(|(row, weight)| {
                Some((
                    RowKey {
                        function: new(row.function)?,
                        ..row
                    },
                    weight,
                ))
            })
            .collect();
        self.edges = std::mem::take(&mut self.edges)
            .into_iter()
            .filter_map(|(edge, n)| {
                let (callee, caller) = (new(edge.callee)?, new(edge.caller)?);
                Some((
                    EdgeKey {
                        callee,
                        caller,
                        ..edge
                    },
                    n,
                ))
            })
            .collect();
        remap
    }

    /// Keeps 7/8 of every count, letting go of those that reach zero.
    pub(crate) fn decay(&mut self) {
        let keep = |n: u64| n - n.div_ceil(8);
        self.rows.retain(|_, w| {
            w.samples = keep(w.samples);
            w.period = keep(w.period);
            w.samples > 0
        });
        self.places.retain(|_, n| {
            *n = keep(*n);
            *n > 0
        });
        self.edges.retain(|_, n| {
            *n = keep(*n);
            *n > 0
        });
        for total in &mut self.totals {
            total.samples = keep(total.samples);
            total.period = keep(total.period);
        }
    }

    /// Forgets every count.
    pub(crate) fn zero(&mut self) {
        let events = self.totals.len();
        *self = Tally::new(events);
    }

    /// Lets go of the coldest half of any map over its ceiling.
    fn bound(&mut self) {
        halve(&mut self.rows, MAX_ROWS, |w| w.samples);
        halve(&mut self.places, MAX_PLACES, |n| *n);
        halve(&mut self.edges, MAX_EDGES, |n| *n);
    }
}

/// Keeps the hottest half of `map` once it holds more than `ceiling`.
fn halve<K: Eq + std::hash::Hash, V>(
    map: &mut FxHashMap<K, V>,
    ceiling: usize,
    count: impl Fn(&V) -> u64,
) {
    if map.len() <= ceiling {
        return;
    }
    let mut counts: Vec<u64> = map.values().map(&count).collect();
    let keep = ceiling / 2;
    let (_, &mut threshold, _) = counts.select_nth_unstable_by(keep, |a, b| b.cmp(a));
    let mut kept = 0;
    map.retain(|_, value| {
        let n = count(value);
        let keep_it = n > threshold || (n == threshold && kept < keep);
        kept += usize::from(keep_it);
        keep_it
    });
    map.shrink_to(ceiling);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halving_keeps_the_hottest() {
        let mut map: FxHashMap<u32, u64> = (0..100).map(|i| (i, u64::from(i))).collect();
        halve(&mut map, 50, |n| *n);
        assert!(map.len() <= 51, "{}", map.len());
        assert!(map.contains_key(&99) && !map.contains_key(&10));
        let mut small: FxHashMap<u32, u64> = (0..10).map(|i| (i, 1)).collect();
        halve(&mut small, 50, |n| *n);
        assert_eq!(small.len(), 10);
    }

    #[test]
    fn names_and_places_stay_bounded_over_many_distinct_addresses() {
        use profiler_model::{FileOffset, Module, NoSymbols};
        let mut names = Names::default();
        names.add_modules(&[Module {
            path: "/bin/app".into(),
            build_id: None,
            pid: None,
        }]);
        let mut tally = Tally::new(1);
        let per_delivery = 8000;
        for round in 0..(4 * CACHED_PLACES / per_delivery) {
            let mut delivery = Delivery {
                lost: vec![0],
                throttled: vec![0],
                ..Delivery::default()
            };
            for i in 0..per_delivery {
                let key = HitKey {
                    event: 0,
                    pid: 7,
                    command: 0,
                    location: Location::Module {
                        module: 0,
                        offset: FileOffset((round * per_delivery + i) as u64),
                    },
                };
                delivery.hits.insert(
                    key,
                    Weight {
                        samples: 1,
                        period: 1,
                    },
                );
            }
            tally.add(&mut delivery, &mut names, &NoSymbols, true);
            assert!(names.named_places() <= CACHED_PLACES + per_delivery);
            assert!(tally.places.len() <= MAX_PLACES + per_delivery);
        }
        // Every sample is still in the totals.
        let all = (4 * CACHED_PLACES / per_delivery * per_delivery) as u64;
        assert_eq!(tally.totals[0].samples, all);
    }

    #[test]
    fn decay_keeps_seven_eighths_and_drops_zeros() {
        let mut tally = Tally::new(1);
        let key = |function| RowKey {
            event: 0,
            function,
            pid: 1,
            command: 0,
        };
        tally.rows.insert(
            key(0),
            Weight {
                samples: 800,
                period: 8,
            },
        );
        tally.rows.insert(
            key(1),
            Weight {
                samples: 1,
                period: 1,
            },
        );
        tally.decay();
        assert_eq!(tally.rows.get(&key(0)).map(|w| w.samples), Some(700));
        assert!(!tally.rows.contains_key(&key(1)));
    }
}
