//! Attaching to processes and threads that are already running (`-p`,
//! `-t`): counters on every thread there is, and noticing when all of them
//! have gone. The target is never stopped or signalled.
//!
//! A counter inherited by the threads a thread starts covers only those
//! started after it was opened. So the threads are listed, a counter opened
//! on each (a thread that ends first is left out), and the threads listed
//! again: a thread that was not there the first time may have started
//! before its creator's counter existed (and inherited none), so then every
//! counter is closed and opened again, until the list holds still, at most
//! [`OPEN_ATTEMPTS`] times. No thread is counted twice: each listed thread
//! existed before any counter of its attempt, so it inherited none.

use crate::call_stacks::CallStacks;
use crate::counters::{self, ResolvedEvent, RingPlan, Rings};
use crate::error::SamplerError;
use crate::privileges;
use crate::target::Attachment;
use crate::tasks;

/// How many times the threads are listed and the counters opened before
/// the last list is taken as it is.
const OPEN_ATTEMPTS: usize = 5;

/// What to open on the attached threads.
pub(crate) struct AttachPlan<'a> {
    pub events: &'a [ResolvedEvent],
    pub call_graph: Option<CallStacks>,
    pub cpus: &'a [usize],
    pub bytes: usize,
    /// Record the threads' switches (`--off-cpu`).
    pub switches: bool,
}

/// Opens every event on every thread of the attachment, on every CPU,
/// counting at once.
pub(crate) fn open(attachment: &Attachment, plan: &AttachPlan<'_>) -> Result<Rings, SamplerError> {
    raise_open_file_limit();
    let mut attempt = 1;
    loop {
        let listed = attachment.tasks_now()?;
        let rings = open_on(listed.clone(), attachment, plan)?;
        // Chosen threads are not listed again: only they are wanted.
        if attachment.threads.is_some() || attempt == OPEN_ATTEMPTS {
            return Ok(rings);
        }
        let now = attachment.tasks_now()?;
        if now.iter().all(|tid| listed.binary_search(tid).is_ok()) {
            return Ok(rings);
        }
        attempt += 1;
    }
}

/// Opens the counters on `tasks`, leaving out those that end before their
/// counters are opened.
fn open_on(
    mut tasks: Vec<libc::pid_t>,
    attachment: &Attachment,
    plan: &AttachPlan<'_>,
) -> Result<Rings, SamplerError> {
    loop {
        let opened = counters::open_rings(&RingPlan {
            events: plan.events,
            call_graph: plan.call_graph,
            tasks: &tasks,
            cpus: plan.cpus,
            bytes: plan.bytes,
            enable_on_exec: false,
            side_band: true,
            switches: plan.switches,
        });
        match opened {
            Err(SamplerError::OpenFailed { event, error })
                if error.raw_os_error() == Some(libc::ESRCH) =>
            {
                let before = tasks.len();
                tasks.retain(|&tid| {
                    let tid = tid as u32;
                    tasks::task_stat(tid, tid).is_some_and(|stat| !stat.has_ended())
                });
                if tasks.is_empty() {
                    return Err(attachment.gone());
                }
                if tasks.len() == before {
                    return Err(SamplerError::OpenFailed { event, error });
                }
            }
            Err(error) => return Err(explain(error, attachment)),
            Ok(rings) => return Ok(rings),
        }
    }
}

/// Says why opening counters on the attachment failed, where the reason
/// lies with the target rather than with the event (which was checked on
/// the profiler itself before).
fn explain(error: SamplerError, attachment: &Attachment) -> SamplerError {
    match error {
        SamplerError::PermissionDenied { .. } => attach_denied(attachment),
        other => other,
    }
}

