//! A refused `perf_event_open`, explained: the kernel answers with a bare
//! errno, and what it means depends on what was asked (a hardware event on
//! a machine without a PMU, the kernel at paranoid 2, a whole CPU, a precise
//! event). Each explanation says what was refused and what to change.
//! A trial open on the profiler itself, to learn before anything runs
//! whether the kernel accepts an event, is explained the same way.

use std::io;

use perf_event::Builder;
use profiler_events::EventSpec;

use crate::error::SamplerError;
use crate::privileges;
use crate::{sysinfo, tasks};

/// What an open asked of the kernel besides the event itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct OpenScope {
    /// A whole CPU (`pid == -1`) rather than tasks.
    pub cpu_wide: bool,
    /// The process observed, when it is not one the profiler started.
    pub process: Option<u32>,
}

/// Opens `builder`, set up for `spec`, on this process for a moment: `Ok`
/// when the kernel accepts the event so, why not otherwise.
pub(crate) fn probe(builder: &mut Builder<'_>, spec: &EventSpec) -> Result<(), SamplerError> {
    builder
        .observe_self()
        .any_cpu()
        .build()
        .map(drop)
        .map_err(|error| explain(spec, error, OpenScope::default()))
}

/// A refusal in a few words: why an event is not supported (the event is
/// named already), or else the whole error.
pub(crate) fn reason(error: SamplerError) -> String {
    match error {
        SamplerError::EventNotSupported { reason, .. } => reason,
        other => other.to_string(),
    }
}

/// Explains why the kernel refused to open `spec`.
pub(crate) fn explain(spec: &EventSpec, error: io::Error, scope: OpenScope) -> SamplerError {
    let event = spec.name();
    let missing_pmu = spec.hardware && !sysinfo::has_cpu_pmu();
    // Whether the machine has the event does not depend on its modifiers.
    let unsupported = || SamplerError::EventNotSupported {
        event: spec.base.clone(),
        reason: unsupported_reason(spec.hardware, missing_pmu).to_owned(),
    };
    match error.raw_os_error() {
        Some(libc::ENOENT | libc::ENODEV) => unsupported(),
        Some(libc::EOPNOTSUPP | libc::EINVAL) if missing_pmu => unsupported(),
        Some(libc::EOPNOTSUPP | libc::EINVAL) if spec.precise > 0 => {
            SamplerError::PreciseNotSupported {
                event,
                precise: spec.precise,
            }
        }
        Some(libc::EOPNOTSUPP) => unsupported(),
        Some(libc::EACCES | libc::EPERM) => {
            let privileges = privileges::read();
            let (reason, advice) = match scope.process.map(|pid| (pid, tasks::owner(pid))) {
                Some((pid, Some(uid)))
                    if uid != privileges.euid && privileges.may_profile_user() =>
                {
                    (
                        format!(
                            "process {pid} belongs to another user (uid {uid}), and observing it \
                         needs CAP_PERFMON or the right to trace it"
                        ),
                        format!(
                            "count it as its owner, run as root, or {}",
                            privileges::grant_perfmon()
                        ),
                    )
                }
                _ => privileges.refusal(spec.kernel, scope.cpu_wide),
            };
            SamplerError::PermissionDenied {
                event,
                reason,
                advice,
            }
        }
        Some(libc::EMFILE) => SamplerError::TooManyFiles {
            event,
            limit: privileges::open_files_limit(),
        },
        Some(libc::EBUSY) => SamplerError::CounterBusy { event },
        _ => SamplerError::OpenFailed { event, error },
    }
}

/// Why an event this kernel or CPU lacks is missing: a software event, a
/// hardware one, or a hardware one on a machine without a PMU.
fn unsupported_reason(hardware: bool, missing_pmu: bool) -> &'static str {
    if !hardware {
        "the kernel does not provide it"
    } else if !missing_pmu {
        "the CPU's performance-monitoring unit does not provide it"
    } else {
        "this machine exposes no hardware performance-monitoring unit (a virtual machine?)"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(name: &str, errno: i32, scope: OpenScope) -> String {
        let spec = EventSpec::parse(name).unwrap();
        explain(&spec, io::Error::from_raw_os_error(errno), scope).to_string()
    }

    #[test]
    fn each_errno_says_what_to_change() {
        let task = OpenScope::default();
        let message = refused("task-clock", libc::EMFILE, task);
        assert!(message.contains("ulimit -n"), "{message}");
        let message = refused("task-clock", libc::EBUSY, task);
        assert!(
            message.contains("busy") && message.contains("nmi_watchdog"),
            "{message}"
        );
        let message = refused("task-clock", libc::ESRCH, task);
        assert!(message.contains("exited"), "{message}");
        let message = refused("task-clock", libc::ENOENT, task);
        assert!(message.contains("kernel does not provide it"), "{message}");
        let message = refused(
            "cycles",
            libc::EACCES,
            OpenScope {
                cpu_wide: true,
                process: None,
            },
        );
        assert!(message.contains("permission denied"), "{message}");
        assert!(message.contains("'cycles'"), "{message}");
    }

    #[test]
    fn a_precise_event_the_cpu_cannot_count_names_the_modifier() {
        let mut spec = EventSpec::parse("cycles").unwrap();
        spec.precise = 2;
        let error = explain(
            &spec,
            io::Error::from_raw_os_error(libc::EINVAL),
            OpenScope::default(),
        );
        if sysinfo::has_cpu_pmu() {
            assert!(error.to_string().contains(":p modifier"), "{error}");
        } else {
            assert!(error.to_string().contains("no hardware"), "{error}");
        }
    }
}
