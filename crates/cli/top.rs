//! `profiler top`: args -> RecordConfig -> Recorder::new -> the live screen
//! (or a table every interval when the output is not a terminal). `report
//! --tui` and `top --replay FILE` show a recording on the same screen.

use std::fs::{File, OpenOptions};
use std::io::{self, IsTerminal};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use profiler_events::format_cpu_list;
use profiler_model::{AsmSyntax, CallGraph, Disassembler, Sampling, Symbolizer};
use profiler_sampler::{EventRequest, RecordConfig, Recorder, Target};
use profiler_symbols::{ElfSymbolizer, ElfUnwinder, SourceFiles};
use profiler_tui::{BrowseOptions, Code, TopOptions, colors_allowed, top_screen, top_snapshots};

use crate::args::SymbolArgs;
use crate::messages::say;
use crate::top_args::TopArgs;

pub(crate) fn run(mut args: TopArgs) -> Result<ExitCode> {
    if let Some(path) = &args.replay {
        return browse(path, &args.symbols, Duration::from_secs(1));
    }
    let (target, described) = target(&mut args)?;
    let launches = matches!(
        &target,
        Target::Command(_)
            | Target::SystemWide {
                command: Some(_),
                ..
            }
    );
    let events = (args.events.iter())
        .map(|name| EventRequest {
            name: name.clone(),
            sampling: None,
        })
        .collect();
    let sampling =
        (args.threshold.map(Sampling::Period)).or(args.frequency.map(Sampling::Frequency));
    let recorder = Recorder::new(RecordConfig {
        target,
        events,
        sampling,
        call_graph: args.call_graph.then_some(CallGraph::FramePointer),
        fp_stack_bytes: None,
        ring_bytes: None,
        // As record: the kernel too where this user may sample it.
        kernel: args.kernel.then_some(true),
        duration: args.duration,
        wait_descendants: false,
        off_cpu: false,
    })?;
    for notice in recorder.notices() {
        say!("profiler: {notice}");
    }
    let mut options = crate::symbols::options(&args.symbols, true);
    // Naming keeps up with a second's new code on one thread; more would
    // only add to top's own share of the CPUs.
    options.threads = args.symbols.jobs.map_or(1, |n| n.get());
    // Live code is named a few addresses at a time, every second: keeping
    // the names on disk would cost more than it saves.
    options.cache_dir = None;
    let symbolizer = ElfSymbolizer::new(options.clone());
    let unwinder = ElfUnwinder::new(&options);
    let sources = SourceFiles::new(Vec::new());
    let code = code(&symbolizer, &sources);
    let unwinder = args.call_graph.then_some(&unwinder as _);
    let stdout = io::stdout();
    let screen = !args.stdio && stdout.is_terminal();
    let top = TopOptions {
        interval: args.delay,
        target: described,
        color: screen && colors_allowed(),
        rows: args.rows,
    };
    let outcome = if screen {
        // What the command prints would draw over the screen, and what it
        // reads would take the keys: it gets /dev/null instead.
        let quiet = launches.then(Quiet::start).transpose()?;
        let terminal = match &quiet {
            Some(quiet) => Some(File::from(quiet.out.try_clone()?)),
            None => None,
        };
        let shown = match terminal {
            Some(terminal) => top_screen(recorder, unwinder, code, &top, terminal),
            None => top_screen(recorder, unwinder, code, &top, stdout.lock()),
        };
        drop(quiet);
        shown?
    } else {
        top_snapshots(recorder, unwinder, code, &top, &mut stdout.lock())?
    };
    for notice in &outcome.record.notices {
        say!("profiler: {notice}");
    }
    Ok(match outcome.quit {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(outcome.record.exit_code()),
    })
}

/// `report --tui` and `top --replay`: the recording at `path` on the screen.
pub(crate) fn browse(path: &Path, symbols: &SymbolArgs, window: Duration) -> Result<ExitCode> {
    if !io::stdout().is_terminal() {
        bail!(
            "--tui shows the recording on a terminal, and the standard output is not one; \
             without --tui, `profiler report` prints it"
        );
    }
    let recording = crate::input::open(path)?;
    let symbolizer = crate::symbols::symbolizer(symbols, &recording);
    let sources = SourceFiles::new(Vec::new());
    let code = code(&symbolizer, &sources);
    let options = BrowseOptions {
        window,
        color: colors_allowed(),
    };
    profiler_tui::browse(&recording, code, &options, io::stdout().lock())?;
    Ok(ExitCode::SUCCESS)
}

