//! `profiler export`: a recording in another tool's format, written
//! atomically.

use std::io::{BufWriter, Write};
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow};
use profiler_histogram::Scale;
use profiler_model::{AtomicFile, Recording};
use profiler_report::{HistOptions, write_gmon};

use crate::args::{ExportArgs, ExportFormat};

pub fn run(args: ExportArgs) -> Result<ExitCode> {
    let recording = Recording::open(&args.input.path)?;
    let output = &args.output;
    let file = AtomicFile::create(output).map_err(|error| {
        anyhow!(
            "cannot write {}: {error}; choose another -o FILE",
            output.display()
        )
    })?;
    let mut out = BufWriter::new(file);
    let summary = match args.format {
        ExportFormat::Gmon => {
            let options = HistOptions {
                event: args.event,
                module: args.module,
                width: None,
                scale: args.scale.map(Scale::new).transpose().context("--scale")?,
            };
            let summary = write_gmon(
                &recording,
                &crate::symbols::symbolizer(&args.symbols, &recording),
                &options,
                &mut out,
            )?;
            let capped = match summary.capped {
                0 => String::new(),
                n => format!(" ({n} bins capped at 65535)"),
            };
            format!(
                "{} samples of {} in {} in {} bins{capped}; read it with `gprof -p -b {} {}`",
                summary.samples,
                summary.event,
                summary.module,
                summary.bins,
                summary.path,
                output.display()
            )
        }
    };
    let write_error = || format!("cannot write {}", output.display());
    out.flush().with_context(write_error)?;
    let file = out
        .into_inner()
        .map_err(|e| e.into_error())
        .with_context(write_error)?;
    file.commit().with_context(write_error)?;
    eprintln!("profiler: wrote {}: {summary}", output.display());
    Ok(ExitCode::SUCCESS)
}
