//! `profiler hist`: args -> HistOptions -> histogram_table (of a recording,
//! or of a job's, summed) -> text, JSON or CSV.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use anyhow::{Context, Result};
use profiler_histogram::{BucketWidth, Scale};
use profiler_report::{
    HistOptions, histogram_table, job_histogram_table, render_hist_csv, render_hist_json,
    render_hist_text,
};

use crate::args::{HistArgs, HistFormat};
use crate::job_input::{Inputs, open_inputs};
use crate::symbols::with_symbolizer_for;

pub(crate) fn run(args: HistArgs) -> Result<ExitCode> {
    let options = HistOptions {
        event: args.event,
        module: args.module,
        width: args
            .bucket
            .map(BucketWidth::from_bits)
            .transpose()
            .context("--bucket")?,
        scale: args.scale.map(Scale::new).transpose().context("--scale")?,
    };
    let inputs = open_inputs(&args.input.paths, false)?;
    let table =
        with_symbolizer_for(
            &args.symbols,
            &inputs.recordings(),
            |symbolizer, _| match &inputs {
                Inputs::One(recording) => histogram_table(recording, symbolizer, &options),
                Inputs::Job(job) => job_histogram_table(job, symbolizer, &options),
            },
        )?;
    let mut out = BufWriter::new(io::stdout().lock());
    match args.format {
        HistFormat::Text => render_hist_text(&table, args.width.row_width(), &mut out)?,
        HistFormat::Json => render_hist_json(&table, &mut out)?,
        HistFormat::Csv => render_hist_csv(&table, &mut out)?,
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
