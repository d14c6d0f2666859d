//! `stat`: counting events the cputrack / `perf stat` way: no samples and
//! no ring buffers, only counters read at the end (and every interval, if
//! asked).
//!
//! Every counter reads `TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING`: when the
//! kernel has more events to count than the PMU has counters it rotates
//! them, and a count is then scaled by enabled / running and reported with
//! the share of the time it ran.
//!
//! Targets: a launched command (one counter per event, inherited by its
//! threads and children, enabled at its exec: a counter that is never
//! mapped needs no per-CPU split), the threads of running processes (one
//! counter per event per thread, inherited by threads they start later), or
//! whole CPUs (one counter per event per CPU, every task on it).

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use perf_event::events::Event;
use perf_event::{Builder, Counter, ReadFormat};
use perf_event_open_sys::bindings::perf_event_attr;

use crate::command::{ResolvedCommand, resolve_command};
use crate::error::SamplerError;
use crate::event::EventSpec;
use crate::launch::{self, RunningChild, TargetExit};
use crate::privileges::Privileges;
use crate::refusal::{self, OpenScope};
use crate::{signals, sysinfo, tasks};

/// The events counted when none is named: those `perf stat` shows.
pub const DEFAULT_STAT_EVENTS: &[&str] = &[
    "task-clock",
    "context-switches",
    "cpu-migrations",
    "page-faults",
    "cycles",
    "instructions",
];

/// The shortest interval between two printed counts.
pub const MIN_INTERVAL: Duration = Duration::from_millis(10);

/// How often the counting loop wakes to check on the target.
const POLL_INTERVAL: Duration = Duration::from_millis(100);
/// How often it looks for the command's exit where the kernel cannot tell
/// of it (before Linux 5.3, without `pidfd_open`).
const SHORT_POLL_INTERVAL: Duration = Duration::from_millis(2);
/// After an interrupt, how long the command gets to exit by itself before
/// it is sent SIGTERM, and then SIGKILL.
const TERMINATE_AFTER: Duration = Duration::from_secs(1);
const KILL_AFTER: Duration = Duration::from_secs(3);

/// What to count, where, and for how long.
#[derive(Clone, Debug)]
pub struct StatConfig {
    /// The `-e` values, each one event or a comma-separated list; empty
    /// means [`DEFAULT_STAT_EVENTS`].
    pub events: Vec<String>,
    pub target: StatTarget,
    /// Report the counts of every interval as well as the totals.
    pub interval: Option<Duration>,
    /// Stop after this long (not with a command, which is counted until it
    /// exits).
    pub duration: Option<Duration>,
    /// One set of counts per thread (processes and threads only).
    pub per_thread: bool,
}

/// What the counters follow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StatTarget {
    /// Launch this command and count it and its descendants until it exits.
    Command(Vec<OsString>),
    /// Every thread of these running processes.
    Processes(Vec<u32>),
    /// These threads.
    Threads(Vec<u32>),
    /// Every online CPU.
    AllCpus,
    /// These CPUs.
    Cpus(Vec<usize>),
}

/// A count as the kernel reports it, or the sum of several.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Count {
    /// Events counted while the counter ran.
    pub raw: u64,
    /// The estimate for the whole time it was enabled: raw × enabled /
    /// running.
    pub scaled: u64,
    pub enabled_ns: u64,
    pub running_ns: u64,
}

impl Count {
    fn new(raw: u64, enabled_ns: u64, running_ns: u64) -> Count {
        let scaled = match running_ns {
            0 => 0,
            _ if running_ns >= enabled_ns => raw,
            _ => (u128::from(raw) * u128::from(enabled_ns) / u128::from(running_ns))
                .min(u128::from(u64::MAX)) as u64,
        };
        Count {
            raw,
            scaled,
            enabled_ns,
            running_ns,
        }
    }

    /// Whether the counter ran whenever it was enabled at all: `<not
    /// counted>` otherwise. (A task's counter is enabled only while the
    /// task runs; one that never ran counted nothing, rightly.)
    pub fn was_counted(&self) -> bool {
        self.running_ns > 0 || self.enabled_ns == 0
    }

    /// The share of its enabled time the counter ran, in percent: below 100
    /// when the kernel multiplexed it with other events.
    pub fn running_percent(&self) -> Option<f64> {
        (self.enabled_ns > 0)
            .then(|| (self.running_ns as f64 / self.enabled_ns as f64 * 100.0).min(100.0))
    }

    fn add(&mut self, other: &Count) {
        self.raw += other.raw;
        self.scaled += other.scaled;
        self.enabled_ns += other.enabled_ns;
        self.running_ns += other.running_ns;
    }

