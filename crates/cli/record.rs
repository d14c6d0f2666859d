//! `profiler record`: args -> RecordConfig -> Recorder::run -> recording file
//! (samples, or histograms in PAPI_profil mode). The target is a command, or
//! running processes or threads (`-p`, `-t`), or CPUs (`-a`, `-C`).

use std::io;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow, bail};
use clap::ArgMatches;
use profiler_histogram::{BucketWidth, Flags, HistogramConfig, OnFull, Scale};
use profiler_model::Recording;
use profiler_model::{
    CallGraph, FileOffset, HistogramSettings, RecordSink, RecordingHeader, RecordingStats,
    RecordingWriter, Sampling, Svma, Trailer,
};
use profiler_report::{
    CallerSplicer, HistogramOptions, HistogramRecorder, ProgramRegion, loss_advice, stack_advice,
    stack_completeness, stack_phrase,
};
use profiler_sampler::{EventRequest, RecordConfig, RecordOutcome, Recorder, Target, TargetEnd};
use profiler_symbols::ElfUnwinder;

use crate::args::{CpuList, HistogramArgs, RecordArgs, SymbolArgs};
use crate::output::describe;
use crate::record_output::RecordingFile;
use crate::symbols;

pub fn run(mut args: RecordArgs, matches: &ArgMatches) -> Result<ExitCode> {
    let target = target(&mut args);
    let (events, sampling) = event_requests(&args, matches)?;
    let mut call_graph = match args.frame_pointers {
        true => Some(CallGraph::FramePointer),
        false => args.call_graph.map(|arg| arg.mode),
    };
    let fp_stack_bytes = args.call_graph.and_then(|arg| arg.fp_stack_bytes);
    if args.histogram.histogram && call_graph.is_some() {
        eprintln!("profiler: --histogram keeps no call stacks; recording without them");
        call_graph = None;
    }
    // Everything the output needs is checked before the command runs.
    let file = RecordingFile::create(&args.output)?;
    if args.archive && !file.is_file() {
        bail!(
            "--archive adds to the recording once it is written, which needs a regular file: \
             give -o FILE"
        );
    }
    let config = RecordConfig {
        events,
        sampling,
        target,
        call_graph,
        fp_stack_bytes,
        ring_bytes: args
            .mmap_pages
            .map(|pages| pages * profiler_sampler::page_size()),
        kernel: args.kernel,
        duration: args.duration,
        wait_descendants: args.wait_descendants,
    };
    let recorder = Recorder::new(config)?;
    let mut header = recorder.header();
    let histogram = match args.histogram.histogram {
        true => Some(histogram_options(&args.histogram, &mut header)?),
        false => None,
    };
    for notice in recorder.notices() {
        eprintln!("profiler: {notice}");
    }
    let output = &args.output;
    let mut writer = RecordingWriter::new(file, &header)?;
    writer.get_mut().start()?;
    let readable = writer.get_ref().is_file();
    // While recording, the unwind tables of the files on this machine find
    // the callers that frame-pointer chains skip (the vdso's too).
    let unwinder = ElfUnwinder::new(&symbols::options(&no_symbol_args(), true));
    let mut sink: Box<dyn Output + '_> = match histogram {
        Some(options) => Box::new(HistogramRecorder::new(writer, header.events.len(), options)),
        None if call_graph == Some(CallGraph::FramePointer) && fp_stack_bytes != Some(0) => {
            Box::new(CallerSplicer::new(writer, &unwinder))
        }
        None => Box::new(writer),
    };
    let outcome = recorder.run(&mut *sink)?;
    let stats = sink.stats();
    let trailer = Trailer {
        duration_ns: outcome.duration.as_nanos() as u64,
        outcome: outcome.describe(),
        ..Trailer::default()
    };
    for notice in &outcome.notices {
        eprintln!("profiler: {notice}");
    }
    let complete = sink.finish(trailer)?.finish()?;
    let wrote = match complete {
        true => format!("wrote {}", describe(output)),
        false => format!("kept what was written in {}", describe(output)),
    };
    eprintln!("profiler: {}", summary(&stats, &outcome, &wrote));
    // Each sampling event's own counts, when there are several, and advice
    // for any that lost or was throttled above 1%.
    let sampled: Vec<_> = (header.events.iter().zip(&stats.events))
        .filter(|(event, _)| event.leader.is_none())
        .collect();
    for (event, stats) in &sampled {
        if sampled.len() > 1 {
            let samples = match stats.samples {
                1 => "1 sample".to_owned(),
                n => format!("{n} samples"),
            };
            eprintln!(
                "profiler:   {}: {samples} ({} lost, {} throttled)",
                event.name, stats.lost, stats.throttled
            );
        }
        for advice in loss_advice(stats) {
            eprintln!("profiler: {}: {advice}", event.name);
        }
    }
    if call_graph.is_some() && readable && complete {
        report_stacks(output)?;
    }
    if args.archive && readable && complete {
        crate::archive::archive(&Recording::open(output)?, &no_symbol_args(), output)?;
    } else if args.archive {
        eprintln!("profiler: the recording was not written whole: it is not archived");
    }
    Ok(ExitCode::from(outcome.exit_code()))
}

