//! perf's spellings of `report`'s options, and the values only perf's
//! syntax has (`-g graph,0.5,caller`, `-F overhead,sym`): each taken with
//! perf's meaning where the profiler has it, or refused with the reason.

use clap::Args;
use profiler_report::{RowFilter, SortKey, TreeDirection};

/// What `-g` alone means: perf report's default call graph.
pub(crate) const DEFAULT_CALL_GRAPH: &str = "graph,0.5,caller";

/// `perf report`'s options that have no other spelling here.
// The fields' docs are their --help text, where brackets are words
// (`[default]`, `[ and ]`), not links.
#[allow(rustdoc::broken_intra_doc_links)]
#[derive(Debug, Args)]
#[command(next_help_heading = "perf report's spellings")]
pub(crate) struct PerfReportArgs {
    /// The text report, as perf report --stdio prints it (the default)
    #[arg(long, conflicts_with = "format")]
    pub(crate) stdio: bool,

    /// Each function's own samples only, no Children column (the default)
    #[arg(long, overrides_with = "children")]
    pub(crate) no_children: bool,

    /// The call tree callers first, from main down (--call-graph caller)
    #[arg(short = 'G', long, conflicts_with = "call_graph")]
    pub(crate) inverted: bool,

    /// The Samples column (always shown)
    #[arg(short = 'n', long)]
    pub(crate) show_nr_samples: bool,

    /// The rows only, without the commented header (warnings still go to the standard
    /// error)
    #[arg(short = 'q', long)]
    pub(crate) quiet: bool,

    /// The commented header only: the recording and each event, without rows
    #[arg(long, conflicts_with_all = ["quiet", "format"])]
    pub(crate) header_only: bool,

    /// Only rows of samples taken under these command names; shares stay of the whole event
    #[arg(
        short = 'c',
        long = "comms",
        visible_alias = "comm",
        value_name = "COMM[,COMM...]",
        value_delimiter = ','
    )]
    pub(crate) comms: Vec<String>,

    /// Only rows of these modules (file name or path; [kernel.kallsyms] is the kernel); shares
    /// stay of the whole event
    #[arg(
        short = 'd',
        long = "dsos",
        visible_alias = "dso",
        value_name = "DSO[,DSO...]",
        value_delimiter = ','
    )]
    pub(crate) dsos: Vec<String>,

    /// Only rows of these functions (as the report names them); shares stay of the whole
    /// event
    #[arg(
        short = 'S',
        long = "symbols",
        value_name = "SYMBOL[,SYMBOL...]",
        value_delimiter = ','
    )]
    pub(crate) symbols: Vec<String>,

    /// Read N frames of each stack at most, from the sampled one: callers deeper than that
    /// count in no Children total and no call tree
    #[arg(long, value_name = "N")]
    pub(crate) max_stack: Option<usize>,

    /// perf's output fields: overhead and sample (always shown), overhead_children
    /// (--children), and sort keys as --sort takes them; +FIELDS adds to the default
    #[arg(
        short = 'F',
        long,
        value_name = "FIELD[,FIELD...]",
        value_parser = parse_fields,
        conflicts_with = "sort"
    )]
    pub(crate) fields: Option<Fields>,
}

impl PerfReportArgs {
    /// The rows `--comms`, `--dsos` and `--symbols` keep.
    pub(crate) fn row_filter(&self) -> RowFilter {
        RowFilter {
            comms: self.comms.clone(),
            dsos: self.dsos.clone(),
            symbols: self.symbols.clone(),
        }
    }
}

/// `-g`/`--call-graph`: perf's `print_type,threshold[,print_limit],order,
/// sort_key[,branch],value`, in any order, as far as it maps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CallGraphForm {
    /// `none` prints no tree.
    pub(crate) tree: bool,
    /// `None`: as perf orders it, callers first with `--children`, callees
    /// first without.
    pub(crate) order: Option<TreeDirection>,
    /// The share below which nodes are left out; `None`: --percent-limit.
    pub(crate) threshold: Option<f64>,
}