    /// What was counted since `earlier`, scaled on its own times.
    fn since(&self, earlier: &Count) -> Count {
        Count::new(
            self.raw.saturating_sub(earlier.raw),
            self.enabled_ns.saturating_sub(earlier.enabled_ns),
            self.running_ns.saturating_sub(earlier.running_ns),
        )
    }
}

/// One event's count, or why there is none.
#[derive(Clone, Debug, PartialEq)]
pub enum EventValue {
    Counted(Count),
    /// The machine cannot count it (`<not supported>`).
    NotSupported {
        reason: String,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct EventCount {
    /// The event as the user named it (its canonical name by default).
    pub event: String,
    /// What one occurrence is: `ns` for the clocks, `events` otherwise.
    pub unit: &'static str,
    pub value: EventValue,
}

/// The counts of one thread (with `per_thread`).
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadCount {
    pub pid: u32,
    pub tid: u32,
    /// Its name (`comm`) when the counting began.
    pub name: Option<String>,
    pub events: Vec<EventCount>,
}

/// The counts over some span: the whole run, or one interval.
#[derive(Clone, Debug, PartialEq)]
pub struct StatCounts {
    /// Wall time since counting began (at the span's end).
    pub elapsed: Duration,
    /// The span's length in wall time.
    pub span: Duration,
    pub events: Vec<EventCount>,
    /// Per thread, with `per_thread`; empty otherwise.
    pub threads: Vec<ThreadCount>,
}

/// How a count ended.
#[derive(Clone, Debug, PartialEq)]
pub struct StatOutcome {
    pub totals: StatCounts,
    /// The command's exit, when a command was counted.
    pub exit: Option<TargetExit>,
    /// The signal that interrupted counting, if one did.
    pub interrupted_by: Option<i32>,
    /// CPU time the command and its reaped descendants spent in user space
    /// and in the kernel, as `wait` reports it.
    pub user_time: Option<Duration>,
    pub system_time: Option<Duration>,
}

/// An event to count, checked against the kernel.
#[derive(Clone, Debug)]
struct StatEvent {
    label: String,
    spec: EventSpec,
    /// Why the machine cannot count it, if it cannot.
    unsupported: Option<String>,
}

#[derive(Clone, Debug)]
struct Task {
    pid: u32,
    tid: u32,
    name: Option<String>,
}

#[derive(Clone, Debug)]
enum Target {
    Command(ResolvedCommand),
    /// Threads; of whole processes when `processes` names them.
    Tasks {
        tasks: Vec<Task>,
        processes: Vec<u32>,
    },
    Cpus(Vec<usize>),
}

/// A count, checked and ready to run: events known and accepted by the
/// kernel, target found.
#[derive(Debug)]
pub struct Stat {
    events: Vec<StatEvent>,
    target: Target,
    description: String,
    interval: Option<Duration>,
    duration: Option<Duration>,
    per_thread: bool,
    notices: Vec<String>,
}

impl Stat {
    /// Checks everything that can be checked before counting: the options
    /// against the target, the event names, that the kernel can count each
    /// event here (one it cannot becomes a `<not supported>` row), and that
    /// the command, processes, threads or CPUs exist.
    pub fn new(config: StatConfig) -> Result<Stat, SamplerError> {
        check_options(&config)?;
        let privileges = Privileges::read();
        let cpu_wide = matches!(config.target, StatTarget::AllCpus | StatTarget::Cpus(_));
        let mut notices = Vec::new();
        let events = resolve_events(&config, cpu_wide, &privileges, &mut notices)?;
        let (target, description) = resolve_target(&config.target)?;
        Ok(Stat {
            events,
            target,
            description,
            interval: config.interval,
            duration: config.duration,
            per_thread: config.per_thread,
            notices,
        })
    }

    /// One-line notices for the user (events not supported here, user-space
    /// counting only).
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// What is counted, for a heading: `'./app arg'`, `process 1234`,
    /// `all CPUs`.
    pub fn target(&self) -> &str {
        &self.description
    }

    /// Counts until the command exits, every counted thread has exited,
    /// the duration has passed, or an interrupt (Ctrl-C, SIGTERM, SIGHUP)
    /// arrives; after an interrupt a command gets a moment to exit before it
    /// is terminated. `on_interval` gets the counts of every interval.
    pub fn run(
        self,
        on_interval: &mut dyn FnMut(&StatCounts) -> io::Result<()>,
    ) -> Result<StatOutcome, SamplerError> {
        let _interrupts = signals::catch_interrupts();
        let mut counters = Counters::new(&self);
        let children_before = children_cpu_time();
        let (started, mut child, exits) = match &self.target {
            Target::Command(command) => {
                let suspended =
                    launch::spawn_suspended(command).map_err(|error| SamplerError::System {
                        what: "fork",
                        error,
                    })?;
                counters.open_command(&self.events, suspended.pid())?;
                // Opened while the child cannot have been reaped, so the pid
                // is still its.
                let exits = pidfd_open(suspended.pid());
                let child = suspended.resume().map_err(|error| SamplerError::Exec {
                    command: command.display.clone(),
                    error,
                })?;
                (Instant::now(), Some(child), exits)
            }
            Target::Tasks { tasks, .. } => {
                counters.open_tasks(&self.events, tasks)?;
                counters.enable()?;
                (Instant::now(), None, None)
            }
            Target::Cpus(cpus) => {
                counters.open_cpus(&self.events, cpus)?;
                counters.enable()?;
                (Instant::now(), None, None)
            }
        };
        let followed = self.follow(
            &mut counters,
            child.as_mut(),
            exits.as_ref().map(AsFd::as_fd),
            started,
            on_interval,
        );
        let exit = match &mut child {
            Some(child) => Some(child.wait().map_err(|error| SamplerError::System {
                what: "wait",
                error,
            })?),
            None => None,
        };
        let interrupted_by = followed?;
        let elapsed = started.elapsed();
        let totals = counters.read(elapsed, elapsed, false)?;
        let (user_time, system_time) = match (child, children_before, children_cpu_time()) {
            (Some(_), Some(before), Some(after)) => (
                Some(after.0.saturating_sub(before.0)),
                Some(after.1.saturating_sub(before.1)),
            ),
            _ => (None, None),
        };
        Ok(StatOutcome {
            totals,
            exit,
            interrupted_by,
            user_time,
            system_time,
        })
    }

    /// Waits for the end, reporting every interval; returns the signal that
    /// interrupted counting.
    fn follow(
        &self,
        counters: &mut Counters,
        mut child: Option<&mut RunningChild>,
        exits: Option<BorrowedFd<'_>>,
        started: Instant,
        on_interval: &mut dyn FnMut(&StatCounts) -> io::Result<()>,
    ) -> Result<Option<i32>, SamplerError> {
        let deadline = self.duration.map(|d| started + d);
        let mut next_report = self.interval.map(|i| started + i);
        let mut last_report = Duration::ZERO;
        let mut interrupt: Option<(i32, Instant)> = None;
        let mut escalated = 0;
        loop {
            let now = Instant::now();
            // Without a descriptor that tells of the command's exit, look
            // often: the wall time counts until it is seen.
            let poll = match (&child, exits) {
                (Some(_), None) => SHORT_POLL_INTERVAL,
                _ => POLL_INTERVAL,
            };
            let wake = [Some(now + poll), next_report, deadline]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(now);
            wait(exits, wake.saturating_duration_since(now))?;
            if let (Some(at), Some(interval)) = (next_report, self.interval)
                && Instant::now() >= at
            {
                let elapsed = started.elapsed();
                let counts = counters.read(elapsed, elapsed - last_report, true)?;
                last_report = elapsed;
                on_interval(&counts).map_err(|error| SamplerError::System {
                    what: "writing the counts",
                    error,
                })?;
                next_report = Some(at + interval);
            }
            if interrupt.is_none() {
                interrupt = signals::received().map(|signal| (signal, Instant::now()));
            }
            let Some(child) = child.as_deref_mut() else {
                if interrupt.is_some()
                    || deadline.is_some_and(|d| Instant::now() >= d)
                    || !counters.any_task_alive()
                {
                    return Ok(interrupt.map(|(signal, _)| signal));
                }
                continue;
            };
            let exited = child.try_wait().map_err(|error| SamplerError::System {
                what: "wait",
                error,
            })?;
            if exited.is_some() {
                return Ok(interrupt.map(|(signal, _)| signal));
            }
            let Some((_, since)) = interrupt else {
                continue;
            };
            let waited = since.elapsed();
            if escalated == 0 && waited >= TERMINATE_AFTER {
                child.signal(libc::SIGTERM);
                escalated = 1;
            } else if escalated == 1 && waited >= KILL_AFTER {
                child.signal(libc::SIGKILL);
                escalated = 2;
            }
        }
    }
}

/// Refuses option combinations that mean nothing for the target.
fn check_options(config: &StatConfig) -> Result<(), SamplerError> {
    let problem = |problem: &str| {
        Err(SamplerError::InvalidStat {
            problem: problem.to_owned(),
        })
    };
    let tasks = matches!(
        config.target,
        StatTarget::Processes(_) | StatTarget::Threads(_)
    );
    if config.per_thread && !tasks {
        return problem(
            "--per-thread counts the threads of running processes: give -p PID or -t TID \
             (a command's threads are counted together)",
        );
    }
    if config.duration.is_some() && matches!(config.target, StatTarget::Command(_)) {
        return problem(
            "--duration applies to -p, -t, -a and -C; a command is counted until it exits",
        );
    }
    if config.duration == Some(Duration::ZERO) {
        return problem("--duration must be more than 0 seconds");
    }
    if config.interval.is_some_and(|i| i < MIN_INTERVAL) {
        return problem("--interval-ms must be at least 10");
    }
    match &config.target {
        StatTarget::Command(command) if command.is_empty() => {
            problem("nothing to count: give a command, or -p, -t, -a or -C")
        }
        StatTarget::Processes(list) | StatTarget::Threads(list) if list.is_empty() => {
            problem("-p and -t need at least one id")
        }
        StatTarget::Cpus(list) if list.is_empty() => problem("-C needs at least one CPU"),
        _ => Ok(()),
    }
}

/// The events to count, each checked with a trial open on this process.
fn resolve_events(
    config: &StatConfig,
    cpu_wide: bool,
    privileges: &Privileges,
    notices: &mut Vec<String>,
) -> Result<Vec<StatEvent>, SamplerError> {
    let defaults = config.events.is_empty();
    let texts: Vec<String> = if defaults {
        DEFAULT_STAT_EVENTS
            .iter()
            // A CPU's clock, not a task's, is what runs on a whole CPU.
            .map(|&name| match (name, cpu_wide) {
                ("task-clock", true) => "cpu-clock".to_owned(),
                _ => name.to_owned(),
            })
            .collect()
    } else {
        let mut texts = Vec::new();
        for list in &config.events {
            texts.extend(expand_event_list(list, notices)?);
        }
        texts
    };
    let mut events = Vec::with_capacity(texts.len());
    let mut user_only = Vec::new();
    for text in texts {
        let mut spec = EventSpec::parse(&text)?;
        let explicit = has_modifiers(&text);
        if !explicit {
            // Unlike sampling, counting looks at the kernel's side of a
            // program too where it may: context switches and migrations
            // happen there.
            if privileges.may_count_kernel() {
                spec.kernel = true;
            } else {
                user_only.push(spec.base.clone());
            }
        }
        let label = match explicit {
            true => text.trim().to_owned(),
            false => spec.base.clone(),
        };
        let unsupported = match probe(&spec) {
            Ok(()) => None,
            Err(SamplerError::EventNotSupported { reason, .. }) => Some(reason),
            Err(error) => return Err(error),
        };
        events.push(StatEvent {
            label,
            spec,
            unsupported,
        });
    }
    if events.iter().all(|e| e.unsupported.is_some()) {
        let reasons: Vec<String> = events
            .iter()
            .map(|e| format!("'{}': {}", e.label, e.unsupported.as_deref().unwrap_or("")))
            .collect();
        return Err(SamplerError::InvalidStat {
            problem: format!(
                "no event can be counted here ({}); count a software event instead, e.g. \
                 -e task-clock",
                reasons.join("; ")
            ),
        });
    }
    let mut reasons: Vec<&str> = events
        .iter()
        .filter_map(|e| e.unsupported.as_deref())
        .collect();
    reasons.dedup();
    for reason in reasons {
        let names: Vec<&str> = events
            .iter()
            .filter(|e| e.unsupported.as_deref() == Some(reason))
            .map(|e| e.label.as_str())
            .collect();
        notices.push(format!("{} not supported: {reason}", names.join(", ")));
    }
    if !user_only.is_empty() {
        notices.push(format!(
            "counting user space only{}, as the kernel allows no more; context switches and \
             migrations happen in the kernel and read 0: run as root, grant CAP_PERFMON, or \
             `sysctl kernel.perf_event_paranoid=1`",
            privileges
                .paranoid
                .map(|p| format!(" (kernel.perf_event_paranoid is {p})"))
                .unwrap_or_default()
        ));
    }
    Ok(events)
}

/// Splits one `-e` value into events at the commas outside `pmu/.../`
/// terms; the members of a `{...}` group are counted each on its own, the
/// group's modifiers added to each.
fn expand_event_list(list: &str, notices: &mut Vec<String>) -> Result<Vec<String>, SamplerError> {
    let mut events = Vec::new();
    for item in split_event_list(list) {
        let item = item.trim();
        if item.is_empty() {
            return Err(SamplerError::InvalidStat {
                problem: format!("-e '{list}' names an empty event; separate events by one comma"),
            });
        }
        let Some(group) = item.strip_prefix('{') else {
            events.push(item.to_owned());
            continue;
        };
        let (members, modifiers) = match group.rsplit_once('}') {
            Some((members, modifiers)) => (members, modifiers),
            None => {
                return Err(SamplerError::InvalidStat {
                    problem: format!("-e '{list}': the group '{item}' has no closing '}}'"),
                });
            }
        };
        let note = "the events of a {...} group are counted each on its own";
        if !notices.iter().any(|n| n == note) {
            notices.push(note.to_owned());
        }
        for member in expand_event_list(members, notices)? {
            match (modifiers.is_empty(), has_modifiers(&member)) {
                // A PMU term takes its modifiers right after its slash.
                (false, false) if member.ends_with('/') => {
                    events.push(format!("{member}{}", modifiers.trim_start_matches(':')))
                }
                (false, false) => events.push(format!("{member}{modifiers}")),
                _ => events.push(member),
            }
        }
    }
    Ok(events)
}

/// Splits at the commas outside `/.../` and `{...}`.
fn split_event_list(list: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut in_term, mut start) = (0usize, false, 0);
    for (index, c) in list.char_indices() {
        match c {
            '/' => in_term = !in_term,
            '{' if !in_term => depth += 1,
            '}' if !in_term => depth = depth.saturating_sub(1),
            ',' if !in_term && depth == 0 => {
                items.push(&list[start..index]);
                start = index + 1;
            }
            _ => {}
        }
    }
    items.push(&list[start..]);
    items
}

/// Whether an event's text carries its own modifiers (`:u`, `:k`, a PMU
/// term's trailing `/u`).
fn has_modifiers(text: &str) -> bool {
    let tail = match text.rfind('/') {
        Some(index) => &text[index + 1..],
        None => text,
    };
    tail.contains(':') || (text.contains('/') && !tail.is_empty())
}

/// A counting counter's settings (disabled, not yet bound to a target).
fn builder(spec: &EventSpec) -> Builder<'static> {
    let mut builder = Builder::new(Encoding(spec));
    builder
        .exclude_user(!spec.user)
        .exclude_kernel(!spec.kernel)
        .exclude_hv(!spec.hypervisor)
        .read_format(ReadFormat::TOTAL_TIME_ENABLED | ReadFormat::TOTAL_TIME_RUNNING)
        .enabled(false);
    if spec.precise > 0 {
        builder.attrs_mut().set_precise_ip(u64::from(spec.precise));
    }
    builder
}

