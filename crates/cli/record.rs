//! `profiler record`: args -> RecordConfig -> Recorder::run -> recording file.

use std::io::BufWriter;
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow, bail};
use clap::ArgMatches;
use profiler_model::{AtomicFile, RecordingStats, RecordingWriter, Sampling, Trailer};
use profiler_sampler::{DEFAULT_RING_BYTES, EventRequest, RecordConfig, RecordOutcome, Recorder};

use crate::args::RecordArgs;

pub fn run(args: RecordArgs, matches: &ArgMatches) -> Result<ExitCode> {
    let (events, sampling) = event_requests(&args, matches)?;
    let config = RecordConfig {
        events,
        sampling,
        command: args.command,
        ring_bytes: DEFAULT_RING_BYTES,
    };
    let recorder = Recorder::new(config)?;
    for notice in recorder.notices() {
        eprintln!("profiler: {notice}");
    }
    let output = &args.output;
    let file = AtomicFile::create(output).map_err(|error| {
        anyhow!(
            "cannot write the recording to {}: {error}; choose another -o FILE",
            output.display()
        )
    })?;
    let mut writer = RecordingWriter::new(BufWriter::new(file), &recorder.header())
        .with_context(|| format!("cannot write {}", output.display()))?;
    let outcome = recorder.run(&mut writer)?;
    let stats = writer.stats();
    let trailer = Trailer {
        duration_ns: outcome.duration.as_nanos() as u64,
        outcome: outcome.exit.to_string(),
        ..Trailer::default()
    };
    let write_error = || format!("cannot write {}", output.display());
    let file = writer.finish(trailer).with_context(write_error)?;
    let file = file
        .into_inner()
        .map_err(|e| e.into_error())
        .with_context(write_error)?;
    file.commit().with_context(write_error)?;
    eprintln!(
        "profiler: {}",
        summary(&stats, &outcome, &output.display().to_string())
    );
    if let Some(advice) = loss_advice(&stats) {
        eprintln!("profiler: {advice}");
    }
    Ok(ExitCode::from(outcome.exit.code()))
}

/// Pairs each `-c`/`-F` with the `-e` before it; one given before any `-e`
/// is returned apart, for every event without its own.
fn event_requests(
    args: &RecordArgs,
    matches: &ArgMatches,
) -> Result<(Vec<EventRequest>, Option<Sampling>)> {
    let positions =
        |id: &str| -> Vec<usize> { matches.indices_of(id).into_iter().flatten().collect() };
    let event_positions = positions("events");
    let thresholds = positions("thresholds")
        .into_iter()
        .zip(args.thresholds.iter());
    let frequencies = positions("frequencies")
        .into_iter()
        .zip(args.frequencies.iter());
    let samplings = thresholds
        .map(|(i, &n)| (i, Sampling::Period(n)))
        .chain(frequencies.map(|(i, &hz)| (i, Sampling::Frequency(hz))));

    let mut requests: Vec<EventRequest> = args
        .events
        .iter()
        .map(|name| EventRequest {
            name: name.clone(),
            sampling: None,
        })
        .collect();
    let mut global = None;
    for (position, sampling) in samplings {
        let (slot, whom) = match event_positions.iter().rposition(|&e| e < position) {
            Some(index) => (
                &mut requests[index].sampling,
                format!("-e {}", args.events[index]),
            ),
            None => (&mut global, "the events".to_owned()),
        };
        if slot.is_some() {
            bail!("more than one -c/-F for {whom}; give at most one -c or -F after each -e");
        }
        *slot = Some(sampling);
    }
    Ok((requests, global))
}

fn summary(stats: &RecordingStats, outcome: &RecordOutcome, output: &str) -> String {
    let total = stats.total();
    let count = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let interrupted = match outcome.interrupted_by {
        Some(signal) => format!(" (interrupted by signal {signal})"),
        None => String::new(),
    };
    format!(
        "{} ({} lost, {} throttled) from {} and {} in {:.2} s; command {}{interrupted}; wrote {output}",
        count(total.samples, "sample", "samples"),
        total.lost,
        total.throttled,
        count(stats.processes, "process", "processes"),
        count(stats.threads, "thread", "threads"),
        outcome.duration.as_secs_f64(),
        outcome.exit,
    )
}

/// Advice when the kernel dropped more than 1% of the samples.
fn loss_advice(stats: &RecordingStats) -> Option<String> {
    let total = stats.total();
    let lost_share = total.lost as f64 / (total.samples + total.lost).max(1) as f64;
    (lost_share > 0.01).then(|| {
        format!(
            "{:.1}% of the samples were lost because the ring buffers filled up; sample less \
             often (a lower -F or a higher -c)",
            lost_share * 100.0
        )
    })
}