/// The refusal to attach, with what to change.
fn attach_denied(attachment: &Attachment) -> SamplerError {
    let privileges = privileges::read();
    let foreign = attachment.processes.iter().find_map(|&pid| {
        tasks::owner(pid)
            .filter(|&uid| uid != privileges.euid)
            .map(|uid| (pid, uid))
    });
    let grant = format!("run as root, or {}", privileges::grant_perfmon());
    let (pid, reason) = match foreign {
        _ if !privileges.may_profile_user() => {
            let (reason, advice) = privileges.refusal(false, false);
            (
                attachment.processes.first().copied().unwrap_or(0),
                format!("{reason}; {advice}"),
            )
        }
        Some((pid, uid)) if !privileges.perfmon_capable() => (
            pid,
            format!(
                "it belongs to user {uid}, and only its own user may attach to it; attach as \
                 that user, or {grant}"
            ),
        ),
        _ => (
            attachment.processes.first().copied().unwrap_or(0),
            format!(
                "the kernel requires the right to read it as a debugger would (ptrace read \
                 access), which a process that is not dumpable or changed its credentials \
                 (setuid, file capabilities, prctl(PR_SET_DUMPABLE, 0)) refuses; {grant}"
            ),
        ),
    };
    let target = match &attachment.threads {
        Some(threads) => match threads.as_slice() {
            [(_, tid)] => format!("thread {tid}"),
            _ => format!("the threads of process {pid}"),
        },
        None => format!("process {pid}"),
    };
    SamplerError::AttachDenied { target, reason }
}

/// One counter per event, thread and CPU can take many descriptors: the
/// soft limit is raised to the hard one.
fn raise_open_file_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid out-pointer for the duration of the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return;
    }
    if limit.rlim_cur < limit.rlim_max {
        limit.rlim_cur = limit.rlim_max;
        // SAFETY: `limit` is a valid, initialised rlimit for the call.
        unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) };
    }
}

/// The attached tasks as they were when the recording began, to tell when
/// all have ended. A task is known by its start time as well as its id, so
/// that another one reusing the id does not count.
pub(crate) struct Liveness {
    /// `(pid, tid, start time)`; for a whole process `tid` is its pid.
    tasks: Vec<(u32, u32, u64)>,
    whole_processes: bool,
}

impl Liveness {
    pub(crate) fn new(attachment: &Attachment) -> Liveness {
        let ids: Vec<(u32, u32)> = match &attachment.threads {
            Some(threads) => threads.clone(),
            None => attachment.processes.iter().map(|&p| (p, p)).collect(),
        };
        let tasks = ids
            .into_iter()
            .filter_map(|(pid, tid)| Some((pid, tid, tasks::task_stat(pid, tid)?.start_time)))
            .collect();
        Liveness {
            tasks,
            whole_processes: attachment.threads.is_none(),
        }
    }

    /// Whether any attached task still runs.
    pub(crate) fn any_running(&self) -> bool {
        self.tasks.iter().any(|&(pid, tid, start_time)| {
            let Some(stat) = tasks::task_stat(pid, tid) else {
                return false;
            };
            if stat.start_time != start_time {
                return false;
            }
            if !stat.has_ended() {
                return true;
            }
            // A process lives on after its first thread ends while others run.
            self.whole_processes && tasks::has_running_thread(pid)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::{ResolvedTarget, Target};
    use crate::tasks::WaitingThread;

    #[test]
    fn a_running_thread_is_alive_and_an_ended_one_is_not() {
        let pid = std::process::id();
        let worker = WaitingThread::start();
        let ResolvedTarget::Attach(attachment) =
            ResolvedTarget::resolve(&Target::Threads(vec![worker.tid]), &mut Vec::new()).unwrap()
        else {
            panic!("not an attachment");
        };
        let liveness = Liveness::new(&attachment);
        assert!(liveness.any_running());
        worker.end();
        // The kernel lets the joining thread go a moment before the ended
        // one stops running.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while liveness.any_running() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(!liveness.any_running());
        assert!(
            Liveness::new(&Attachment {
                processes: vec![pid],
                threads: None
            })
            .any_running()
        );
    }

    #[test]
    fn a_refusal_names_the_target() {
        let attachment = Attachment {
            processes: vec![1],
            threads: None,
        };
        let error = attach_denied(&attachment).to_string();
        assert!(
            error.starts_with("cannot attach to process 1 (permission denied): "),
            "{error}"
        );
        assert!(error.contains("CAP_PERFMON"), "{error}");
    }
}