/// Opens `spec` as a counter on this process, to learn whether the kernel
/// will count it at all.
fn probe(spec: &EventSpec) -> Result<(), SamplerError> {
    builder(spec)
        .observe_self()
        .any_cpu()
        .build()
        .map(drop)
        .map_err(|error| refusal::explain(spec, error, OpenScope::default()))
}

/// An event's encoding, as perf-event2 takes it.
pub(crate) struct Encoding<'a>(pub &'a EventSpec);

impl Event for Encoding<'_> {
    fn update_attrs(self, attr: &mut perf_event_attr) {
        attr.type_ = self.0.perf_type;
        attr.config = self.0.config;
        attr.__bindgen_anon_3.config1 = self.0.config1;
        attr.__bindgen_anon_4.config2 = self.0.config2;
    }
}

fn resolve_target(target: &StatTarget) -> Result<(Target, String), SamplerError> {
    let gone = |error: io::Error| SamplerError::InvalidStat {
        problem: format!("{error}; give the id of a running one (see `ps -eLf`)"),
    };
    match target {
        StatTarget::Command(args) => {
            let command = resolve_command(args)?;
            let description = format!(
                "'{}'",
                command
                    .argv
                    .iter()
                    .map(|a| a.to_string_lossy())
                    .collect::<Vec<_>>()
                    .join(" ")
            );
            Ok((Target::Command(command), description))
        }
        StatTarget::Processes(pids) => {
            let pids: BTreeSet<u32> = pids.iter().copied().collect();
            let mut tasks = Vec::new();
            for &pid in &pids {
                for tid in tasks::threads_of(pid).map_err(gone)? {
                    tasks.push(Task {
                        pid,
                        tid,
                        name: tasks::thread_name(pid, tid),
                    });
                }
            }
            let description = plural("process", "processes", &pids);
            let processes = pids.into_iter().collect();
            Ok((Target::Tasks { tasks, processes }, description))
        }
        StatTarget::Threads(tids) => {
            let tids: BTreeSet<u32> = tids.iter().copied().collect();
            let mut tasks = Vec::new();
            for &tid in &tids {
                let pid = tasks::process_of(tid).map_err(gone)?;
                tasks.push(Task {
                    pid,
                    tid,
                    name: tasks::thread_name(pid, tid),
                });
            }
            let description = plural("thread", "threads", &tids);
            let processes = Vec::new();
            Ok((Target::Tasks { tasks, processes }, description))
        }
        StatTarget::AllCpus => {
            let cpus = online_cpus()?;
            Ok((Target::Cpus(cpus), "all CPUs".to_owned()))
        }
        StatTarget::Cpus(list) => {
            let online = online_cpus()?;
            let cpus: BTreeSet<usize> = list.iter().copied().collect();
            if let Some(cpu) = cpus.iter().find(|c| !online.contains(c)) {
                return Err(SamplerError::InvalidStat {
                    problem: format!(
                        "CPU {cpu} is not online; the online CPUs are {}",
                        online
                            .iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join(",")
                    ),
                });
            }
            let description = plural("CPU", "CPUs", &cpus);
            Ok((Target::Cpus(cpus.into_iter().collect()), description))
        }
    }
}

