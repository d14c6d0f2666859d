//! `profiler record`: args -> RecordConfig -> Recorder::record -> recording
//! file (samples, or histograms in PAPI_profil mode) -> a summary on stderr.
//! The target is a command, or running processes or threads (`-p`, `-t`),
//! or CPUs (`-a`, `-C`).

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::ArgMatches;
use clap::parser::ValueSource;
use profiler_model::{
    CallGraph, DEFAULT_COMPRESSION_LEVEL, EventRole, Recording, RecordingHeader, RecordingStats,
    Sampling,
};
use profiler_report::{loss_advice, stack_advice, stack_completeness, stack_phrase};
use profiler_sampler::{
    DrainPriority, EventRequest, RecordConfig, RecordOutcome, Recorder, TargetEnd, TargetExit,
};
use profiler_symbols::ElfUnwinder;

use crate::args::{Frequency, RecordArgs, SymbolArgs};
use crate::env_options::VARIABLE;
use crate::exit_status::PROFILER_FAILED;
use crate::job::RankedRecord;
use crate::messages::say;
use crate::output::describe;
use crate::record_histogram::HistogramRequest;
use crate::record_output::{Finished, RecordingFile};
use crate::symbols;

pub(crate) fn run(mut args: RecordArgs, matches: &ArgMatches) -> Result<ExitCode> {
    // From here on, a signal that would end the profiler is noted instead:
    // before the command starts, nothing is started and nothing is left;
    // after, the recording ends whole.
    let _interrupts = profiler_sampler::catch_interrupts();
    refuse_perf_only(&args)?;
    // Under a launcher, rank 0 says what every rank would.
    let ranked = RankedRecord::from_env();
    if let Ok(options) = std::env::var(VARIABLE)
        && !options.trim().is_empty()
    {
        ranked.notice(&format!("options from {VARIABLE}: {options}"));
    }
    let target = std::mem::take(&mut args.target).target(std::mem::take(&mut args.command));
    let (events, sampling) = event_requests(&args, matches)?;
    let histogram = HistogramRequest::check(&args.histogram)?;
    let mut call_graph = match (args.call_graph, args.frame_pointers) {
        (Some(arg), _) => Some(arg.mode),
        (None, true) => Some(CallGraph::FramePointer),
        (None, false) => None,
    };
    let fp_stack_bytes = args.call_graph.and_then(|arg| arg.fp_stack_bytes);
    if histogram.is_some() && call_graph.is_some() {
        ranked.notice("--histogram keeps no call stacks; recording without them");
        call_graph = None;
    }
    // Everything the output needs is checked before the command runs: each
    // rank of a job its own name.
    let typed = matches.value_source("output") != Some(ValueSource::DefaultValue);
    let host = profiler_sampler::host_info().hostname;
    let output = ranked.output(&args.output, typed, &host, std::process::id())?;
    let file = RecordingFile::create(&output)?;
    if args.archive && !file.is_file() {
        bail!(
            "--archive adds to the recording once it is written, which needs a regular file: \
             give -o FILE"
        );
    }
    let recorder = Recorder::new(RecordConfig {
        events,
        sampling,
        target,
        call_graph,
        fp_stack_bytes,
        ring_bytes: args
            .mmap_pages
            .map(|pages| pages * profiler_sampler::page_size()),
        kernel: match (args.kernel, args.user_only) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        },
        duration: args.duration,
        wait_descendants: args.wait_descendants,
        off_cpu: args.off_cpu,
    })?;
    let histogram = match histogram {
        Some(request) => Some(request.options(recorder.header().program)?),
        None => None,
    };
    // The same on every run: said once per boot, not by each of a
    // script's records.
    if let Some(notice) = recorder.fallback_notice()
        && crate::once::first_since_boot("no-pmu")
    {
        say!("profiler: {notice}");
    }
    for notice in recorder.notices() {
        ranked.notice(notice);
    }
    // While recording, the unwind tables of the files on this machine find
    // the callers that frame-pointer chains skip (the vdso's too).
    let unwinder = ElfUnwinder::new(&symbols::options(&no_symbol_args(), true));
    let level = args.compression_level.unwrap_or(DEFAULT_COMPRESSION_LEVEL);
    let recorded = recorder.record(file, histogram, Some(&unwinder), level)?;
    // The interrupt that ended the recording is dealt with: one that comes
    // now is for what follows.
    profiler_sampler::clear_interrupt();
    for notice in &recorded.outcome.notices {
        ranked.notice(notice);
    }
    let finished = recorded.output.finish();
    let wrote = match &finished {
        Finished::Whole { path: Some(path) } => format!("wrote {}", path.display()),
        Finished::Whole { path: None } => format!("wrote {}", describe(&output)),
        Finished::Incomplete => "the recording failed: exit status 125".to_owned(),
    };
    let (stats, outcome) = (&recorded.stats, &recorded.outcome);
    let total = stats.total();
    let went_wrong = total.lost > 0
        || total.throttled > 0
        || matches!(finished, Finished::Incomplete)
        || outcome.exit_code() != 0
        || outcome.interrupted_by.is_some();
    if ranked.speaks_for_all() || went_wrong {
        ranked.problem(&summary(stats, outcome, &wrote));
    }
    print_event_counts(&recorded.header, stats, &ranked);
    if outcome.drain_priority == DrainPriority::NotAllowed
        && total.lost as f64 > total.samples.saturating_add(total.lost) as f64 * 0.01
    {
        ranked.problem(
            "the recorder may have waited for a CPU behind the command's threads: as root or \
             with CAP_SYS_NICE it drains at real-time priority",
        );
    }
    let written = match finished {
        Finished::Whole { path } => path,
        Finished::Incomplete => {
            if args.archive {
                ranked.problem("the recording was not written whole: it is not archived");
            }
            return Ok(ExitCode::from(PROFILER_FAILED));
        }
    };
    if let Some(path) = &written
        && call_graph.is_some()
        && ranked.speaks_for_all()
    {
        print_stack_completeness(path)?;
    }
    if let Some(path) = written.filter(|_| args.archive) {
        archive_recording(&path)?;
    }
    Ok(ExitCode::from(outcome.exit_code()))
}

