//! `profiler report`: args -> StackOptions and ReportOptions -> read_stacks
//! -> flat_profile -> text or JSON. perf report's spellings are resolved
//! here into the same options.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use anyhow::Result;
use profiler_report::{
    Places, ReportOptions, SortKey, StackOptions, TaskDetail, TextOptions, TreeDirection,
    flat_profile, read_stacks, render_json, render_text_with,
};

use crate::args::{Format, ReportArgs};
use crate::symbols::with_symbolizer;

pub(crate) fn run(args: ReportArgs) -> Result<ExitCode> {
    let path = args.file.as_ref().unwrap_or(&args.input.path);
    let recording = crate::input::open(path)?;
    let (given, children) = sort_keys(&args);
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
    let stacks = with_symbolizer(&args.symbols, &recording, |symbolizer, unwinder| {
        read_stacks(&recording, symbolizer, unwinder, &stack_options)
    })?;
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
    let profile = flat_profile(&recording, &stacks, &options);
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
