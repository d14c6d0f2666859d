//! The processes and threads of this machine, as /proc shows them: what
//! attaching (`-p`, `-t`) and counting per thread start from.

use std::fs;
use std::io;

/// The threads of process `pid` that exist now, in /proc/PID/task order;
/// an error naming the pid when there is no such process.
pub(crate) fn threads_of(pid: u32) -> io::Result<Vec<u32>> {
    let dir = fs::read_dir(format!("/proc/{pid}/task")).map_err(|error| match error.kind() {
        io::ErrorKind::NotFound => io::Error::new(
            io::ErrorKind::NotFound,
            format!("there is no process {pid}"),
        ),
        _ => error,
    })?;
    let mut tids: Vec<u32> = dir
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
        .collect();
    tids.sort_unstable();
    Ok(tids)
}

/// The process a thread belongs to (its thread-group id).
pub(crate) fn process_of(tid: u32) -> io::Result<u32> {
    let status =
        fs::read_to_string(format!("/proc/{tid}/status")).map_err(|error| match error.kind() {
            io::ErrorKind::NotFound => {
                io::Error::new(io::ErrorKind::NotFound, format!("there is no thread {tid}"))
            }
            _ => error,
        })?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("Tgid:"))
        .and_then(|tgid| tgid.trim().parse().ok())
        .ok_or_else(|| io::Error::other(format!("/proc/{tid}/status names no Tgid")))
}

/// The name of thread `tid` of process `pid` (its `comm`), if it still
/// exists.
pub(crate) fn thread_name(pid: u32, tid: u32) -> Option<String> {
    fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm"))
        .ok()
        .map(|name| name.trim_end_matches('\n').to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_and_its_threads_are_found() {
        let pid = std::process::id();
        let worker =
            std::thread::spawn(|| std::thread::sleep(std::time::Duration::from_millis(200)));
        let threads = threads_of(pid).unwrap();
        assert!(threads.contains(&pid) && threads.len() >= 2, "{threads:?}");
        for &tid in &threads {
            assert_eq!(process_of(tid).unwrap(), pid);
        }
        assert!(thread_name(pid, pid).is_some());
        worker.join().unwrap();
        let error = threads_of(u32::MAX).unwrap_err().to_string();
        assert!(error.contains("no process"), "{error}");
    }
}