/// `record --archive`: the recording at `path` rewritten with its archive.
/// An interrupt (Ctrl-C) once the recording has ended does not stop the
/// archive, which is finished first, and says so.
fn archive_recording(path: &Path) -> Result<()> {
    crate::archive::archive(&Recording::open(path)?, &no_symbol_args(), path)?;
    if let Some(signal) = profiler_sampler::interrupted() {
        say!(
            "profiler: interrupted (signal {signal}) while archiving: the archive was finished \
             first, and {} holds it",
            path.display()
        );
    }
    Ok(())
}

/// perf's options that have no meaning here, refused before anything runs.
fn refuse_perf_only(args: &RecordArgs) -> Result<()> {
    if args.user_regs.is_some() {
        bail!(
            "--user-regs is perf's: registers are copied with each sample where unwinding \
             needs them (--call-graph dwarf, and -g to find callers the chain skips); leave it \
             out"
        );
    }
    if args.user_callchains {
        bail!(
            "--user-callchains is perf's: call stacks here hold the kernel's frames only where \
             the kernel is sampled; give --user-only to sample user space alone"
        );
    }
    Ok(())
}

/// Each sampling event's own counts, when there are several (rank 0's
/// alone in a job), and advice for any that lost or was throttled above 1%;
/// with `--off-cpu`, how often threads left the CPU (its samples then are
/// those of its stacks).
fn print_event_counts(header: &RecordingHeader, stats: &RecordingStats, ranked: &RankedRecord) {
    let sampled: Vec<_> = (header.events.iter().zip(&stats.events))
        .filter(|(event, _)| event.leader.is_none() && event.role == EventRole::Sampled)
        .collect();
    let switch_out = (header.events.iter().zip(&stats.events))
        .find(|(event, _)| event.role == EventRole::SwitchOut)
        .map(|(_, stats)| stats);
    if ranked.speaks_for_all() && header.events.iter().any(|e| e.role == EventRole::OffCpu) {
        let stacks = match switch_out {
            Some(s) => format!("{} with the stacks they left from", s.samples),
            None => "their stacks not recorded".to_owned(),
        };
        let lost = stats.total().lost;
        say!(
            "profiler:   off-cpu: threads left the CPU {} times ({stacks}); {lost} records lost",
            stats.switches
        );
    }
    for (event, stats) in &sampled {
        if sampled.len() > 1 && ranked.speaks_for_all() {
            let samples = match stats.samples {
                1 => "1 sample".to_owned(),
                n => format!("{n} samples"),
            };
            say!(
                "profiler:   {}: {samples} ({} lost, {} throttled)",
                event.name,
                stats.lost,
                stats.throttled
            );
        }
        for advice in loss_advice(stats) {
            ranked.problem(&format!("{}: {advice}", event.name));
        }
    }
}

