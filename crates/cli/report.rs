//! `profiler report`: args -> StackOptions and ReportOptions -> read_stacks
//! (of one recording, or of every rank of a job) -> flat_profile, or with
//! `--ranks` rank_balance -> text or JSON. perf report's spellings are
//! resolved here into the same options.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use anyhow::Result;
use profiler_report::{
    Places, ReportOptions, SortKey, StackOptions, TaskDetail, TextOptions, TreeDirection,
    flat_profile, rank_balance, render_json, render_ranks_json, render_ranks_text,
    render_text_with,
};

use crate::args::{Format, ReportArgs};
use crate::job_input::{Inputs, open_inputs};

pub(crate) fn run(args: ReportArgs) -> Result<ExitCode> {
    let paths = match &args.file {
        Some(file) => vec![file.clone()],
        None => args.input.paths.clone(),
    };
    if args.tui {
        let [path] = &paths[..] else {
            anyhow::bail!("--tui browses one recording: give one -i FILE");
        };
        return crate::top::browse(path, &args.symbols, args.window);
    }
    let (given, children) = sort_keys(&args);
    let by_rank = given
        .as_ref()
        .is_some_and(|keys| keys.contains(&SortKey::Rank));
    let inputs = open_inputs(&paths, args.ranks || by_rank)?.only_rank(args.job.rank)?;
    if args.ranks {
        return report_ranks(&args, &inputs);
    }
    let mut sort = given.clone().unwrap_or_else(|| vec![SortKey::Symbol]);
    let stack_options = StackOptions {
        event: args.event.clone(),
        without_inline_frames: false,
        places: if sort.contains(&SortKey::Line) {
            Places::Lines
        } else if sort.contains(&SortKey::Address) {
            Places::Addresses
        } else {
            Places::None
        },
        filter: args.filter.filter(),
        // Stacks are told apart by thread only where the report shows
        // threads or processes.
        states: sort.contains(&SortKey::State),
        tasks: if args.threads {
            TaskDetail::Threads
        } else if sort.contains(&SortKey::Pid) {
            TaskDetail::Processes
        } else {
            TaskDetail::Commands
        },
        max_stack: args.perf.max_stack,
        ..StackOptions::default()
    };
    let stacks = inputs.read_stacks(&args.symbols, &stack_options)?;
    // As perf's default sort (comm,dso,sym): who ran the code is a column
    // as soon as more than one command did.
    let tells_tasks = sort.contains(&SortKey::Command) || sort.contains(&SortKey::Pid);
    if args.format == Format::Text && !tells_tasks && stacks.command_count() > 1 {
        sort.insert(0, SortKey::Command);
    }
    let (call_graph, call_graph_threshold) = call_graph(&args, children);
    let options = ReportOptions {
        sort,
        percent_limit: args.percent_limit,
        call_graph_threshold,
        children,
        call_graph,
        split_threads: args.threads,
        inline: args.inline,
        only: args.perf.row_filter(),
    };
    let profile = flat_profile(inputs.recording(), &stacks, &options);
    let mut out = BufWriter::new(io::stdout().lock());
    match args.format {
        Format::Text => {
            let text = TextOptions {
                quiet: args.perf.quiet,
                header_only: args.perf.header_only,
            };
            render_text_with(&profile, args.width.row_width(), text, &mut out)?
        }
        Format::Json => render_json(&profile, &mut out)?,
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// The columns asked for (`--sort`, or perf's `-F`), and whether the
/// Children column is one of them.
fn sort_keys(args: &ReportArgs) -> (Option<Vec<SortKey>>, bool) {
    let children = args.children && !args.perf.no_children;
    let Some(fields) = &args.perf.fields else {
        return (args.sort.clone(), children);
    };
    let mut keys = fields.keys.clone();
    if fields.append && !keys.contains(&SortKey::Symbol) {
        keys.insert(0, SortKey::Symbol);
    }
    let keys = (!keys.is_empty()).then_some(keys);
    (keys, children || fields.children)
}

/// The call tree asked for by `-g`/`--call-graph` or `-G`, and the share
/// below which its nodes are left out (`None`: the rows' limit).
fn call_graph(args: &ReportArgs, children: bool) -> (Option<TreeDirection>, Option<f64>) {
    if args.perf.inverted {
        return (Some(TreeDirection::Caller), None);
    }
    match args.call_graph {
        Some(form) if form.tree => {
            // perf's order where none is given: callers first with
            // --children, callees first without.
            let order = form.order.unwrap_or(match children {
                true => TreeDirection::Caller,
                false => TreeDirection::Callee,
            });
            (Some(order), form.threshold)
        }
        _ => (None, None),
    }
}

/// The least share of its event a function has in `report --ranks`,
/// unless `--percent-limit` says otherwise.
const RANKS_PERCENT_LIMIT: f64 = 0.5;

/// `report --ranks`: how evenly the ranks of a job spent their time, per
/// function.
fn report_ranks(args: &ReportArgs, inputs: &Inputs) -> Result<ExitCode> {
    let options = StackOptions {
        event: args.event.clone(),
        // Each function with the code inlined into it.
        without_inline_frames: true,
        filter: args.filter.filter(),
        tasks: TaskDetail::Commands,
        ..StackOptions::default()
    };
    let stacks = inputs.read_stacks(&args.symbols, &options)?;
    // A job's start-up spreads a few samples over hundreds of functions of
    // the MPI library, each "imbalanced": below half a percent they are
    // noise, unless a limit is given.
    let limit = match args.percent_limit > 0.0 {
        true => args.percent_limit,
        false => RANKS_PERCENT_LIMIT,
    };
    let balance = rank_balance(inputs.recording(), &stacks, limit);
    let mut out = BufWriter::new(io::stdout().lock());
    match args.format {
        Format::Text => render_ranks_text(&balance, &mut out)?,
        Format::Json => render_ranks_json(&balance, &mut out)?,
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
