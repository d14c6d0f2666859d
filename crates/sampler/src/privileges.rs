//! Reading what the kernel will let this process do with `perf_event_open`
//! (the rules themselves are `profiler_events::Privileges`'): the
//! `kernel.perf_event_paranoid` level, the capabilities that override it,
//! and the locked-memory budget that ring buffers are charged to.
//!
//! Read once, up front, so that a refusal can say what was refused and what
//! to change. The rules are the kernel's (`kernel/events/core.c`):
//! counting the kernel needs paranoid ≤ 1, counting a whole CPU paranoid ≤ 0,
//! unless the process has CAP_PERFMON (or CAP_SYS_ADMIN, which implies it);
//! some distributions add a level 3 that refuses unprivileged users outright.

use std::fs;

pub(crate) use profiler_events::{Privileges, effective_capabilities, grant_perfmon};

use crate::sysinfo;

/// Reads the paranoid level, the mlock budget and the capabilities of
/// this process now.
pub fn read() -> Privileges {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    Privileges {
        euid,
        paranoid: sysinfo::paranoid_level(),
        mlock_kb: sysinfo::mlock_kb(),
        memlock_bytes: memlock_limit(),
        capabilities: fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|status| effective_capabilities(&status)),
    }
}

/// `RLIMIT_MEMLOCK`'s soft limit in bytes; `None` when unlimited.
fn memlock_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid out-pointer for the duration of the call.
    let read = unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut limit) };
    (read == 0 && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur)
}

/// `RLIMIT_NOFILE`'s soft limit: how many files this process may open.
pub(crate) fn open_files_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid out-pointer for the duration of the call.
    let read = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    (read == 0 && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_can_be_read() {
        let privileges = read();
        assert!(privileges.capabilities.is_some());
        assert_eq!(privileges.paranoid, sysinfo::paranoid_level());
    }
}
