//! What the rows of a flat report are told apart by: `perf report --sort`'s
//! keys and their combinations (`comm,dso,sym`), each a column.

/// What one row of a line or address profile stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlaceKind {
    Line,
    Address,
}

/// One key of `--sort`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortKey {
    /// The command name the samples were taken under (`comm`).
    Command,
    /// The process (`pid`).
    Pid,
    /// The module (`dso`, `module`).
    Module,
    /// The function (`sym`, `symbol`).
    Symbol,
    /// The source line (`line`, `srcline`).
    Line,
    /// The instruction address (`address`).
    Address,
    /// Whether the thread was running, or off the CPU blocked or
    /// preempted (`state`): splits off-CPU time by why.
    State,
    /// The MPI rank whose recording holds the samples (`rank`), when the
    /// recordings of a job are read together.
    Rank,
}

/// The keys `--sort` takes, as `name: key`.
const KEYS: &[(&str, SortKey)] = &[
    ("comm", SortKey::Command),
    ("pid", SortKey::Pid),
    ("dso", SortKey::Module),
    ("module", SortKey::Module),
    ("sym", SortKey::Symbol),
    ("symbol", SortKey::Symbol),
    ("line", SortKey::Line),
    ("srcline", SortKey::Line),
    ("address", SortKey::Address),
    ("state", SortKey::State),
    ("rank", SortKey::Rank),
];

impl SortKey {
    /// A comma-separated list of keys, e.g. `comm,dso,sym`.
    pub fn parse_list(text: &str) -> Result<Vec<SortKey>, String> {
        let mut keys = Vec::new();
        for name in text.split(',').map(str::trim) {
            let key = KEYS
                .iter()
                .find(|(known, _)| known.eq_ignore_ascii_case(name))
                .map(|(_, key)| *key)
                .ok_or_else(|| {
                    format!(
                        "unknown sort key '{name}'; use comm, pid, dso (or module), sym (or \
                         symbol), line (or srcline), address, state or rank, several separated by \
                         commas, e.g. comm,dso,sym"
                    )
                })?;
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        Ok(keys)
    }
}

/// What one row of a flat report stands for: the finest key given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RowKind {
    /// Commands, processes, states and/or ranks only.
    Tasks,
    Modules,
    Functions,
    Places(PlaceKind),
}

pub(crate) fn row_kind(keys: &[SortKey]) -> RowKind {
    let has = |key| keys.contains(&key);
    if has(SortKey::Address) {
        RowKind::Places(PlaceKind::Address)
    } else if has(SortKey::Line) {
        RowKind::Places(PlaceKind::Line)
    } else if has(SortKey::Symbol) {
        RowKind::Functions
    } else if has(SortKey::Module) {
        RowKind::Modules
    } else if keys.is_empty() {
        RowKind::Functions
    } else {
        RowKind::Tasks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_keys_and_their_combinations_parse() {
        use SortKey::*;
        assert_eq!(
            SortKey::parse_list("comm,dso,sym").unwrap(),
            [Command, Module, Symbol]
        );
        assert_eq!(SortKey::parse_list("symbol").unwrap(), [Symbol]);
        assert_eq!(SortKey::parse_list("pid, module").unwrap(), [Pid, Module]);
        assert_eq!(SortKey::parse_list("srcline").unwrap(), [Line]);
        assert_eq!(SortKey::parse_list("sym,sym").unwrap(), [Symbol]);
        assert_eq!(SortKey::parse_list("rank,sym").unwrap(), [Rank, Symbol]);
        let error = SortKey::parse_list("comm,cpu").unwrap_err();
        assert!(error.contains("'cpu'"), "{error}");
    }

    #[test]
    fn rows_are_of_the_finest_key() {
        use SortKey::*;
        assert_eq!(row_kind(&[Command]), RowKind::Tasks);
        assert_eq!(row_kind(&[Command, Pid]), RowKind::Tasks);
        assert_eq!(row_kind(&[State]), RowKind::Tasks);
        assert_eq!(row_kind(&[State, Symbol]), RowKind::Functions);
        assert_eq!(row_kind(&[Rank]), RowKind::Tasks);
        assert_eq!(row_kind(&[Command, Module]), RowKind::Modules);
        assert_eq!(row_kind(&[Module, Symbol]), RowKind::Functions);
        assert_eq!(row_kind(&[]), RowKind::Functions);
        assert_eq!(row_kind(&[Symbol, Line]), RowKind::Places(PlaceKind::Line));
    }
}
