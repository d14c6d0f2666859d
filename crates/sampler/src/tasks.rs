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

/// What /proc says of one task: its state letter (`R`, `S`, `Z`, ...), its
/// parent process, and when it started, in clock ticks after boot, which
/// tells a task from a later one that reuses its id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TaskStat {
    pub state: char,
    pub parent: u32,
    pub start_time: u64,
}

impl TaskStat {
    /// Whether the task has ended (a zombie waiting for its parent, or dead).
    pub(crate) fn has_ended(&self) -> bool {
        matches!(self.state, 'Z' | 'X' | 'x')
    }
}

/// The state of thread `tid` of process `pid`, if it still exists.
pub(crate) fn task_stat(pid: u32, tid: u32) -> Option<TaskStat> {
    let text = fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")).ok()?;
    parse_stat(&text)
}

/// Parses `/proc/.../stat`. The name in parentheses may itself hold spaces
/// and parentheses, so the fields are counted from the last `)`.
fn parse_stat(text: &str) -> Option<TaskStat> {
    let (_, rest) = text.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // Fields 3 (state), 4 (ppid) and 22 (starttime) of proc(5), counted
    // from 1.
    Some(TaskStat {
        state: fields.first()?.chars().next()?,
        parent: fields.get(1)?.parse().ok()?,
        start_time: fields.get(19)?.parse().ok()?,
    })
}

/// Whether process `pid` has a thread that has not ended (its first
/// thread may have, while others run on).
pub(crate) fn has_running_thread(pid: u32) -> bool {
    threads_of(pid).is_ok_and(|tids| {
        tids.iter()
            .any(|&tid| task_stat(pid, tid).is_some_and(|s| !s.has_ended()))
    })
}

/// Every process now running, in ascending order.
pub(crate) fn processes() -> io::Result<Vec<u32>> {
    let mut pids: Vec<u32> = fs::read_dir("/proc")?
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
        .collect();
    pids.sort_unstable();
    Ok(pids)
}

/// The command line process `pid` was started with; empty for a kernel
/// thread, `None` once it has gone.
pub(crate) fn command_line(pid: u32) -> Option<Vec<String>> {
    let bytes = fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    Some(
        bytes
            .split(|&b| b == 0)
            .filter(|arg| !arg.is_empty())
            .map(|arg| String::from_utf8_lossy(arg).into_owned())
            .collect(),
    )
}

/// The program process `pid` runs, as the kernel names its file.
pub(crate) fn executable(pid: u32) -> Option<String> {
    fs::read_link(format!("/proc/{pid}/exe"))
        .ok()
        .map(|path| path.to_string_lossy().into_owned())
}

/// The user that owns process `pid` (its real user id).
pub(crate) fn owner(pid: u32) -> Option<u32> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("Uid:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// A thread of this process that waits until it is ended: a second
/// thread, known by its id, for the tests to find.
#[cfg(test)]
pub(crate) struct WaitingThread {
    pub tid: u32,
    stop: std::sync::mpsc::Sender<()>,
    handle: std::thread::JoinHandle<()>,
}

#[cfg(test)]
impl WaitingThread {
    pub(crate) fn start() -> WaitingThread {
        let (tid_sender, tid) = std::sync::mpsc::channel();
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let handle = std::thread::spawn(move || {
            let _ = tid_sender.send(crate::own_process::current_tid() as u32);
            let _ = stopped.recv();
        });
        WaitingThread {
            tid: tid.recv().unwrap(),
            stop,
            handle,
        }
    }

    /// Ends the thread, and waits until it has ended.
    pub(crate) fn end(self) {
        drop(self.stop);
        self.handle.join().unwrap();
    }
}

#[cfg(test)]
#[allow(unsafe_code)]
mod tests {
    use super::*;

    #[test]
    fn this_process_and_its_threads_are_found() {
        let pid = std::process::id();
        let worker = WaitingThread::start();
        let threads = threads_of(pid).unwrap();
        assert!(threads.contains(&pid) && threads.len() >= 2, "{threads:?}");
        for &tid in &threads {
            assert_eq!(process_of(tid).unwrap(), pid);
        }
        assert!(thread_name(pid, pid).is_some());
        worker.end();
        let error = threads_of(u32::MAX).unwrap_err().to_string();
        assert!(error.contains("no process"), "{error}");
    }

    #[test]
    fn this_process_is_described_as_proc_shows_it() {
        let pid = std::process::id();
        let stat = task_stat(pid, pid).unwrap();
        assert!(!stat.has_ended() && stat.start_time > 0, "{stat:?}");
        assert!(processes().unwrap().contains(&pid));
        let args = command_line(pid).unwrap();
        assert!(!args.is_empty());
        let exe = executable(pid).unwrap();
        assert_eq!(
            Some(exe.as_str()),
            std::env::current_exe().unwrap().to_str()
        );
        // SAFETY: getuid has no preconditions.
        assert_eq!(owner(pid), Some(unsafe { libc::getuid() }));
        assert_eq!(task_stat(pid, u32::MAX), None);
    }

    #[test]
    fn stat_lines_with_odd_names_parse() {
        let line = "42 (a) b (c)) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 \
                    12345 1000 100";
        let stat = parse_stat(line).unwrap();
        assert_eq!((stat.state, stat.parent, stat.start_time), ('S', 1, 12345));
        assert!(parse_stat("42 (x) Z 1 2").is_none());
    }
}
