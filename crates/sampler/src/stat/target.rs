//! What `stat` counts, from the target as `record` resolves it too: a
//! command, found; the threads of running processes, or running threads,
//! each with its name; or CPUs, checked to be online. Each described for
//! the heading (`'./app arg'`, `process 1234`, `all CPUs`).

use crate::command::ResolvedCommand;
use crate::error::SamplerError;
use crate::target::{Attachment, ResolvedTarget, Target};
use crate::tasks;

/// A thread counted.
#[derive(Clone, Debug)]
pub(super) struct Task {
    pub pid: u32,
    pub tid: u32,
    /// Its name (`comm`) when the counting began.
    pub name: Option<String>,
}

/// The target's counters' subjects.
#[derive(Debug)]
pub(super) enum Counted {
    Command(ResolvedCommand),
    /// Threads; of whole processes when `processes` names them.
    Tasks {
        tasks: Vec<Task>,
        processes: Vec<u32>,
    },
    Cpus(Vec<usize>),
}

/// The target, checked, and its description for the heading.
pub(super) fn resolve_target(
    target: &Target,
    notices: &mut Vec<String>,
) -> Result<(Counted, String), SamplerError> {
    Ok(match ResolvedTarget::resolve(target, notices)? {
        ResolvedTarget::Launch(command) => {
            let description = format!(
                "'{}'",
                command
                    .argv
                    .iter()
                    .map(|a| a.to_string_lossy())
                    .collect::<Vec<_>>()
                    .join(" ")
            );
            (Counted::Command(command), description)
        }
        ResolvedTarget::Attach(attachment) => attached(&attachment)?,
        ResolvedTarget::SystemWide { cpus, .. } => {
            let description = match target {
                Target::SystemWide { cpus: None, .. } => "all CPUs".to_owned(),
                _ => plural("CPU", "CPUs", &cpus),
            };
            (Counted::Cpus(cpus), description)
        }
    })
}

/// The threads of the attached processes (each process's now), or the
/// chosen threads, by id.
fn attached(attachment: &Attachment) -> Result<(Counted, String), SamplerError> {
    let task = |pid, tid| Task {
        pid,
        tid,
        name: tasks::thread_name(pid, tid),
    };
    let mut tasks = Vec::new();
    match &attachment.threads {
        None => {
            let mut processes = attachment.processes.clone();
            processes.sort_unstable();
            for &pid in &processes {
                let threads =
                    tasks::threads_of(pid).map_err(|_| SamplerError::NoSuchProcess { pid })?;
                tasks.extend(threads.into_iter().map(|tid| task(pid, tid)));
            }
            let description = plural("process", "processes", &processes);
            Ok((Counted::Tasks { tasks, processes }, description))
        }
        Some(threads) => {
            let mut threads = threads.clone();
            threads.sort_unstable_by_key(|&(_, tid)| tid);
            tasks.extend(threads.iter().map(|&(pid, tid)| task(pid, tid)));
            let tids: Vec<u32> = threads.iter().map(|&(_, tid)| tid).collect();
            let description = plural("thread", "threads", &tids);
            let processes = Vec::new();
            Ok((Counted::Tasks { tasks, processes }, description))
        }
    }
}

fn plural<T: ToString>(one: &str, many: &str, ids: &[T]) -> String {
    let list: Vec<String> = ids.iter().map(ToString::to_string).collect();
    format!(
        "{} {}",
        if list.len() == 1 { one } else { many },
        list.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_and_processes_are_counted_by_id_and_described() {
        let pid = std::process::id();
        let worker = tasks::WaitingThread::start();
        let (counted, description) =
            resolve_target(&Target::Threads(vec![worker.tid]), &mut Vec::new()).unwrap();
        assert_eq!(description, format!("thread {}", worker.tid));
        let Counted::Tasks { tasks, processes } = counted else {
            panic!("{counted:?}");
        };
        assert_eq!((tasks.len(), tasks[0].pid), (1, pid));
        assert!(processes.is_empty());
        // A thread's id given for a process means its process.
        let (counted, description) =
            resolve_target(&Target::Processes(vec![worker.tid, pid]), &mut Vec::new()).unwrap();
        assert_eq!(description, format!("process {pid}"));
        let Counted::Tasks { tasks, processes } = counted else {
            panic!("{counted:?}");
        };
        assert!(tasks.iter().any(|t| t.tid == worker.tid), "{tasks:?}");
        assert_eq!(processes, [pid]);
        worker.end();
        let error = resolve_target(&Target::Threads(Vec::new()), &mut Vec::new()).unwrap_err();
        assert!(error.to_string().contains("at least one id"), "{error}");
    }
}
