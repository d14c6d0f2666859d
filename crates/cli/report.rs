//! `profiler report`: args -> ReportOptions -> flat_profile -> text or JSON.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use anyhow::Result;
use profiler_model::Recording;
use profiler_report::{ReportOptions, SortKey, flat_profile, render_json, render_text};

use crate::args::{self, Format, ReportArgs};
use crate::symbols::with_symbolizer;

pub fn run(args: ReportArgs) -> Result<ExitCode> {
    let recording = Recording::open(&args.input.path)?;
    let options = ReportOptions {
        event: args.event,
        sort: match args.sort {
            args::SortKey::Symbol => SortKey::Symbol,
            args::SortKey::Module => SortKey::Module,
        },
        percent_limit: args.percent_limit,
        fold_inline: args.no_inline,
    };
    let profile = with_symbolizer(&args.symbols, &recording, |symbolizer| {
        flat_profile(&recording, symbolizer, &options)
    })?;
    let mut out = BufWriter::new(io::stdout().lock());
    match args.format {
        Format::Text => render_text(&profile, &mut out)?,
        Format::Json => render_json(&profile, &mut out)?,
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
