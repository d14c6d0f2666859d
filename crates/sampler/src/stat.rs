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
//!
//! The events are resolved in `events`, the target in `target`, and the
//! counters opened and read in `counters`; here are the public types and
//! the counting loop.

mod counters;
mod events;
mod target;

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::time::{Duration, Instant};

use self::counters::Counters;
use self::events::{StatEvent, resolve_events};
use self::target::{Target, resolve_target};
use crate::error::SamplerError;
use crate::launch::{self, RunningChild, TargetExit};
use crate::privileges::Privileges;
use crate::signals;

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
        let mut counters = Counters::new(&self.events, self.per_thread);
        let children_before = launch::children_cpu_time();
        let (started, mut child, exits) = match &self.target {
            Target::Command(command) => {
                let suspended = launch::fork(command)?;
                counters.open_command(suspended.pid())?;
                let exits = suspended.exit_fd();
                let child = suspended.exec(command)?;
                (Instant::now(), Some(child), exits)
            }
            Target::Tasks { tasks, processes } => {
                counters.open_tasks(tasks, processes)?;
                counters.enable()?;
                (Instant::now(), None, None)
            }
            Target::Cpus(cpus) => {
                counters.open_cpus(cpus)?;
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
        let exit = child.as_mut().map(RunningChild::wait).transpose()?;
        let interrupted_by = followed?;
        let elapsed = started.elapsed();
        let totals = counters.read(elapsed, elapsed, false)?;
        let (user_time, system_time) = match (child, children_before, launch::children_cpu_time()) {
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
        counters: &mut Counters<'_>,
        mut child: Option<&mut RunningChild>,
        exits: Option<BorrowedFd<'_>>,
        started: Instant,
        on_interval: &mut dyn FnMut(&StatCounts) -> io::Result<()>,
    ) -> Result<Option<i32>, SamplerError> {
        let deadline = self.duration.map(|d| started + d);
        let mut next_report = self.interval.map(|i| started + i);
        let mut last_report = Duration::ZERO;
        let mut interrupt: Option<(i32, Instant)> = None;
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
            if child.try_wait()?.is_some() {
                return Ok(interrupt.map(|(signal, _)| signal));
            }
            let Some((_, since)) = interrupt else {
                continue;
            };
            child.stop_after_interrupt(since);
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
    signals::poll(&mut fds, timeout)
}

#[cfg(test)]
mod tests {
    use super::*;

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