/// Says how many of the recorded stacks reached a root, with advice when
/// few did.
fn print_stack_completeness(output: &Path) -> Result<()> {
    let recording = Recording::open(output)?;
    let Some(call_graph) = recording.header.call_graph else {
        return Ok(());
    };
    let symbol_args = no_symbol_args();
    let symbolizer = symbols::symbolizer(&symbol_args, &recording);
    let unwinder = ElfUnwinder::new(&symbols::options(&symbol_args, true));
    for event in stack_completeness(&recording, &symbolizer, &unwinder)? {
        let phrase = stack_phrase(call_graph, event.rooted, event.samples);
        say!("profiler: {} stacks, {phrase}", event.event);
        if let Some(advice) = stack_advice(call_graph, event.rooted, event.samples) {
            say!("profiler: {advice}");
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
        jobs: None,
        no_symbol_cache: false,
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
    let max = || {
        let max = profiler_sampler::max_sample_rate();
        if let Some(max) = max {
            say!("profiler: -F max: sampling at {max} Hz (kernel.perf_event_max_sample_rate)");
        }
        max.ok_or_else(|| {
            anyhow::anyhow!("-F max: kernel.perf_event_max_sample_rate cannot be read; give -F HZ")
        })
    };
    let mut frequencies = Vec::new();
    for (position, frequency) in positions("frequencies").into_iter().zip(&args.frequencies) {
        let hz = match *frequency {
            Frequency::Hz(hz) => hz,
            Frequency::Max => max()?,
        };
        frequencies.push((position, hz));
    }
    let samplings = thresholds.map(|(i, &n)| (i, Sampling::Period(n))).chain(
        frequencies
            .into_iter()
            .map(|(i, hz)| (i, Sampling::Frequency(hz))),
    );

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
    // A command killed by the very signal that interrupted the recording
    // says so once: `killed by signal 2 (Interrupt)`.
    let interrupted = match (outcome.interrupted_by, outcome.end) {
        (Some(signal), TargetEnd::Exited(TargetExit::Signaled(killed))) if killed == signal => {
            String::new()
        }
        (Some(signal), _) => format!(" (interrupted by signal {signal})"),
        (None, _) => String::new(),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(end: TargetEnd, interrupted_by: Option<i32>) -> RecordOutcome {
        RecordOutcome {
            end,
            duration: std::time::Duration::from_secs(2),
            interrupted_by,
            ring_bytes: 0,
            notices: Vec::new(),
            drain_priority: Default::default(),
        }
    }

    #[test]
    fn a_signal_is_named_once_in_the_summary() {
        let stats = RecordingStats::default();
        let said = |end, interrupted_by| summary(&stats, &outcome(end, interrupted_by), "wrote x");
        let killed = said(TargetEnd::Exited(TargetExit::Signaled(2)), Some(2));
        assert!(
            killed.contains("command killed by signal 2 (Interrupt); wrote x"),
            "{killed}"
        );
        assert_eq!(killed.matches("signal").count(), 1, "{killed}");
        // Another signal, or a command that lived through it: both said.
        let escalated = said(TargetEnd::Exited(TargetExit::Signaled(15)), Some(2));
        assert!(
            escalated.contains("(Terminated) (interrupted by signal 2)"),
            "{escalated}"
        );
        let attached = said(TargetEnd::LeftRunning, Some(2));
        assert!(
            attached.ends_with("(interrupted by signal 2); wrote x"),
            "{attached}"
        );
    }
}
