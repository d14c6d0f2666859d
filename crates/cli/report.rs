//! `profiler report`: args -> StackOptions and ReportOptions -> read_stacks
//! -> flat_profile -> text or JSON.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use anyhow::Result;
use profiler_report::{
    Places, ReportOptions, SortKey, StackOptions, TreeDirection, flat_profile, read_stacks,
    render_json, render_text,
};

use crate::args::{self, Format, ReportArgs};
use crate::symbols::with_symbolizer;

pub fn run(args: ReportArgs) -> Result<ExitCode> {
    let recording = crate::input::open(&args.input.path)?;
    let sort = match args.sort {
        args::SortKey::Symbol => SortKey::Symbol,
        args::SortKey::Module => SortKey::Module,
        args::SortKey::Line => SortKey::Line,
        args::SortKey::Address => SortKey::Address,
    };
    let stack_options = StackOptions {
        event: args.event,
        fold_inline: args.no_inline,
        places: match sort {
            SortKey::Line => Places::Lines,
            SortKey::Address => Places::Addresses,
            SortKey::Symbol | SortKey::Module => Places::None,
        },
        filter: args.filter.filter(),
    };
    let options = ReportOptions {
        sort,
        percent_limit: args.percent_limit,
        children: args.children,
        call_graph: args.call_graph.map(|direction| match direction {
            args::TreeDirection::Caller => TreeDirection::Caller,
            args::TreeDirection::Callee => TreeDirection::Callee,
        }),
        split_threads: args.threads,
    };
    let stacks = with_symbolizer(&args.symbols, &recording, |symbolizer, unwinder| {
        read_stacks(&recording, symbolizer, unwinder, &stack_options)
    })?;
    let profile = flat_profile(&recording, &stacks, &options);
    let mut out = BufWriter::new(io::stdout().lock());
    match args.format {
        Format::Text => render_text(&profile, &mut out)?,
        Format::Json => render_json(&profile, &mut out)?,
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