fn online_cpus() -> Result<Vec<usize>, SamplerError> {
    sysinfo::online_cpus().map_err(|error| SamplerError::System {
        what: "listing the online CPUs",
        error,
    })
}

fn plural<T: ToString>(one: &str, many: &str, ids: &BTreeSet<T>) -> String {
    let list: Vec<String> = ids.iter().map(ToString::to_string).collect();
    format!(
        "{} {}",
        if list.len() == 1 { one } else { many },
        list.join(", ")
    )
}

/// The open counters of a count.
struct Counters {
    slots: Vec<Slot>,
    /// The events, by index: label, unit, and why not counted if not.
    events: Vec<(String, &'static str, Option<String>)>,
    /// The counted threads, with `per_thread`.
    tasks: Vec<Task>,
    /// The processes or threads whose end ends the count.
    watched: Vec<Watched>,
}

#[derive(Clone, Copy, Debug)]
enum Watched {
    Process(u32),
    /// A thread, told from a later one with its id by its start time.
    Thread {
        pid: u32,
        tid: u32,
        start_time: u64,
    },
}

struct Slot {
    event: usize,
    /// Index into `Counters::tasks`, with `per_thread`.
    task: Option<usize>,
    counter: Counter,
    /// The count at the last interval report.
    last: Count,
}

impl Counters {
    fn new(stat: &Stat) -> Counters {
        Counters {
            slots: Vec::new(),
            events: stat
                .events
                .iter()
                .map(|e| (e.label.clone(), e.spec.unit, e.unsupported.clone()))
                .collect(),
            tasks: match (&stat.target, stat.per_thread) {
                (Target::Tasks { tasks, .. }, true) => tasks.clone(),
                _ => Vec::new(),
            },
            watched: match &stat.target {
                Target::Tasks { processes, .. } => {
                    processes.iter().map(|&pid| Watched::Process(pid)).collect()
                }
                _ => Vec::new(),
            },
        }
    }