/// What to record, from -p, -t, -a, -C and the command (clap has refused
/// the combinations that cannot be meant).
fn target(args: &mut RecordArgs) -> Target {
    let command = std::mem::take(&mut args.command);
    if !args.pids.is_empty() {
        Target::Processes(std::mem::take(&mut args.pids))
    } else if !args.tids.is_empty() {
        Target::Threads(std::mem::take(&mut args.tids))
    } else if args.all_cpus || args.cpus.is_some() {
        Target::SystemWide {
            cpus: args.cpus.take().map(|CpuList(cpus)| cpus),
            command: (!command.is_empty()).then_some(command),
        }
    } else {
        Target::Command(command)
    }
}

/// Says how many of the recorded stacks reached a root, with advice when
/// few did.
fn report_stacks(output: &Path) -> Result<()> {
    let recording = Recording::open(output)?;
    let Some(call_graph) = recording.header.call_graph else {
        return Ok(());
    };
    let symbol_args = no_symbol_args();
    let symbolizer = symbols::symbolizer(&symbol_args, &recording);
    let unwinder = ElfUnwinder::new(&symbols::options(&symbol_args, true));
    for event in stack_completeness(&recording, &symbolizer, &unwinder)? {
        let phrase = stack_phrase(call_graph, event.rooted, event.samples);
        eprintln!("profiler: {} stacks, {phrase}", event.event);
        if let Some(advice) = stack_advice(call_graph, event.rooted, event.samples) {
            eprintln!("profiler: {advice}");
        }
    }
    Ok(())
}

/// `record` takes no symbol flags: debug files are looked for where they
/// are by default.
fn no_symbol_args() -> SymbolArgs {
    SymbolArgs {
        debug_dirs: Vec::new(),
        full_signatures: false,
    }
}

/// Where the records go: into the file, or into histograms.
trait Output: RecordSink {
    fn stats(&self) -> RecordingStats;
    fn finish(self: Box<Self>, trailer: Trailer) -> io::Result<RecordingFile>;
}

impl Output for RecordingWriter<RecordingFile> {
    fn stats(&self) -> RecordingStats {
        RecordingWriter::stats(self)
    }
    fn finish(self: Box<Self>, trailer: Trailer) -> io::Result<RecordingFile> {
        RecordingWriter::finish(*self, trailer)
    }
}

impl Output for CallerSplicer<'_, RecordingWriter<RecordingFile>> {
    fn stats(&self) -> RecordingStats {
        self.sink().stats()
    }
    fn finish(self: Box<Self>, trailer: Trailer) -> io::Result<RecordingFile> {
        CallerSplicer::finish(*self)?.finish(trailer)
    }
}

