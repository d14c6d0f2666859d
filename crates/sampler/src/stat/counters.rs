//! The counters of a count: one per event on a launched command (inherited
//! by its threads and children, enabled at its exec), one per event per
//! thread of running processes, or one per event per CPU. Read as totals
//! or as what each interval added, summed per event and, with
//! `per_thread`, per thread; and watched for the end of the threads and
//! processes they count.

use std::io;
use std::time::Duration;

use perf_event::Counter;

use super::events::StatEvent;
use super::target::Task;
use crate::builder::counter_builder;
use crate::error::SamplerError;
use crate::refusal::{self, OpenScope};
use crate::tasks;
use profiler_events::{Count, EventCount, EventValue, StatCounts, ThreadCount};

/// The open counters of a count.
pub(super) struct Counters<'a> {
    /// The events, by index; those not supported have no counters.
    events: &'a [StatEvent],
    /// The counted threads, with `per_thread`; none otherwise.
    rows: &'a [Task],
    per_thread: bool,
    slots: Vec<Slot>,
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
    /// Index into `Counters::rows`, with `per_thread`.
    task: Option<usize>,
    counter: Counter,
    /// The count at the last interval report.
    last: Count,
}

/// The events that have counters, with their indices.
fn counted(events: &[StatEvent]) -> impl Iterator<Item = (usize, &StatEvent)> {
    events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.unsupported.is_none())
}

impl<'a> Counters<'a> {
    /// No counters yet, for `events`; `per_thread` keeps each thread's
    /// counts apart.
    pub(super) fn new(events: &'a [StatEvent], per_thread: bool) -> Counters<'a> {
        Counters {
            events,
            rows: &[],
            per_thread,
            slots: Vec::new(),
            watched: Vec::new(),
        }
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
    pub(super) fn open_command(&mut self, pid: libc::pid_t) -> Result<(), SamplerError> {
        for (index, event) in counted(self.events) {
            let counter = counter_builder(&event.spec)
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
    /// counters are opened is left out. The count ends when `processes`
    /// have ended, or without them when the threads have.
    pub(super) fn open_tasks(
        &mut self,
        tasks: &'a [Task],
        processes: &[u32],
    ) -> Result<(), SamplerError> {
        if self.per_thread {
            self.rows = tasks;
        }
        self.watched
            .extend(processes.iter().map(|&pid| Watched::Process(pid)));
        let watch_threads = processes.is_empty();
        let mut opened = 0;
        let mut last_error = None;
        'tasks: for (task_index, task) in tasks.iter().enumerate() {
            let mut counters = Vec::new();
            let scope = OpenScope {
                cpu_wide: false,
                process: Some(task.pid),
            };
            for (index, event) in counted(self.events) {
                let built = counter_builder(&event.spec)
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
            if watch_threads && let Some(stat) = tasks::task_stat(task.pid, task.tid) {
                self.watched.push(Watched::Thread {
                    pid: task.pid,
                    tid: task.tid,
                    start_time: stat.start_time,
                });
            }
            for (index, counter) in counters {
                self.push(index, self.per_thread.then_some(task_index), counter);
            }
        }
        match (opened, last_error) {
            (0, Some(error)) => Err(error),
            _ => Ok(()),
        }
    }

    /// One counter per event per CPU, counting every task there.
    pub(super) fn open_cpus(&mut self, cpus: &[usize]) -> Result<(), SamplerError> {
        let scope = OpenScope {
            cpu_wide: true,
            process: None,
        };
        for &cpu in cpus {
            for (index, event) in counted(self.events) {
                let counter = counter_builder(&event.spec)
                    .any_pid()
                    .one_cpu(cpu)
                    .build()
                    .map_err(|error| refusal::explain(&event.spec, error, scope))?;
                self.push(index, None, counter);
            }
        }
        Ok(())
    }

    pub(super) fn enable(&mut self) -> Result<(), SamplerError> {
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
    pub(super) fn any_task_alive(&self) -> bool {
        if self.watched.is_empty() {
            return true;
        }
        self.watched.iter().any(|watched| match *watched {
            Watched::Process(pid) => tasks::has_running_thread(pid),
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
    pub(super) fn read(
        &mut self,
        elapsed: Duration,
        span: Duration,
        interval: bool,
    ) -> Result<StatCounts, SamplerError> {
        let mut totals = vec![Count::default(); self.events.len()];
        let mut per_task = vec![vec![Count::default(); self.events.len()]; self.rows.len()];
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
                .map(|(event, count)| EventCount {
                    event: event.label.clone(),
                    unit: event.spec.unit,
                    value: match &event.unsupported {
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
                .rows
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