    fn counted(events: &[StatEvent]) -> impl Iterator<Item = (usize, &StatEvent)> {
        events
            .iter()
            .enumerate()
            .filter(|(_, e)| e.unsupported.is_none())
    }

    fn push(&mut self, event: usize, task: Option<usize>, counter: Counter) {
        self.slots.push(Slot {
            event,
            task,
            counter,
            last: Count::default(),
        });
    }

    /// One counter per event on the suspended command, enabled at its exec.
    fn open_command(&mut self, events: &[StatEvent], pid: libc::pid_t) -> Result<(), SamplerError> {
        for (index, event) in Self::counted(events) {
            let counter = builder(&event.spec)
                .observe_pid(pid)
                .any_cpu()
                .inherit(true)
                .enable_on_exec(true)
                .build()
                .map_err(|error| refusal::explain(&event.spec, error, OpenScope::default()))?;
            self.push(index, None, counter);
        }
        Ok(())
    }

    /// One counter per event per thread; a thread that exits before its
    /// counters are opened is left out.
    fn open_tasks(&mut self, events: &[StatEvent], tasks: &[Task]) -> Result<(), SamplerError> {
        let per_thread = !self.tasks.is_empty();
        let mut opened = 0;
        let mut last_error = None;
        'tasks: for (task_index, task) in tasks.iter().enumerate() {
            let mut counters = Vec::new();
            let scope = OpenScope {
                cpu_wide: false,
                process: Some(task.pid),
            };
            for (index, event) in Self::counted(events) {
                let built = builder(&event.spec)
                    .observe_pid(task.tid as libc::pid_t)
                    .any_cpu()
                    .inherit(true)
                    .build();
                match built {
                    Ok(counter) => counters.push((index, counter)),
                    Err(error) if error.raw_os_error() == Some(libc::ESRCH) => {
                        last_error = Some(refusal::explain(&event.spec, error, scope));
                        continue 'tasks;
                    }
                    Err(error) => {
                        return Err(refusal::explain(&event.spec, error, scope));
                    }
                }
            }
            opened += 1;
            let watch_threads = !self
                .watched
                .iter()
                .any(|w| matches!(w, Watched::Process(_)));
            if watch_threads && let Some(stat) = tasks::task_stat(task.pid, task.tid) {
                self.watched.push(Watched::Thread {
                    pid: task.pid,
                    tid: task.tid,
                    start_time: stat.start_time,
                });
            }
            for (index, counter) in counters {
                self.push(index, per_thread.then_some(task_index), counter);
            }
        }
        match (opened, last_error) {
            (0, Some(error)) => Err(error),
            _ => Ok(()),
        }
    }

