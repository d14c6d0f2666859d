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
//! The events are resolved in `events`, the target in `target`, the
//! counters opened and read in `counters`, and what they read is in
//! `counts`; here are the configuration, the outcome and the counting loop.

mod counters;
mod events;
mod target;

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::time::{Duration, Instant};

pub use self::events::DEFAULT_STAT_EVENTS;
pub use profiler_events::{Count, EventCount, EventValue, StatCounts, ThreadCount};

use self::counters::Counters;
use self::events::{StatEvent, resolve_events};
use self::target::{Counted, resolve_target};
use crate::error::SamplerError;
use crate::launch::{self, RunningChild, TargetExit};
use crate::privileges;
use crate::signals;
use crate::target::Target;

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
    /// A command, processes, threads, or CPUs (without a command: a
    /// command and CPUs are not counted together).
    pub target: Target,
    /// Report the counts of every interval as well as the totals.
    pub interval: Option<Duration>,
    /// Stop after this long (not with a command, which is counted until it
    /// exits).
    pub duration: Option<Duration>,
    /// One set of counts per thread (processes and threads only).
    pub per_thread: bool,
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
    target: Counted,
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
        let privileges = privileges::read();
        let cpu_wide = matches!(config.target, Target::SystemWide { .. });
        let mut notices = Vec::new();
        let events = resolve_events(&config.events, cpu_wide, &privileges, &mut notices)?;
        let (target, description) = resolve_target(&config.target, &mut notices)?;
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
            Counted::Command(command) => {
                let suspended = launch::fork(command)?;
                counters.open_command(suspended.pid())?;
                let exits = suspended.exit_fd();
                // The clock starts before the exec: the command may run
                // for a while before this thread learns that it started.
                let started = Instant::now();
                let child = suspended.exec(command)?;
                (started, Some(child), exits)
            }
            Counted::Tasks { tasks, processes } => {
                counters.open_tasks(tasks, processes)?;
                counters.enable()?;
                (Instant::now(), None, None)
            }
            Counted::Cpus(cpus) => {
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
                interrupt = signals::interrupted().map(|signal| (signal, Instant::now()));
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
    let tasks = matches!(config.target, Target::Processes(_) | Target::Threads(_));
    if config.per_thread && !tasks {
        return problem(
            "--per-thread counts the threads of running processes: give -p PID or -t TID \
             (a command's threads are counted together)",
        );
    }
    if let Target::SystemWide {
        command: Some(_), ..
    } = config.target
    {
        return problem(
            "a command and whole CPUs are not counted together; leave out the command, or -a \
             and -C",
        );
    }
    if config.duration.is_some() && config.target.launches() {
        return Err(SamplerError::DurationWithCommand);
    }
    if config.duration == Some(Duration::ZERO) {
        return problem("--duration must be more than 0 seconds");
    }
    if config.interval.is_some_and(|i| i < MIN_INTERVAL) {
        return problem("--interval-ms must be at least 10");
    }
    Ok(())
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
    use profiler_testing::live_test;

    #[test]
    fn options_that_mean_nothing_for_the_target_are_refused() {
        let config = |target, per_thread, duration| StatConfig {
            events: Vec::new(),
            target,
            interval: None,
            duration,
            per_thread,
        };
        let command = Target::Command(vec!["true".into()]);
        let error = check_options(&config(command.clone(), true, None)).unwrap_err();
        assert!(error.to_string().contains("-p PID"), "{error}");
        let error = check_options(&config(command, false, Some(Duration::from_secs(1))));
        assert!(error.is_err());
        assert!(check_options(&config(Target::Processes(vec![1]), true, None)).is_ok());
    }

    live_test!(the_threads_of_this_process_can_be_counted, || {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let spinning = stop.clone();
        let spinner = std::thread::spawn(move || {
            while !spinning.load(std::sync::atomic::Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        });
        let stat = Stat::new(StatConfig {
            events: vec!["task-clock,page-faults".into()],
            target: Target::Processes(vec![std::process::id()]),
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
    });
}
