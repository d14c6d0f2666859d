//! Hardware cache events (`PERF_TYPE_HW_CACHE`): a cache, an operation on
//! it and a result, named as perf names them (`L1-dcache-load-misses`,
//! `LLC-loads`, `dTLB-load-misses`, `branch-loads`), with perf's aliases
//! (`l1d`, `L2`, `read`, `miss`, ...). The kernel maps each combination to a
//! model-specific event, or refuses it.

/// `PERF_TYPE_HW_CACHE`.
pub const PERF_TYPE_HW_CACHE: u32 = 3;

/// A cache (`PERF_COUNT_HW_CACHE_*`): its perf name, aliases, id, and which
/// operations perf accepts on it.
struct Cache {
    name: &'static str,
    aliases: &'static [&'static str],
    id: u64,
    ops: &'static [Op],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Load = 0,
    Store = 1,
    Prefetch = 2,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Access = 0,
    Miss = 1,
}

const ALL_OPS: &[Op] = &[Op::Load, Op::Store, Op::Prefetch];

/// perf's tables (tools/perf/util/evsel.c: evsel__hw_cache,
/// evsel__hw_cache_stat).
const CACHES: &[Cache] = &[
    Cache {
        name: "L1-dcache",
        aliases: &["l1-d", "l1d", "L1-data"],
        id: 0,
        ops: ALL_OPS,
    },
    Cache {
        name: "L1-icache",
        aliases: &["l1-i", "l1i", "L1-instruction"],
        id: 1,
        ops: &[Op::Load, Op::Prefetch],
    },
    Cache {
        name: "LLC",
        aliases: &["L2"],
        id: 2,
        ops: ALL_OPS,
    },
    Cache {
        name: "dTLB",
        aliases: &["d-tlb", "Data-TLB"],
        id: 3,
        ops: ALL_OPS,
    },
    Cache {
        name: "iTLB",
        aliases: &["i-tlb", "Instruction-TLB"],
        id: 4,
        ops: &[Op::Load],
    },
    Cache {
        name: "branch",
        aliases: &["branches", "bpu", "btb", "bpc"],
        id: 5,
        ops: &[Op::Load],
    },
    Cache {
        name: "node",
        aliases: &[],
        id: 6,
        ops: ALL_OPS,
    },
];

/// Names of each operation: singular (before `-misses`), plural (alone),
/// then aliases.
const OP_NAMES: &[(Op, &[&str])] = &[
    (Op::Load, &["load", "loads", "read"]),
    (Op::Store, &["store", "stores", "write"]),
    (
        Op::Prefetch,
        &[
            "prefetch",
            "prefetches",
            "speculative-read",
            "speculative-load",
        ],
    ),
];

const OUTCOME_NAMES: &[(Outcome, &[&str])] = &[
    (Outcome::Access, &["refs", "Reference", "ops", "access"]),
    (Outcome::Miss, &["misses", "miss"]),
];

/// A hardware cache event, resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CacheEvent {
    /// perf's canonical name (`L1-dcache-load-misses`).
    pub name: String,
    /// `cache | op << 8 | result << 16`.
    pub config: u64,
}

/// What a name that starts like a cache event turned out to be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum CacheLookup {
    Found(CacheEvent),
    /// A cache and an operation perf does not count on it (`iTLB-stores`):
    /// the problem, said for the user.
    Invalid(String),
    NotACacheEvent,
}

/// Resolves a cache event name: `CACHE[-OP][-RESULT]`, either order after
/// the cache, in any case. Without an operation, loads; without a result,
/// accesses.
pub(crate) fn lookup(name: &str) -> CacheLookup {
    for cache in CACHES {
        for alias in std::iter::once(&cache.name).chain(cache.aliases) {
            let Some(rest) = strip_word(name, alias) else {
                continue;
            };
            let Some((op, outcome)) = parse_op_outcome(rest) else {
                continue;
            };
            let op = op.unwrap_or(Op::Load);
            let outcome = outcome.unwrap_or(Outcome::Access);
            if !cache.ops.contains(&op) {
                let counted = cache
                    .ops
                    .iter()
                    .map(|op| op_plural(*op))
                    .collect::<Vec<_>>()
                    .join(" and ");
                return CacheLookup::Invalid(format!(
                    "perf counts no {} on {}, only {counted} (e.g. {})",
                    op_plural(op),
                    cache.name,
                    canonical(cache, cache.ops[0], Outcome::Access)
                ));
            }
            return CacheLookup::Found(CacheEvent {
                name: canonical(cache, op, outcome),
                config: cache.id | (op as u64) << 8 | (outcome as u64) << 16,
            });
        }
    }
    CacheLookup::NotACacheEvent
}

/// Every valid cache event, in perf list's order.
pub(crate) fn all() -> Vec<CacheEvent> {
    let mut events = Vec::new();
    for cache in CACHES {
        for &op in cache.ops {
            for outcome in [Outcome::Access, Outcome::Miss] {
                events.push(CacheEvent {
                    name: canonical(cache, op, outcome),
                    config: cache.id | (op as u64) << 8 | (outcome as u64) << 16,
                });
            }
        }
    }
    events
}

/// The canonical names, for suggestions.
pub(crate) fn names() -> Vec<String> {
    all().into_iter().map(|e| e.name).collect()
}