impl Output for HistogramRecorder<RecordingFile> {
    fn stats(&self) -> RecordingStats {
        HistogramRecorder::stats(self)
    }
    fn finish(self: Box<Self>, trailer: Trailer) -> io::Result<RecordingFile> {
        HistogramRecorder::finish(*self, trailer)
    }
}

/// Checks the histogram flags, notes them in the header and returns what
/// the histograms need.
fn histogram_options(
    args: &HistogramArgs,
    header: &mut RecordingHeader,
) -> Result<HistogramOptions> {
    let width = BucketWidth::from_bits(args.bucket).context("--bucket")?;
    let scale = Scale::new(args.scale).context("--scale")?;
    let program_regions = match args.regions.is_empty() {
        true => Vec::new(),
        false => {
            let program = header.program.as_deref().ok_or_else(|| {
                anyhow!("--region needs the command's executable, which could not be resolved")
            })?;
            args.regions
                .iter()
                .map(|r| program_region(r, scale, Path::new(program)))
                .collect::<Result<_>>()?
        }
    };
    header.histogram = Some(HistogramSettings {
        bucket_bits: width.bits() as u8,
        scale: scale.value(),
        wrap: args.wrap,
        random: args.random,
        compress: args.compress,
        weighted: args.weighted,
        regions: args.regions.clone(),
    });
    Ok(HistogramOptions {
        config: HistogramConfig {
            width,
            on_full: if args.wrap {
                OnFull::Wrap
            } else {
                OnFull::Saturate
            },
            flags: Flags {
                random: args.random,
                compress: args.compress,
                weighted: args.weighted,
            },
            overflow_bin: false,
        },
        scale,
        program_regions,
        program: header.program.clone(),
    })
}

/// Parses `START:END[:SCALE]` (hexadecimal stated addresses of `program`)
/// into a region of the program's file.
fn program_region(text: &str, default_scale: Scale, program: &Path) -> Result<ProgramRegion> {
    let bad = || {
        anyhow!(
            "--region {text}: expected START:END[:SCALE], e.g. 0x1130:0x1200 or 0x1130:0x1200:131072"
        )
    };
    let parts: Vec<&str> = text.split(':').collect();
    let address = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).map_err(|_| bad());
    let (start, end) = match parts.as_slice() {
        [start, end] | [start, end, _] => (address(start)?, address(end)?),
        _ => return Err(bad()),
    };
    let scale = match parts.get(2) {
        Some(scale) => Scale::new(scale.parse().map_err(|_| bad())?)
            .with_context(|| format!("--region {text}"))?,
        None => default_scale,
    };
    if end <= start {
        bail!("--region {text}: the end must lie after the start");
    }
    let offsets = profiler_symbols::file_offsets(program, &[Svma(start), Svma(end - 1)])
        .with_context(|| format!("--region {text}"))?;
    match offsets.as_slice() {
        [Some(first), Some(last)] if last.0 - first.0 == end - 1 - start => Ok(ProgramRegion {
            start: FileOffset(first.0),
            size: end - start,
            scale,
        }),
        _ => bail!(
            "--region {text}: {} does not hold that range in one loadable segment; give addresses \
             as `nm` or `objdump -d` print them",
            program.display()
        ),
    }
}

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

fn summary(stats: &RecordingStats, outcome: &RecordOutcome, wrote: &str) -> String {
    let total = stats.total();
    let count = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let interrupted = match outcome.interrupted_by {
        Some(signal) => format!(" (interrupted by signal {signal})"),
        None => String::new(),
    };
    format!(
        "{} ({} lost, {} throttled) from {} and {} in {:.2} s; {} {}{interrupted}; {wrote}",
        count(total.samples, "sample", "samples"),
        total.lost,
        total.throttled,
        count(stats.processes, "process", "processes"),
        count(stats.threads, "thread", "threads"),
        outcome.duration.as_secs_f64(),
        match outcome.end {
            TargetEnd::Exited(_) => "command",
            _ => "target",
        },
        outcome.describe(),
    )
}
