//! Facts about this machine that decide what may be sampled, read from /proc
//! and /sys.

use std::fs;
use std::io;

use std::sync::OnceLock;

use profiler_events::{EventSource, Pmus, SYSFS_PMUS, is_core_pmu, parse_cpu_list};
use profiler_model::HostInfo;

/// This machine's PMUs, read from sysfs once per process: what a program
/// that profiles or counts itself again and again names its events
/// against.
pub(crate) fn pmus() -> &'static Pmus {
    static PMUS: OnceLock<Pmus> = OnceLock::new();
    PMUS.get_or_init(Pmus::system)
}

/// `kernel.perf_event_max_sample_rate`: the highest `-F` the kernel accepts.
pub fn max_sample_rate() -> Option<u64> {
    read_number("/proc/sys/kernel/perf_event_max_sample_rate")
}

/// `kernel.perf_event_paranoid`: who may profile what.
pub(crate) fn paranoid_level() -> Option<i64> {
    read_number("/proc/sys/kernel/perf_event_paranoid")
}

/// `kernel.perf_event_mlock_kb`: ring-buffer memory each user may lock per CPU.
pub(crate) fn mlock_kb() -> Option<u64> {
    read_number("/proc/sys/kernel/perf_event_mlock_kb")
}

/// Whether the kernel exposes a CPU performance-monitoring unit (a real
/// hardware cycle counter). Virtual machines often do not.
pub(crate) fn has_cpu_pmu() -> bool {
    let Ok(devices) = fs::read_dir(SYSFS_PMUS) else {
        return false;
    };
    devices
        .flatten()
        .any(|d| is_core_pmu(&d.file_name().to_string_lossy()))
}

/// `kernel.perf_cpu_time_max_percent`: the share of CPU time sampling
/// interrupts may take before the kernel lowers the maximum sample rate.
pub(crate) fn cpu_time_max_percent() -> Option<u64> {
    read_number("/proc/sys/kernel/perf_cpu_time_max_percent")
}

/// The kernel release (`uname -r`).
pub(crate) fn kernel_release() -> Option<String> {
    fs::read_to_string("/proc/sys/kernel/osrelease")
        .ok()
        .map(|s| s.trim().to_owned())
}

/// The CPU's model name, as /proc/cpuinfo gives it.
pub(crate) fn cpu_model() -> Option<String> {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").ok()?;
    cpu_model_of(&cpuinfo)
}

fn cpu_model_of(cpuinfo: &str) -> Option<String> {
    [
        "model name",
        "Model",
        "cpu model",
        "Hardware",
        "uarch",
        "isa",
    ]
    .iter()
    .find_map(|key| {
        cpuinfo.lines().find_map(|line| {
            let (name, value) = line.split_once(':')?;
            (name.trim() == *key && !value.trim().is_empty()).then(|| value.trim().to_owned())
        })
    })
}

/// The event sources this kernel exposes, by name.
pub(crate) fn event_sources() -> Vec<EventSource> {
    let Ok(devices) = fs::read_dir(SYSFS_PMUS) else {
        return Vec::new();
    };
    let mut sources: Vec<EventSource> = devices
        .flatten()
        .map(|device| EventSource {
            name: device.file_name().to_string_lossy().into_owned(),
            perf_type: fs::read_to_string(device.path().join("type"))
                .ok()
                .and_then(|t| t.trim().parse().ok()),
        })
        .collect();
    sources.sort_by(|a, b| a.name.cmp(&b.name));
    sources
}

/// The size of a memory page, in bytes.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size)
        .ok()
        .filter(|&s| s > 0)
        .unwrap_or(4096)
}

/// Hands the heap memory freed so far back to the system (glibc's
/// `malloc_trim`): a process that runs for hours and now and then reads a
/// large file's tables (`top` naming a compiler's code) then holds only
/// what it still uses, not the peak of the last read.
pub fn release_freed_memory() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim only returns free heap pages; it has no
    // preconditions and touches no memory in use.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The CPUs that are online now.
pub(crate) fn online_cpus() -> io::Result<Vec<usize>> {
    match fs::read_to_string("/sys/devices/system/cpu/online") {
        Ok(text) => parse_cpu_list(&text).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("unreadable CPU list '{}'", text.trim()),
            )
        }),
        Err(_) => Ok((0..std::thread::available_parallelism()?.get()).collect()),
    }
}

/// The machine's name, kernel and architecture, for a recording's header.
pub fn host_info() -> HostInfo {
    let read = |path: &str| {
        fs::read_to_string(path)
            .map(|s| s.trim().to_owned())
            .unwrap_or_default()
    };
    HostInfo {
        hostname: read("/proc/sys/kernel/hostname"),
        kernel: read("/proc/sys/kernel/osrelease"),
        arch: std::env::consts::ARCH.to_owned(),
        cpus: online_cpus().map_or(0, |c| c.len() as u32),
    }
}

fn read_number<T: std::str::FromStr>(path: &str) -> Option<T> {
    fs::read_to_string(path).ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_model_comes_from_the_first_line_naming_it() {
        let x86 = "processor\t: 0\nmodel name\t: Example CPU @ 2.0GHz\nprocessor\t: 1\n";
        assert_eq!(cpu_model_of(x86).as_deref(), Some("Example CPU @ 2.0GHz"));
        assert_eq!(cpu_model_of("processor : 0\n"), None);
    }

    #[test]
    fn the_software_event_source_is_always_there() {
        let software = event_sources().into_iter().find(|s| s.name == "software");
        assert_eq!(software.and_then(|s| s.perf_type), Some(1));
        assert!(page_size().is_power_of_two());
    }

    #[test]
    fn this_machine_has_online_cpus_and_a_name() {
        assert!(!online_cpus().unwrap().is_empty());
        assert!(!host_info().kernel.is_empty());
    }
}
