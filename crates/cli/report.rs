//! `profiler report`: args -> StackOptions and ReportOptions -> read_stacks
//! -> flat_profile -> text or JSON.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use anyhow::Result;
use profiler_report::{
    Places, ReportOptions, SortKey, StackOptions, TaskDetail, TreeDirection, flat_profile,
    read_stacks, render_json, render_text,
};

use crate::args::{self, Format, ReportArgs};
use crate::symbols::with_symbolizer;

pub fn run(args: ReportArgs) -> Result<ExitCode> {
    let path = args.file.as_ref().unwrap_or(&args.input.path);
    if args.tui {
        return crate::top::browse(path, &args.symbols, args.window);
    }
    let recording = crate::input::open(path)?;
    let given = args.sort.clone();
    let mut sort = given.clone().unwrap_or_else(|| vec![SortKey::Symbol]);
    let stack_options = StackOptions {
        event: args.event,
        fold_inline: false,
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
        tasks: if args.threads {
            TaskDetail::Threads
        } else if sort.contains(&SortKey::Pid) {
            TaskDetail::Processes
        } else {
            TaskDetail::Commands
        },
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
    let options = ReportOptions {
        sort,
        percent_limit: args.percent_limit,
        children: args.children,
        call_graph: args.call_graph.map(|direction| match direction {
            args::TreeDirection::Caller => TreeDirection::Caller,
            args::TreeDirection::Callee => TreeDirection::Callee,
        }),
        split_threads: args.threads,
        inline: args.inline,
    };
    let profile = flat_profile(&recording, &stacks, &options);
    let mut out = BufWriter::new(io::stdout().lock());
    match args.format {
        Format::Text => render_text(&profile, &mut out)?,
        Format::Json => render_json(&profile, &mut out)?,
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
