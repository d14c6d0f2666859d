//! What a recording samples or a count counts: a command it launches,
//! processes or threads that are already running, or whole CPUs. Each is
//! checked before anything is opened, named in the recording's header, and
//! said to have ended in a way the trailer can tell.

use std::ffi::OsString;
use std::io;
use std::time::Duration;

use profiler_events::format_cpu_list;

use crate::command::{ResolvedCommand, resolve_command};
use crate::error::SamplerError;
use crate::launch::TargetExit;
use crate::{sysinfo, tasks};

/// What to sample or count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// Launch this command (with its arguments) and sample it and its
    /// descendants until they exit.
    Command(Vec<OsString>),
    /// Attach to these running processes: every thread they have, and the
    /// threads and children they start later (`-p`).
    Processes(Vec<u32>),
    /// Attach to these running threads, and the threads they start later
    /// (`-t`).
    Threads(Vec<u32>),
    /// Every process on these CPUs (`None`: every online CPU; `-a`, `-C`),
    /// for as long as `command`, launched alongside, runs, if one is given.
    SystemWide {
        cpus: Option<Vec<usize>>,
        command: Option<Vec<OsString>>,
    },
}

impl Target {
    /// Whether a command is launched, and followed until it exits.
    pub(crate) fn launches(&self) -> bool {
        matches!(
            self,
            Target::Command(_)
                | Target::SystemWide {
                    command: Some(_),
                    ..
                }
        )
    }
}

/// How the target's part in a recording ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetEnd {
    /// The launched command ended.
    Exited(TargetExit),
    /// The attached processes or threads were left running.
    LeftRunning,
    /// Every attached process or thread ended during the recording.
    AllExited,
    /// A system-wide recording without a command was stopped.
    Stopped,
}

impl TargetEnd {
    /// The exit status `record` passes on: the command's, else 0.
    pub fn code(self) -> u8 {
        match self {
            TargetEnd::Exited(exit) => exit.code(),
            _ => 0,
        }
    }

    /// What became of the target, for the recording's trailer: it follows
    /// "the command", e.g. "exited with status 0", "was attached for 2.00 s
    /// and left running".
    pub fn describe(self, duration: Duration) -> String {
        let seconds = duration.as_secs_f64();
        match self {
            TargetEnd::Exited(exit) => exit.to_string(),
            TargetEnd::LeftRunning => {
                format!("was attached for {seconds:.2} s and left running")
            }
            TargetEnd::AllExited => format!("was attached for {seconds:.2} s, until it exited"),
            TargetEnd::Stopped => format!("was sampled system-wide for {seconds:.2} s"),
        }
    }
}

/// The CPUs that are online now.
pub(crate) fn online_cpus() -> Result<Vec<usize>, SamplerError> {
    sysinfo::online_cpus().map_err(|error| SamplerError::System {
        what: "listing the online CPUs",
        error,
    })
}

/// Running tasks to attach to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Attachment {
    /// The processes, each once, in the order given.
    pub processes: Vec<u32>,
    /// With `-t`, the threads (each once); `None`: every thread of
    /// `processes`.
    pub threads: Option<Vec<(u32, u32)>>,
}

impl Attachment {
    /// The threads to open counters on now, sorted: every current thread of
    /// each process, or the chosen threads that still run. An error naming
    /// the first target when none is left.
    pub(crate) fn tasks_now(&self) -> Result<Vec<libc::pid_t>, SamplerError> {
        let mut tasks: Vec<libc::pid_t> = match &self.threads {
            None => self
                .processes
                .iter()
                .filter_map(|&pid| tasks::threads_of(pid).ok())
                .flatten()
                .map(|tid| tid as libc::pid_t)
                .collect(),
            Some(threads) => threads
                .iter()
                .filter(|&&(pid, tid)| tasks::task_stat(pid, tid).is_some_and(|s| !s.has_ended()))
                .map(|&(_, tid)| tid as libc::pid_t)
                .collect(),
        };
        if tasks.is_empty() {
            return Err(self.gone());
        }
        tasks.sort_unstable();
        tasks.dedup();
        Ok(tasks)
    }

    /// The error for a target that is no longer there.
    pub(crate) fn gone(&self) -> SamplerError {
        match &self.threads {
            Some(threads) => SamplerError::NoSuchThread {
                tid: threads.first().map_or(0, |&(_, tid)| tid),
            },
            None => SamplerError::NoSuchProcess {
                pid: self.processes.first().copied().unwrap_or(0),
            },
        }
    }
}

/// A target, checked: the command found, the processes and threads there,
/// the CPUs online.
#[derive(Debug)]
pub(crate) enum ResolvedTarget {
    Launch(ResolvedCommand),
    Attach(Attachment),
    SystemWide {
        cpus: Vec<usize>,
        command: Option<ResolvedCommand>,
    },
}

