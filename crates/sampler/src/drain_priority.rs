//! The scheduling priority of the thread that drains the ring buffers.
//!
//! A command with more busy threads than CPUs keeps the drainer waiting
//! for a CPU among all of them while the rings fill up, and the kernel
//! drops what no longer fits. Where this process may (root,
//! CAP_SYS_NICE, or an `RLIMIT_RTPRIO` that allows it), the draining
//! thread alone runs at the lowest real-time priority, `SCHED_FIFO` 1, for
//! as long as it drains: it then gets a CPU the moment a ring wakes it,
//! and its bursts are short (it sleeps in `poll` between them, and the
//! kernel keeps 5% of each CPU for everything else should it not).
//!
//! Never the command's: the command is forked before the priority is
//! raised, so it starts with the policy and nice value the profiler had,
//! and `SCHED_RESET_ON_FORK` puts any thread or process started while the
//! priority is raised back to the ordinary policy. The old policy comes
//! back when draining ends.

use std::io;

/// The real-time priority the drainer runs at: the lowest, below any
/// real-time thread the machine already has.
const PRIORITY: libc::c_int = 1;

/// What became of the drainer's priority.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DrainPriority {
    /// Raised to `SCHED_FIFO` at this priority while draining.
    RealTime { priority: i32 },
    /// This process may not raise it (neither root nor CAP_SYS_NICE).
    NotAllowed,
    /// Left as it was: already real-time (e.g. under `chrt`), or refused
    /// for another reason than permissions.
    #[default]
    Unchanged,
}

/// The calling thread raised to real-time priority, put back as it was
/// when dropped.
pub(crate) struct RaisedPriority {
    /// The policy and priority to go back to; `None`: nothing was changed.
    previous: Option<(libc::c_int, libc::sched_param)>,
    outcome: DrainPriority,
}

impl RaisedPriority {
    /// Raises the calling thread where this process may; call it once the
    /// command has been forked, from the thread that drains.
    pub(crate) fn raise() -> RaisedPriority {
        let unchanged = |outcome| RaisedPriority {
            previous: None,
            outcome,
        };
        let mut previous = libc::sched_param { sched_priority: 0 };
        // SAFETY: 0 is the calling thread; `previous` is a valid out-pointer
        // for the duration of the call.
        let policy = unsafe { libc::sched_getscheduler(0) };
        // SAFETY: as above.
        if policy < 0 || unsafe { libc::sched_getparam(0, &mut previous) } != 0 {
            return unchanged(DrainPriority::Unchanged);
        }
        let policy = policy & !libc::SCHED_RESET_ON_FORK;
        if policy == libc::SCHED_FIFO || policy == libc::SCHED_RR {
            return unchanged(DrainPriority::Unchanged);
        }
        let raised = libc::sched_param {
            sched_priority: PRIORITY,
        };
        // SAFETY: 0 is the calling thread; `raised` is a valid sched_param.
        let set = unsafe {
            libc::sched_setscheduler(0, libc::SCHED_FIFO | libc::SCHED_RESET_ON_FORK, &raised)
        };
        if set != 0 {
            let outcome = match io::Error::last_os_error().raw_os_error() {
                Some(libc::EPERM) => DrainPriority::NotAllowed,
                _ => DrainPriority::Unchanged,
            };
            return unchanged(outcome);
        }
        RaisedPriority {
            previous: Some((policy, previous)),
            outcome: DrainPriority::RealTime { priority: PRIORITY },
        }
    }

    pub(crate) fn outcome(&self) -> DrainPriority {
        self.outcome
    }
}

impl Drop for RaisedPriority {
    fn drop(&mut self) {
        if let Some((policy, param)) = self.previous {
            // Going back to an ordinary policy is always allowed; the nice
            // value was kept throughout. A failure leaves the profiler's
            // own remaining work (the report of the recording) raised, which
            // is harmless.
            // SAFETY: 0 is the calling thread; `param` is a valid sched_param.
            unsafe { libc::sched_setscheduler(0, policy, &param) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> libc::c_int {
        // SAFETY: 0 is the calling thread.
        unsafe { libc::sched_getscheduler(0) }
    }

    #[test]
    fn the_raise_is_undone_and_never_inherited() {
        // On a thread of its own, so that the test harness's thread keeps
        // its policy whatever happens.
        std::thread::spawn(|| {
            let before = policy();
            let raised = RaisedPriority::raise();
            if let DrainPriority::RealTime { priority } = raised.outcome() {
                assert_eq!(priority, PRIORITY);
                assert_eq!(policy(), libc::SCHED_FIFO | libc::SCHED_RESET_ON_FORK);
                // A thread started meanwhile runs at the ordinary policy.
                let child = std::thread::spawn(policy).join().unwrap();
                assert_eq!(child, libc::SCHED_OTHER);
            } else {
                assert_eq!(policy(), before);
            }
            drop(raised);
            assert_eq!(policy(), before);
        })
        .join()
        .unwrap();
    }
}
