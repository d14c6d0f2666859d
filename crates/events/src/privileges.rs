//! What the kernel will let this process do with `perf_event_open`: the
//! `kernel.perf_event_paranoid` level, the capabilities that override it,
//! and the locked-memory budget that ring buffers are charged to.
//!
//! Read once, up front (by the sampler), so that a refusal can say what was
//! refused and what to change. The rules are the kernel's (`kernel/events/core.c`):
//! counting the kernel needs paranoid ≤ 1, counting a whole CPU paranoid ≤ 0,
//! unless the process has CAP_PERFMON (or CAP_SYS_ADMIN, which implies it);
//! some distributions add a level 3 that refuses unprivileged users outright.

/// `CAP_IPC_LOCK`: lock memory beyond the limits (ring buffers too).
pub const CAP_IPC_LOCK: u32 = 14;
/// `CAP_SYS_ADMIN`: everything `CAP_PERFMON` allows, and more.
pub const CAP_SYS_ADMIN: u32 = 21;
/// `CAP_PERFMON` (Linux 5.8): performance monitoring whatever the paranoid level.
pub const CAP_PERFMON: u32 = 38;

/// How to give the running program CAP_PERFMON, named by its path: the
/// profiler, or the program that links libprofiler.
pub fn grant_perfmon() -> String {
    let program = std::env::current_exe()
        .map_or_else(|_| "PROGRAM".to_owned(), |path| path.display().to_string());
    format!("grant {program} CAP_PERFMON (`setcap cap_perfmon+ep {program}`)")
}

/// This process's standing with the kernel's perf_event checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Privileges {
    /// The effective user id (0: root).
    pub euid: u32,
    /// `kernel.perf_event_paranoid`, if readable.
    pub paranoid: Option<i64>,
    /// `kernel.perf_event_mlock_kb`: ring-buffer memory each user may lock
    /// per CPU before `RLIMIT_MEMLOCK` is charged.
    pub mlock_kb: Option<u64>,
    /// `RLIMIT_MEMLOCK` (`ulimit -l`), soft limit in bytes; `None` when
    /// unlimited or unreadable.
    pub memlock_bytes: Option<u64>,
    /// The effective capability set (`CapEff` in /proc/self/status).
    pub capabilities: Option<u64>,
}

impl Privileges {
    pub fn is_root(&self) -> bool {
        self.euid == 0
    }

    /// Whether capability number `cap` is in the effective set.
    pub fn has_capability(&self, cap: u32) -> bool {
        self.capabilities
            .is_some_and(|caps| cap < 64 && caps & (1 << cap) != 0)
    }

    /// The kernel's `perfmon_capable()`: CAP_PERFMON or CAP_SYS_ADMIN, which
    /// lift every paranoid restriction.
    pub fn perfmon_capable(&self) -> bool {
        self.has_capability(CAP_PERFMON) || self.has_capability(CAP_SYS_ADMIN)
    }

    /// Whether the paranoid level lets this process profile its own
    /// programs' user space at all.
    pub fn may_profile_user(&self) -> bool {
        self.perfmon_capable() || self.paranoid.is_none_or(|p| p <= 2)
    }

    /// Whether events may count in the kernel (no `:u`): paranoid ≤ 1.
    pub fn may_count_kernel(&self) -> bool {
        self.perfmon_capable() || self.paranoid.is_none_or(|p| p <= 1)
    }

    /// Whether whole CPUs may be counted (`-a`, `-C`): paranoid ≤ 0.
    pub fn may_count_cpus(&self) -> bool {
        self.perfmon_capable() || self.paranoid.is_none_or(|p| p <= 0)
    }

    /// Whether ring buffers may lock memory without limit: with
    /// CAP_IPC_LOCK, or at paranoid -1.
    pub fn unlimited_ring_memory(&self) -> bool {
        self.has_capability(CAP_IPC_LOCK) || self.paranoid.is_some_and(|p| p < 0)
    }

    /// The ring-buffer memory this user may lock over `cpus` CPUs, in
    /// bytes: `perf_event_mlock_kb` per CPU, then `RLIMIT_MEMLOCK`. `None`
    /// when unlimited or unknown.
    pub fn ring_budget_bytes(&self, cpus: usize) -> Option<u64> {
        if self.unlimited_ring_memory() {
            return None;
        }
        let per_user = self.mlock_kb? * 1024 * cpus as u64;
        Some(per_user + self.memlock_bytes?)
    }