fn canonical(cache: &Cache, op: Op, outcome: Outcome) -> String {
    match outcome {
        Outcome::Access => format!("{}-{}", cache.name, op_plural(op)),
        Outcome::Miss => format!("{}-{}-misses", cache.name, op_singular(op)),
    }
}

fn op_names(op: Op) -> &'static [&'static str] {
    OP_NAMES
        .iter()
        .find(|(o, _)| *o == op)
        .map_or(&[], |(_, names)| names)
}

fn op_singular(op: Op) -> &'static str {
    op_names(op)[0]
}

fn op_plural(op: Op) -> &'static str {
    op_names(op)[1]
}

/// `text` after a leading `word` (any case) that ends at a `-` or at the
/// end; the rest without that `-`.
fn strip_word<'a>(text: &'a str, word: &str) -> Option<&'a str> {
    let head = text.get(..word.len())?;
    if !head.eq_ignore_ascii_case(word) {
        return None;
    }
    let rest = &text[word.len()..];
    match rest.strip_prefix('-') {
        Some(rest) if !rest.is_empty() => Some(rest),
        Some(_) => None,
        None if rest.is_empty() => Some(rest),
        None => None,
    }
}

/// Up to one operation and one result, in either order, `-`-separated.
fn parse_op_outcome(mut rest: &str) -> Option<(Option<Op>, Option<Outcome>)> {
    let mut op = None;
    let mut outcome = None;
    while !rest.is_empty() {
        let mut matched = false;
        // Longest names first, so that `speculative-read` is not `speculative`.
        let mut candidates: Vec<(&str, Result<Op, Outcome>)> = OP_NAMES
            .iter()
            .flat_map(|(o, names)| names.iter().map(move |n| (*n, Ok(*o))))
            .chain(
                OUTCOME_NAMES
                    .iter()
                    .flat_map(|(r, names)| names.iter().map(move |n| (*n, Err(*r)))),
            )
            .collect();
        candidates.sort_by_key(|(name, _)| std::cmp::Reverse(name.len()));
        for (name, what) in candidates {
            let Some(after) = strip_word(rest, name) else {
                continue;
            };
            match what {
                Ok(o) if op.is_none() => op = Some(o),
                Err(r) if outcome.is_none() => outcome = Some(r),
                _ => return None,
            }
            rest = after;
            matched = true;
            break;
        }
        if !matched {
            return None;
        }
    }
    Some((op, outcome))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(name: &str) -> u64 {
        match lookup(name) {
            CacheLookup::Found(event) => event.config,
            other => panic!("{name}: {other:?}"),
        }
    }

    fn canonical_name(name: &str) -> String {
        match lookup(name) {
            CacheLookup::Found(event) => event.name,
            other => panic!("{name}: {other:?}"),
        }
    }

    #[test]
    fn perf_names_encode_cache_op_and_result() {
        assert_eq!(config("L1-dcache-load-misses"), 0x10000);
        assert_eq!(config("L1-dcache-loads"), 0);
        assert_eq!(config("L1-dcache-stores"), 0x100);
        assert_eq!(config("L1-dcache-prefetch-misses"), 0x10200);
        assert_eq!(config("L1-icache-load-misses"), 0x10001);
        assert_eq!(config("LLC-loads"), 2);
        assert_eq!(config("LLC-store-misses"), 0x10102);
        assert_eq!(config("dTLB-load-misses"), 0x10003);
        assert_eq!(config("iTLB-loads"), 4);
        assert_eq!(config("branch-loads"), 5);
        assert_eq!(config("branch-load-misses"), 0x10005);
        assert_eq!(config("node-prefetches"), 0x206);
    }

    #[test]
    fn aliases_and_defaults_resolve_to_the_canonical_name() {
        assert_eq!(canonical_name("l1d-read-miss"), "L1-dcache-load-misses");
        assert_eq!(canonical_name("L1-dcache"), "L1-dcache-loads");
        assert_eq!(canonical_name("L1-dcache-misses"), "L1-dcache-load-misses");
        assert_eq!(canonical_name("L2-write"), "LLC-stores");
        assert_eq!(canonical_name("llc-miss-load"), "LLC-load-misses");
        assert_eq!(
            canonical_name("Data-TLB-speculative-read-access"),
            "dTLB-prefetches"
        );
        assert_eq!(canonical_name("bpu-loads"), "branch-loads");
        assert_eq!(canonical_name("L1-data-loads"), "L1-dcache-loads");
    }

    #[test]
    fn ops_perf_does_not_count_are_refused_and_others_are_not_cache_events() {
        let CacheLookup::Invalid(problem) = lookup("iTLB-stores") else {
            panic!("iTLB-stores");
        };
        assert!(
            problem.contains("no stores on iTLB, only loads"),
            "{problem}"
        );
        assert_eq!(lookup("L1-dcache-load-load"), CacheLookup::NotACacheEvent);
        assert_eq!(lookup("cycles"), CacheLookup::NotACacheEvent);
        assert_eq!(lookup("L1-dcachex"), CacheLookup::NotACacheEvent);
        assert_eq!(lookup("LLC-"), CacheLookup::NotACacheEvent);
    }

    #[test]
    fn the_list_has_every_valid_combination_once() {
        let all = all();
        assert_eq!(all.len(), 32);
        assert_eq!(all[0].name, "L1-dcache-loads");
        assert_eq!(all[1].name, "L1-dcache-load-misses");
        for event in &all {
            assert_eq!(config(&event.name), event.config, "{}", event.name);
        }
    }
}
