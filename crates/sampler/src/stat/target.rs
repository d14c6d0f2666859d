//! What `stat` counts: a command, found; the threads of running processes,
//! or running threads, each with its name; or CPUs, checked to be online.
//! Each described for the heading (`'./app arg'`, `process 1234`, `all
//! CPUs`).

use std::collections::BTreeSet;
use std::io;

use super::StatTarget;
use crate::command::{ResolvedCommand, resolve_command};
use crate::error::SamplerError;
use crate::target::online_cpus;
use crate::tasks;

/// A thread counted.
#[derive(Clone, Debug)]
pub(super) struct Task {
    pub pid: u32,
    pub tid: u32,
    /// Its name (`comm`) when the counting began.
    pub name: Option<String>,
}

#[derive(Debug)]
pub(super) enum Target {
    Command(ResolvedCommand),
    /// Threads; of whole processes when `processes` names them.
    Tasks {
        tasks: Vec<Task>,
        processes: Vec<u32>,
    },
    Cpus(Vec<usize>),
}

/// The target, checked, and its description for the heading.
pub(super) fn resolve_target(target: &StatTarget) -> Result<(Target, String), SamplerError> {
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

fn plural<T: ToString>(one: &str, many: &str, ids: &BTreeSet<T>) -> String {
    let list: Vec<String> = ids.iter().map(ToString::to_string).collect();
    format!(
        "{} {}",
        if list.len() == 1 { one } else { many },
        list.join(", ")
    )
}