pub(crate) fn parse_report_call_graph(text: &str) -> Result<CallGraphForm, String> {
    let mut form = CallGraphForm {
        tree: true,
        order: None,
        threshold: None,
    };
    let mut numbers = 0;
    for term in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        match term {
            "graph" | "function" | "percent" => {}
            "none" => form.tree = false,
            "caller" => form.order = Some(TreeDirection::Caller),
            "callee" => form.order = Some(TreeDirection::Callee),
            _ => match term.parse::<f64>() {
                Ok(threshold) if numbers == 0 && (0.0..=100.0).contains(&threshold) => {
                    form.threshold = Some(threshold);
                    numbers += 1;
                }
                // perf's print_limit, 0 being unlimited.
                Ok(limit) if numbers == 1 && limit == 0.0 => numbers += 1,
                _ => return Err(call_graph_refusal(term)),
            },
        }
    }
    Ok(form)
}

/// Why a term of perf's `-g` is refused, and what to use.
fn call_graph_refusal(term: &str) -> String {
    let why = match term {
        "flat" | "folded" => {
            "one line per stack is `profiler export --format folded`; the tree is graph"
        }
        "fractal" => "nodes show shares of the whole event (graph), not of their branch",
        "address" | "srcline" => {
            "the tree's nodes are functions; --sort address or --sort line gives rows by \
             address or source line"
        }
        "branch" => "recordings keep no branch stacks",
        "period" | "count" => "nodes show their share (percent); --format json has the counts",
        _ if term.parse::<f64>().is_ok() => {
            "one threshold (0 to 100) is taken, and perf's print_limit only as 0 (no limit)"
        }
        _ => {
            "use graph or none, caller or callee, and a threshold in percent, e.g. -g \
             graph,0.5,caller; to read a recording, give -i FILE"
        }
    };
    format!("'{term}' is not taken: {why}")
}

/// `-F`/`--fields`, as far as it maps onto the columns here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Fields {
    /// The sort keys among the fields, in their order.
    pub(crate) keys: Vec<SortKey>,
    /// `overhead_children`: the Children column.
    pub(crate) children: bool,
    /// `+FIELDS`: added to the default columns.
    pub(crate) append: bool,
}

pub(crate) fn parse_fields(text: &str) -> Result<Fields, String> {
    let (append, list) = match text.strip_prefix('+') {
        Some(list) => (true, list),
        None => (false, text),
    };
    let mut fields = Fields {
        keys: Vec::new(),
        children: false,
        append,
    };
    for field in list.split(',').map(str::trim).filter(|f| !f.is_empty()) {
        match field {
            "overhead" | "sample" => {}
            "overhead_children" => fields.children = true,
            "period" => {
                return Err(
                    "'period' is not a column here: the text report shows shares and \
                     samples; --format json has each row's period"
                        .into(),
                );
            }
            _ if field.starts_with("overhead_") => {
                return Err(format!(
                    "'{field}': shares are not split by CPU mode; record with -e EVENT:u or \
                     EVENT:k for one side"
                ));
            }
            key => {
                for key in SortKey::parse_list(key)? {
                    if !fields.keys.contains(&key) {
                        fields.keys.push(key);
                    }
                }
            }
        }
    }
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perfs_call_graph_forms_map_in_any_order() {
        let form = parse_report_call_graph(DEFAULT_CALL_GRAPH).unwrap();
        assert_eq!(
            form,
            CallGraphForm {
                tree: true,
                order: Some(TreeDirection::Caller),
                threshold: Some(0.5),
            }
        );
        let form = parse_report_call_graph("callee,2,0,function,percent").unwrap();
        assert_eq!(form.order, Some(TreeDirection::Callee));
        assert_eq!(form.threshold, Some(2.0));
        assert_eq!(parse_report_call_graph("caller").unwrap().threshold, None);
        assert!(!parse_report_call_graph("none").unwrap().tree);
        for refused in [
            "fractal", "folded", "flat", "address", "branch", "count", "0.5,10", "x",
        ] {
            let error = parse_report_call_graph(refused).unwrap_err();
            assert!(error.contains("not taken: "), "{refused}: {error}");
        }
    }

    #[test]
    fn fields_become_sort_keys_and_columns() {
        let fields = parse_fields("overhead,sample,comm,dso,sym").unwrap();
        assert_eq!(
            fields.keys,
            [SortKey::Command, SortKey::Module, SortKey::Symbol]
        );
        assert!(!fields.children && !fields.append);
        let fields = parse_fields("+overhead_children,pid").unwrap();
        assert!(fields.children && fields.append);
        assert_eq!(fields.keys, [SortKey::Pid]);
        assert!(parse_fields("period").unwrap_err().contains("json"));
        assert!(
            parse_fields("overhead_sys")
                .unwrap_err()
                .contains("CPU mode")
        );
        assert!(parse_fields("cpu").unwrap_err().contains("'cpu'"));
    }
}