    /// One counter per event per CPU, counting every task there.
    fn open_cpus(&mut self, events: &[StatEvent], cpus: &[usize]) -> Result<(), SamplerError> {
        let scope = OpenScope {
            cpu_wide: true,
            process: None,
        };
        for &cpu in cpus {
            for (index, event) in Self::counted(events) {
                let counter = builder(&event.spec)
                    .any_pid()
                    .one_cpu(cpu)
                    .build()
                    .map_err(|error| refusal::explain(&event.spec, error, scope))?;
                self.push(index, None, counter);
            }
        }
        Ok(())
    }

    fn enable(&mut self) -> Result<(), SamplerError> {
        for slot in &mut self.slots {
            slot.counter
                .enable()
                .map_err(|error| SamplerError::System {
                    what: "enabling a counter",
                    error,
                })?;
        }
        Ok(())
    }

    /// Whether a counted task may still run: a thread that has not
    /// ended, or a process with a thread that has not (threads started
    /// after counting began included). Always true for CPUs and commands.
    fn any_task_alive(&self) -> bool {
        if self.watched.is_empty() {
            return true;
        }
        self.watched.iter().any(|watched| match *watched {
            Watched::Process(pid) => tasks::threads_of(pid).is_ok_and(|tids| {
                tids.iter()
                    .any(|&tid| tasks::task_stat(pid, tid).is_some_and(|t| !t.has_ended()))
            }),
            Watched::Thread {
                pid,
                tid,
                start_time,
            } => tasks::task_stat(pid, tid)
                .is_some_and(|t| !t.has_ended() && t.start_time == start_time),
        })
    }

