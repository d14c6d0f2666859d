//! `profiler doctor`: checkup -> what this machine lets the profiler do, as
//! text or JSON, ending with what to change where something blocks it.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use anyhow::Result;
use profiler_report::{render_checkup_json, render_checkup_text};
use profiler_sampler::checkup;

use crate::args::{DoctorArgs, Format};

pub(crate) fn run(args: DoctorArgs) -> Result<ExitCode> {
    let checkup = checkup();
    let mut out = BufWriter::new(io::stdout().lock());
    match args.format {
        Format::Text => render_checkup_text(&checkup, &mut out)?,
        Format::Json => render_checkup_json(&checkup, &mut out)?,
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
