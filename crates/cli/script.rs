//! `profiler script`: args -> ScriptOptions -> script -> one line per
//! sample on the standard output, in perf script's layout.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use anyhow::Result;
use profiler_report::{ScriptOptions, render_script, script};

use crate::args::ScriptArgs;
use crate::symbols::with_symbolizer;

pub(crate) fn run(args: ScriptArgs) -> Result<ExitCode> {
    let path = args.file.as_ref().unwrap_or(&args.input.path);
    let recording = crate::input::open(path)?;
    let options = ScriptOptions {
        event: args.event,
        filter: args.filter.filter(),
        no_inline: args.no_inline,
        max_stack: args.max_stack,
        hide_stacks: args.hide_call_graph,
    };
    let listed = with_symbolizer(&args.symbols, &recording, |symbolizer, unwinder| {
        script(&recording, symbolizer, unwinder, &options)
    })?;
    let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    render_script(&listed, &mut out)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