    /// Reads every counter: the totals, or with `interval` what was counted
    /// since the last interval.
    fn read(
        &mut self,
        elapsed: Duration,
        span: Duration,
        interval: bool,
    ) -> Result<StatCounts, SamplerError> {
        let mut totals = vec![Count::default(); self.events.len()];
        let mut per_task = vec![vec![Count::default(); self.events.len()]; self.tasks.len()];
        for slot in &mut self.slots {
            let now = match slot.counter.read_count_and_time() {
                Ok(read) => Count::new(read.count, read.time_enabled, read.time_running),
                // A counter the kernel could not schedule reads nothing.
                Err(error) if error.kind() == io::ErrorKind::UnexpectedEof => Count::default(),
                Err(error) => {
                    return Err(SamplerError::System {
                        what: "reading a counter",
                        error,
                    });
                }
            };
            let count = match interval {
                true => now.since(&slot.last),
                false => now,
            };
            if interval {
                slot.last = now;
            }
            totals[slot.event].add(&count);
            if let Some(task) = slot.task {
                per_task[task][slot.event].add(&count);
            }
        }
        let values = |counts: &[Count]| -> Vec<EventCount> {
            self.events
                .iter()
                .zip(counts)
                .map(|((label, unit, unsupported), count)| EventCount {
                    event: label.clone(),
                    unit,
                    value: match unsupported {
                        Some(reason) => EventValue::NotSupported {
                            reason: reason.clone(),
                        },
                        None => EventValue::Counted(*count),
                    },
                })
                .collect()
        };
        Ok(StatCounts {
            elapsed,
            span,
            events: values(&totals),
            threads: self
                .tasks
                .iter()
                .zip(&per_task)
                .map(|(task, counts)| ThreadCount {
                    pid: task.pid,
                    tid: task.tid,
                    name: task.name.clone(),
                    events: values(counts),
                })
                .collect(),
        })
    }
}

/// A descriptor that becomes readable when process `pid` exits, where the
/// kernel has `pidfd_open` (Linux 5.3).
fn pidfd_open(pid: libc::pid_t) -> Option<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor
    // or -1; it touches no memory of ours.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    // SAFETY: a non-negative result is a descriptor that nothing else owns.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// Waits up to `timeout`, less if `exits` becomes readable (the command