impl ResolvedTarget {
    /// Checks `target`; what it takes to mean other than what was written
    /// (a thread's id given to `-p`) is said in `notices`.
    pub(crate) fn resolve(
        target: &Target,
        notices: &mut Vec<String>,
    ) -> Result<ResolvedTarget, SamplerError> {
        let empty = |problem| Err(SamplerError::EmptyTarget { problem });
        match target {
            Target::Command(args) if args.is_empty() => {
                return empty("nothing to profile: give a command, or -p, -t, -a or -C");
            }
            Target::Processes(ids) | Target::Threads(ids) if ids.is_empty() => {
                return empty("-p and -t need at least one id");
            }
            Target::SystemWide {
                cpus: Some(cpus), ..
            } if cpus.is_empty() => return empty("-C needs at least one CPU"),
            _ => {}
        }
        Ok(match target {
            Target::Command(args) => {
                let command = resolve_command(args)?;
                notices.extend(command.identity_change());
                ResolvedTarget::Launch(command)
            }
            Target::Processes(pids) => {
                let mut processes = Vec::new();
                for &pid in pids {
                    let process = existing_process(pid)?;
                    if process != pid {
                        notices.push(format!(
                            "-p {pid} is a thread of process {process}: following the whole \
                             process (-t {pid} follows that thread alone)"
                        ));
                    }
                    if !processes.contains(&process) {
                        processes.push(process);
                    }
                }
                ResolvedTarget::Attach(Attachment {
                    processes,
                    threads: None,
                })
            }
            Target::Threads(tids) => {
                let mut processes = Vec::new();
                let mut threads = Vec::new();
                for &tid in tids {
                    let pid = existing_thread(tid)?;
                    if !processes.contains(&pid) {
                        processes.push(pid);
                    }
                    if !threads.contains(&(pid, tid)) {
                        threads.push((pid, tid));
                    }
                }
                ResolvedTarget::Attach(Attachment {
                    processes,
                    threads: Some(threads),
                })
            }
            Target::SystemWide { cpus, command } => {
                let online = online_cpus()?;
                let cpus = match cpus {
                    None => online,
                    Some(cpus) => {
                        if let Some(&cpu) = cpus.iter().find(|cpu| !online.contains(cpu)) {
                            return Err(SamplerError::CpuNotOnline {
                                cpu,
                                online: format_cpu_list(&online),
                            });
                        }
                        let mut cpus = cpus.clone();
                        cpus.sort_unstable();
                        cpus.dedup();
                        cpus
                    }
                };
                let command = command.as_deref().map(resolve_command).transpose()?;
                ResolvedTarget::SystemWide { cpus, command }
            }
        })
    }

    /// What the header names as the recorded command.
    pub(crate) fn command_line(&self) -> Vec<String> {
        match self {
            ResolvedTarget::Launch(command)
            | ResolvedTarget::SystemWide {
                command: Some(command),
                ..
            } => command
                .argv
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            ResolvedTarget::Attach(attachment) => match attachment.processes.as_slice() {
                [pid] => process_command_line(*pid),
                pids => pids
                    .iter()
                    .map(|&pid| format!("{} (pid {pid})", process_command_line(pid).join(" ")))
                    .collect(),
            },
            ResolvedTarget::SystemWide {
                cpus,
                command: None,
            } => {
                let plural = if cpus.len() == 1 { "" } else { "s" };
                vec![format!(
                    "system-wide on CPU{plural} {}",
                    format_cpu_list(cpus)
                )]
            }
        }
    }

    /// The program's executable, when the target has one.
    pub(crate) fn program(&self) -> Option<String> {
        match self {
            ResolvedTarget::Launch(command)
            | ResolvedTarget::SystemWide {
                command: Some(command),
                ..
            } => command.canonical_path(),
            ResolvedTarget::Attach(attachment) => tasks::executable(*attachment.processes.first()?),
            ResolvedTarget::SystemWide { command: None, .. } => None,
        }
    }

    /// The user the profiled processes run as: a launched command runs as
    /// the profiler's real user; attached processes as their owner, when
    /// they have one owner. `None` for whole CPUs.
    pub(crate) fn user(&self) -> Option<u32> {
        match self {
            ResolvedTarget::Launch(_) => tasks::owner(std::process::id()),
            ResolvedTarget::Attach(attachment) => {
                let mut owners = attachment.processes.iter().map(|&pid| tasks::owner(pid));
                let first = owners.next()??;
                owners.all(|owner| owner == Some(first)).then_some(first)
            }
            ResolvedTarget::SystemWide { .. } => None,
        }
    }
}

/// The process `pid` names: itself, or the process of the thread it is.
fn existing_process(pid: u32) -> Result<u32, SamplerError> {
    let missing = || SamplerError::NoSuchProcess { pid };
    let process = tasks::process_of(pid).map_err(|error| match error.kind() {
        io::ErrorKind::NotFound => missing(),
        _ => SamplerError::System {
            what: "reading /proc",
            error,
        },
    })?;
    if !tasks::has_running_thread(process) {
        return Err(match tasks::task_stat(process, process) {
            Some(stat) if stat.state == 'Z' => SamplerError::ZombieProcess {
                pid: process,
                parent: stat.parent,
            },
            _ => missing(),
        });
    }
    Ok(process)
}

