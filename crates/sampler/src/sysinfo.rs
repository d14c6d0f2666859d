//! Facts about this machine that decide what may be sampled, read from /proc
//! and /sys.

use std::fs;
use std::io;

use profiler_model::HostInfo;

/// `kernel.perf_event_max_sample_rate`: the highest `-F` the kernel accepts.
pub fn max_sample_rate() -> Option<u64> {
    read_number("/proc/sys/kernel/perf_event_max_sample_rate")
}

/// `kernel.perf_event_paranoid`: who may profile what.
pub fn paranoid_level() -> Option<i64> {
    read_number("/proc/sys/kernel/perf_event_paranoid")
}

/// `kernel.perf_event_mlock_kb`: ring-buffer memory each user may lock per CPU.
pub fn mlock_kb() -> Option<u64> {
    read_number("/proc/sys/kernel/perf_event_mlock_kb")
}

/// Whether the kernel exposes a CPU performance-monitoring unit (a real
/// hardware cycle counter). Virtual machines often do not.
pub fn has_cpu_pmu() -> bool {
    let Ok(devices) = fs::read_dir("/sys/bus/event_source/devices") else {
        return false;
    };
    devices.flatten().any(|d| {
        let name = d.file_name();
        let name = name.to_string_lossy();
        name == "cpu" || name.starts_with("cpu_") || name.starts_with("armv")
    })
}

/// The CPUs that are online now.
pub fn online_cpus() -> io::Result<Vec<usize>> {
    match fs::read_to_string("/sys/devices/system/cpu/online") {
        Ok(text) => parse_cpu_list(text.trim()).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("unreadable CPU list '{text}'"),
            )
        }),
        Err(_) => Ok((0..std::thread::available_parallelism()?.get()).collect()),
    }
}

/// Parses a kernel CPU list such as `0-3,8,10-11`.
pub fn parse_cpu_list(text: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in text.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((first, last)) => {
                let (first, last): (usize, usize) = (first.parse().ok()?, last.parse().ok()?);
                if first > last {
                    return None;
                }
                cpus.extend(first..=last);
            }
            None => cpus.push(part.parse().ok()?),
        }
    }
    Some(cpus)
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
    fn cpu_lists_parse_like_the_kernel_writes_them() {
        assert_eq!(parse_cpu_list("0"), Some(vec![0]));
        assert_eq!(parse_cpu_list("0-3"), Some(vec![0, 1, 2, 3]));
        assert_eq!(parse_cpu_list("0-1,4,6-7"), Some(vec![0, 1, 4, 6, 7]));
        assert_eq!(parse_cpu_list(""), Some(vec![]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("a"), None);
    }

    #[test]
    fn this_machine_has_online_cpus_and_a_name() {
        assert!(!online_cpus().unwrap().is_empty());
        assert!(!host_info().kernel.is_empty());
    }
}