/// exited) or a signal arrives.
fn wait(exits: Option<BorrowedFd<'_>>, timeout: Duration) -> Result<(), SamplerError> {
    let mut fds: Vec<libc::pollfd> = exits
        .iter()
        .map(|fd| libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let timeout_ms = timeout.as_millis().min(i32::MAX as u128) as libc::c_int;
    // SAFETY: `fds` is a valid array of `fds.len()` pollfd structs (an empty
    // one makes poll a sleep that a signal cuts short).
    let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
    if ready == -1 {
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(SamplerError::System {
                what: "poll",
                error,
            });
        }
    }
    Ok(())
}

/// The user and system CPU time of this process's reaped children so far.
fn children_cpu_time() -> Option<(Duration, Duration)> {
    // SAFETY: rusage is plain data; zeroed is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid out-pointer for the duration of the call.
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) } != 0 {
        return None;
    }
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    Some((time(usage.ru_utime), time(usage.ru_stime)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_split_at_commas_outside_terms_and_groups() {
        assert_eq!(split_event_list("a,b:u,c"), ["a", "b:u", "c"]);
        assert_eq!(
            split_event_list("cpu/event=0x3c,umask=0x1/u,task-clock"),
            ["cpu/event=0x3c,umask=0x1/u", "task-clock"]
        );
        assert_eq!(split_event_list("{a,b}:u,c"), ["{a,b}:u", "c"]);
        assert_eq!(split_event_list("a,,b"), ["a", "", "b"]);
    }

    #[test]
    fn groups_are_expanded_with_their_modifiers() {
        let mut notices = Vec::new();
        let events = expand_event_list("{task-clock,page-faults:k}:u,cs", &mut notices).unwrap();
        assert_eq!(events, ["task-clock:u", "page-faults:k", "cs"]);
        let events = expand_event_list("{cpu/event=0x3c/,cs}:k", &mut notices).unwrap();
        assert_eq!(events, ["cpu/event=0x3c/k", "cs:k"]);
        assert_eq!(notices.len(), 1);
        let error = expand_event_list("task-clock,", &mut notices).unwrap_err();
        assert!(error.to_string().contains("empty event"), "{error}");
    }

    #[test]
    fn modifiers_are_told_from_names() {
        assert!(has_modifiers("cycles:u"));
        assert!(has_modifiers("cpu/event=0x3c/u"));
        assert!(!has_modifiers("cpu/event=0x3c/"));
        assert!(!has_modifiers("page-faults"));
    }

    #[test]
    fn counts_are_scaled_by_the_time_they_ran() {
        let count = Count::new(1000, 200, 100);
        assert_eq!(count.scaled, 2000);
        assert_eq!(count.running_percent(), Some(50.0));
        assert!(!Count::new(0, 100, 0).was_counted());
        assert!(Count::new(0, 0, 0).was_counted());
        assert_eq!(Count::new(5, 100, 100).scaled, 5);
        let later = Count::new(3000, 400, 300);
        assert_eq!(later.since(&count), Count::new(2000, 200, 200));
    }

    #[test]
    fn options_that_mean_nothing_for_the_target_are_refused() {
        let config = |target, per_thread, duration| StatConfig {
            events: Vec::new(),
            target,
            interval: None,
            duration,
            per_thread,
        };
        let command = StatTarget::Command(vec!["true".into()]);
        let error = check_options(&config(command.clone(), true, None)).unwrap_err();
        assert!(error.to_string().contains("-p PID"), "{error}");
        let error = check_options(&config(command, false, Some(Duration::from_secs(1))));
        assert!(error.is_err());
        assert!(check_options(&config(StatTarget::Processes(vec![1]), true, None)).is_ok());
    }

    #[test]
    fn the_threads_of_this_process_can_be_counted() {
        if !Privileges::read().may_profile_user() {
            return;
        }
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let spinning = stop.clone();
        let spinner = std::thread::spawn(move || {
            while !spinning.load(std::sync::atomic::Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        });
        let stat = Stat::new(StatConfig {
            events: vec!["task-clock,page-faults".into()],
            target: StatTarget::Processes(vec![std::process::id()]),
            interval: None,
            duration: Some(Duration::from_millis(100)),
            per_thread: true,
        })
        .unwrap();
        let outcome = stat.run(&mut |_| Ok(()));
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        spinner.join().unwrap();
        let outcome = outcome.unwrap();
        assert_eq!(outcome.totals.events.len(), 2);
        assert!(outcome.totals.threads.len() >= 2, "{outcome:?}");
        let EventValue::Counted(clock) = &outcome.totals.events[0].value else {
            panic!("task-clock not counted: {outcome:?}");
        };
        assert!(clock.scaled >= 10_000_000, "{outcome:?}");
        assert_eq!(clock.running_percent(), Some(100.0));
    }
}