    /// The reason a permission refusal most likely had, for an open that
    /// counted the kernel (`kernel`), whole CPUs (`cpus`), or neither, and
    /// what would allow it.
    pub fn refusal(&self, kernel: bool, cpus: bool) -> (String, String) {
        let level = match self.paranoid {
            Some(level) => format!("kernel.perf_event_paranoid is {level}"),
            None => "kernel.perf_event_paranoid is unreadable".to_owned(),
        };
        let grant = format!("run as root, or {}", grant_perfmon());
        if !self.may_profile_user() {
            return (
                format!("{level}, which refuses all profiling to unprivileged users"),
                format!(
                    "allow your own programs with `sysctl kernel.perf_event_paranoid=2`, or {grant}"
                ),
            );
        }
        if cpus && !self.may_count_cpus() {
            return (
                format!(
                    "counting whole CPUs (-a, -C) needs a paranoid level of 0 or less, and {level}"
                ),
                format!(
                    "count a command or a process instead, allow it with `sysctl kernel.perf_event_paranoid=0`, or {grant}"
                ),
            );
        }
        if kernel && !self.may_count_kernel() {
            return (
                format!("counting in the kernel needs a paranoid level of 1 or less, and {level}"),
                format!(
                    "count user space only (add :u to the event), allow it with `sysctl kernel.perf_event_paranoid=1`, or {grant}"
                ),
            );
        }
        (
            format!(
                "{level} and this process {} CAP_PERFMON; observing another user's process \
                 needs the right to trace it",
                if self.perfmon_capable() {
                    "has"
                } else {
                    "lacks"
                }
            ),
            format!(
                "count your own processes, {grant}; a security policy (SELinux, AppArmor, a \
                 container's seccomp profile) may also forbid perf_event_open"
            ),
        )
    }
}

/// What a paranoid level allows an unprivileged user.
pub fn paranoid_meaning(level: i64) -> &'static str {
    match level {
        ..=-1 => {
            "no restrictions: every user may count and sample anything, tracepoints and \
             whole CPUs included, without a locked-memory limit"
        }
        0 => "every user may count and sample user space and the kernel, and whole CPUs (-a)",
        1 => {
            "every user may count and sample user space and the kernel of their own \
             processes; whole CPUs (-a) need CAP_PERFMON"
        }
        2 => {
            "every user may count and sample the user space of their own processes; the \
             kernel and whole CPUs need CAP_PERFMON"
        }
        _ => "unprivileged users may not use perf events at all; CAP_PERFMON is needed",
    }
}

/// The effective capability set from the text of /proc/PID/status.
pub fn effective_capabilities(status: &str) -> Option<u64> {
    let hex = status
        .lines()
        .find_map(|line| line.strip_prefix("CapEff:"))?
        .trim();
    u64::from_str_radix(hex, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(paranoid: i64, capabilities: u64) -> Privileges {
        Privileges {
            euid: 1000,
            paranoid: Some(paranoid),
            mlock_kb: Some(516),
            memlock_bytes: Some(8 << 20),
            capabilities: Some(capabilities),
        }
    }

    #[test]
    fn capabilities_are_read_from_the_status_text() {
        let status = "Name:\tx\nCapInh:\t0000000000000000\nCapEff:\t000001fffeffffff\n";
        let caps = effective_capabilities(status).unwrap();
        assert_eq!(caps, 0x1fffeffffff);
        let root = Privileges {
            capabilities: Some(caps),
            ..with(2, 0)
        };
        assert!(root.has_capability(CAP_PERFMON) && root.has_capability(CAP_SYS_ADMIN));
        assert_eq!(effective_capabilities("Name:\tx\n"), None);
    }

    #[test]
    fn the_paranoid_level_decides_unless_a_capability_overrides_it() {
        let user = with(2, 0);
        assert!(user.may_profile_user() && !user.may_count_kernel() && !user.may_count_cpus());
        assert!(with(1, 0).may_count_kernel() && !with(1, 0).may_count_cpus());
        assert!(with(0, 0).may_count_cpus());
        assert!(!with(3, 0).may_profile_user());
        let perfmon = with(3, 1 << CAP_PERFMON);
        assert!(perfmon.may_profile_user() && perfmon.may_count_cpus());
        assert!(with(4, 1 << CAP_SYS_ADMIN).may_count_kernel());
    }

    #[test]
    fn refusals_name_the_level_that_would_allow_them() {
        let (reason, advice) = with(2, 0).refusal(false, true);
        assert!(reason.contains("paranoid is 2"), "{reason}");
        assert!(advice.contains("perf_event_paranoid=0"), "{advice}");
        assert!(advice.contains("CAP_PERFMON"), "{advice}");
        let (reason, advice) = with(2, 0).refusal(true, false);
        assert!(reason.contains("1 or less"), "{reason}");
        assert!(advice.contains("perf_event_paranoid=1") && advice.contains(":u"));
        let (reason, advice) = with(3, 0).refusal(false, false);
        assert!(reason.contains("refuses all profiling"), "{reason}");
        assert!(advice.contains("perf_event_paranoid=2"), "{advice}");
    }

    #[test]
    fn the_ring_budget_is_per_cpu_then_the_memlock_limit() {
        assert_eq!(
            with(2, 0).ring_budget_bytes(2),
            Some(2 * 516 * 1024 + (8 << 20))
        );
        assert_eq!(with(2, 1 << CAP_IPC_LOCK).ring_budget_bytes(2), None);
        assert_eq!(with(-1, 0).ring_budget_bytes(2), None);
    }
}