/// Names and listings from `symbolizer`, sources where the debug info
/// says they are.
fn code<'a, S: Symbolizer + Disassembler>(symbolizer: &'a S, sources: &'a SourceFiles) -> Code<'a> {
    Code {
        symbolizer,
        disassembler: symbolizer,
        sources,
        syntax: AsmSyntax::Att,
    }
}

/// What to sample, and how the header says it. Without -a, -C, -p, -t or a
/// command: every CPU where that is allowed, else the user's own
/// processes, saying why.
fn target(args: &mut TopArgs) -> Result<(Target, String)> {
    let command = std::mem::take(&mut args.command);
    if args.target.is_empty() && command.is_empty() {
        return default_target(args.kernel);
    }
    let target = std::mem::take(&mut args.target).target(command);
    let described = match &target {
        Target::Processes(pids) => format!("pid {}", list(pids)),
        Target::Threads(tids) => format!("tid {}", list(tids)),
        Target::SystemWide {
            cpus: Some(cpus), ..
        } => format!("CPUs {}", format_cpu_list(cpus)),
        Target::SystemWide { cpus: None, .. } => "all CPUs".to_owned(),
        Target::Command(command) => {
            let program = command.first().map(|p| p.to_string_lossy());
            format!("command {}", program.unwrap_or_default())
        }
    };
    Ok((target, described))
}

fn list(ids: &[u32]) -> String {
    ids.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}

/// Every CPU where allowed, else the user's own processes.
fn default_target(kernel: bool) -> Result<(Target, String)> {
    let privileges = profiler_sampler::read_privileges();
    if privileges.may_count_cpus() {
        let target = Target::SystemWide {
            cpus: None,
            command: None,
        };
        return Ok((target, "all CPUs".to_owned()));
    }
    let pids = own_processes().context("listing your processes in /proc")?;
    if pids.is_empty() {
        bail!("no process of yours runs to show; give a command, -p PID or -a");
    }
    let (reason, advice) = privileges.refusal(kernel, true);
    say!(
        "profiler: every CPU cannot be sampled ({reason}): showing your own {} processes \
         instead; {advice}",
        pids.len()
    );
    Ok((Target::Processes(pids), "your processes".to_owned()))
}

/// The processes of this process's user (the profiler itself left out).
fn own_processes() -> io::Result<Vec<u32>> {
    let me = std::fs::metadata("/proc/self")?;
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc")? {
        let entry = entry?;
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(metadata) = entry.metadata() else {
            continue;
        };
        if metadata.uid() == me.uid() && pid != std::process::id() {
            pids.push(pid);
        }
    }
    pids.sort_unstable();
    Ok(pids)
}

/// While alive, the standard input, output and error are /dev/null (for
/// the command about to be launched); `out` is the terminal the standard
/// output was. Dropping it puts them back.
struct Quiet {
    out: OwnedFd,
    saved: [OwnedFd; 3],
}

impl Quiet {
    fn start() -> Result<Quiet> {
        let saved = [
            io::stdin().as_fd().try_clone_to_owned()?,
            io::stdout().as_fd().try_clone_to_owned()?,
            io::stderr().as_fd().try_clone_to_owned()?,
        ];
        let null = OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/null")?;
        let out = saved[1].try_clone()?;
        rustix::stdio::dup2_stdin(&null)?;
        rustix::stdio::dup2_stdout(&null)?;
        rustix::stdio::dup2_stderr(&null)?;
        Ok(Quiet { out, saved })
    }
}

impl Drop for Quiet {
    fn drop(&mut self) {
        let [stdin, stdout, stderr] = &self.saved;
        let _ = rustix::stdio::dup2_stdin(stdin);
        let _ = rustix::stdio::dup2_stdout(stdout);
        let _ = rustix::stdio::dup2_stderr(stderr);
    }
}