/// The process thread `tid` belongs to.
fn existing_thread(tid: u32) -> Result<u32, SamplerError> {
    let missing = || SamplerError::NoSuchThread { tid };
    let pid = tasks::process_of(tid).map_err(|error| match error.kind() {
        io::ErrorKind::NotFound => missing(),
        _ => SamplerError::System {
            what: "reading /proc",
            error,
        },
    })?;
    match tasks::task_stat(pid, tid) {
        Some(stat) if !stat.has_ended() => Ok(pid),
        Some(stat) if stat.state == 'Z' => Err(SamplerError::ZombieThread { tid }),
        _ => Err(missing()),
    }
}

/// A process's command line; a kernel thread's name in brackets.
fn process_command_line(pid: u32) -> Vec<String> {
    match tasks::command_line(pid) {
        Some(args) if !args.is_empty() => args,
        _ => vec![format!(
            "[{}]",
            tasks::thread_name(pid, pid).unwrap_or_else(|| pid.to_string())
        )],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processes_and_threads_are_found_or_named_as_missing() {
        let pid = std::process::id();
        let worker = tasks::WaitingThread::start();
        let other = worker.tid;
        let mut notices = Vec::new();
        // A thread's id given for a process means its process, and says so.
        let target =
            ResolvedTarget::resolve(&Target::Processes(vec![other, pid]), &mut notices).unwrap();
        let ResolvedTarget::Attach(attachment) = &target else {
            panic!("{target:?}");
        };
        assert_eq!(attachment.processes, vec![pid]);
        let tasks_now = attachment.tasks_now().unwrap();
        assert!(tasks_now.len() >= 2, "{tasks_now:?}");
        assert_eq!(target.program(), tasks::executable(pid));
        assert!(!target.command_line().is_empty());
        assert_eq!(
            notices,
            [format!(
                "-p {other} is a thread of process {pid}: following the whole process \
                 (-t {other} follows that thread alone)"
            )]
        );

        let target = ResolvedTarget::resolve(&Target::Threads(vec![other]), &mut notices).unwrap();
        let ResolvedTarget::Attach(attachment) = &target else {
            panic!("{target:?}");
        };
        assert_eq!(attachment.threads, Some(vec![(pid, other)]));
        assert_eq!(attachment.tasks_now().unwrap(), vec![other as libc::pid_t]);
        worker.end();

        let error = ResolvedTarget::resolve(&Target::Processes(vec![u32::MAX]), &mut notices)
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with(&format!("there is no process {}", u32::MAX)),
            "{error}"
        );
        let error = ResolvedTarget::resolve(&Target::Threads(vec![u32::MAX]), &mut notices)
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("there is no thread"), "{error}");
        assert_eq!(notices.len(), 1);
    }

    #[test]
    fn a_zombie_is_named_as_one() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        // Not reaped yet: a zombie once it has exited.
        while tasks::task_stat(pid, pid).is_some_and(|stat| stat.state != 'Z') {
            std::thread::sleep(Duration::from_millis(5));
        }
        let error = ResolvedTarget::resolve(&Target::Processes(vec![pid]), &mut Vec::new())
            .unwrap_err()
            .to_string();
        let me = std::process::id();
        assert_eq!(
            error,
            format!(
                "process {pid} has exited: it is a zombie, kept until its parent (process {me}) \
                 collects its exit status, and runs no code to sample"
            )
        );
        let error = ResolvedTarget::resolve(&Target::Threads(vec![pid]), &mut Vec::new())
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with(&format!("thread {pid} has exited: it is a zombie")),
            "{error}"
        );
        child.wait().unwrap();
    }

    #[test]
    fn system_wide_takes_online_cpus_only() {
        let online = sysinfo::online_cpus().unwrap();
        let target = ResolvedTarget::resolve(
            &Target::SystemWide {
                cpus: None,
                command: None,
            },
            &mut Vec::new(),
        )
        .unwrap();
        let ResolvedTarget::SystemWide { cpus, .. } = &target else {
            panic!("{target:?}");
        };
        assert_eq!(cpus, &online);
        assert!(target.command_line()[0].starts_with("system-wide on CPU"));
        assert_eq!(target.program(), None);
        let offline = online.iter().max().unwrap() + 1;
        let error = ResolvedTarget::resolve(
            &Target::SystemWide {
                cpus: Some(vec![offline]),
                command: None,
            },
            &mut Vec::new(),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            error,
            format!(
                "CPU {offline} is not online; the online CPUs are {}",
                format_cpu_list(&online)
            )
        );
    }

    #[test]
    fn endings_are_described_for_the_trailer() {
        let second = Duration::from_millis(2000);
        assert_eq!(
            TargetEnd::LeftRunning.describe(second),
            "was attached for 2.00 s and left running"
        );
        assert_eq!(
            TargetEnd::Exited(TargetExit::Exited(3)).describe(second),
            "exited with status 3"
        );
        assert_eq!(TargetEnd::Exited(TargetExit::Exited(3)).code(), 3);
        assert_eq!(TargetEnd::LeftRunning.code(), 0);
    }
}
