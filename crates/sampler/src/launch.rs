//! Starting the profiled command suspended, so that its counters can be
//! opened before it runs a single instruction of its own.
//!
//! The child is forked and blocks reading a pipe; the parent opens the events
//! on the child's pid (enabled at exec), then writes one byte. The child
//! `execv`s; a second pipe, closed by a successful exec, carries back the
//! errno of a failed one. If the parent goes away first, the child reads
//! end-of-file and exits without running the command; if the profiler dies
//! while the command runs (killed, or a crash), the kernel kills the command
//! too (`PR_SET_PDEATHSIG`): it never outlives the recording of it.
//!
//! Then the running command: waited for (a pidfd tells of its exit where
//! the kernel has one), stopped after an interrupt if it does not stop by
//! itself, and its CPU time read once it has been reaped.

use std::ffi::CStr;
use std::fmt;
use std::io::{self, PipeReader, PipeWriter, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use crate::command::ResolvedCommand;
use crate::error::SamplerError;

/// Exit status of a child that never got to run the command.
const NOT_RESUMED: i32 = 125;
/// After an interrupt, how long the command gets to exit by itself before
/// it is sent SIGTERM, and then SIGKILL.
const TERMINATE_AFTER: Duration = Duration::from_secs(1);
const KILL_AFTER: Duration = Duration::from_secs(3);

/// How the profiled command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetExit {
    Exited(i32),
    Signaled(i32),
}

impl TargetExit {
    /// The exit status a shell would report: the code, or 128 + signal.
    pub fn code(self) -> u8 {
        match self {
            TargetExit::Exited(code) => code as u8,
            TargetExit::Signaled(signal) => (128 + signal) as u8,
        }
    }
}

impl fmt::Display for TargetExit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TargetExit::Exited(code) => write!(f, "exited with status {code}"),
            TargetExit::Signaled(signal) => {
                write!(f, "killed by signal {signal} ({})", signal_name(*signal))
            }
        }
    }
}

fn signal_name(signal: i32) -> String {
    // SAFETY: strsignal returns a pointer to a static or thread-local string,
    // valid until the next call on this thread; it is copied at once.
    let text = unsafe { libc::strsignal(signal) };
    if text.is_null() {
        return format!("signal {signal}");
    }
    // SAFETY: a non-null result of strsignal is a NUL-terminated string.
    unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned()
}

/// A forked child waiting for the word to exec.
pub(crate) struct SuspendedChild {
    pid: libc::pid_t,
    resume: Option<PipeWriter>,
    exec_errors: PipeReader,
}

/// Forks the child for `command`, suspended before its exec; a failure is
/// the profiler's.
pub(crate) fn fork(command: &ResolvedCommand) -> Result<SuspendedChild, SamplerError> {
    spawn_suspended(command).map_err(|error| SamplerError::System {
        what: "fork",
        error,
    })
}

fn spawn_suspended(command: &ResolvedCommand) -> io::Result<SuspendedChild> {
    let (resume_reader, resume_writer) = io::pipe()?;
    let (errors_reader, errors_writer) = io::pipe()?;
    // SAFETY: getpid has no preconditions and cannot fail.
    let parent = unsafe { libc::getpid() };
    let argv: Vec<*const libc::c_char> = command
        .argv
        .iter()
        .map(|a| a.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect();
    // SAFETY: between fork and exec the child calls only async-signal-safe
    // functions (close, read, prctl, getppid, signal, sigprocmask, execv,
    // write, _exit) on memory prepared before the fork, so it cannot
    // deadlock on a lock held by another thread.
    match unsafe { libc::fork() } {
        -1 => Err(io::Error::last_os_error()),
        0 => unsafe {
            libc::close(resume_writer.as_raw_fd());
            libc::close(errors_reader.as_raw_fd());
            run_child(
                parent,
                resume_reader.as_raw_fd(),
                errors_writer.as_raw_fd(),
                command.path.as_ptr(),
                argv.as_ptr(),
            )
        },
        pid => Ok(SuspendedChild {
            pid,
            resume: Some(resume_writer),
            exec_errors: errors_reader,
        }),
    }
}

/// The child's side. All pipes are close-on-exec, so a successful exec
/// closes the error pipe, which the parent reads as success.
///
/// # Safety
/// Must run in a freshly forked child; `path` and `argv` must be valid.
unsafe fn run_child(
    parent: libc::pid_t,
    resume: libc::c_int,
    errors: libc::c_int,
    path: *const libc::c_char,
    argv: *const *const libc::c_char,
) -> ! {
    unsafe {
        let mut byte = 0u8;
        if libc::read(resume, (&raw mut byte).cast(), 1) != 1 {
            libc::_exit(NOT_RESUMED);
        }
        // Dies with the thread that forked it, which waits for it. A parent
        // gone before the request took effect is seen in getppid.
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::getppid() != parent {
            libc::_exit(NOT_RESUMED);
        }
        // Rust ignores SIGPIPE, and an ignored signal stays ignored across
        // exec: give the command the defaults a shell would.
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        let mut nothing: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut nothing);
        libc::sigprocmask(libc::SIG_SETMASK, &nothing, std::ptr::null_mut());
        libc::execv(path, argv);
        let errno = *libc::__errno_location();
        libc::write(errors, (&raw const errno).cast(), size_of::<libc::c_int>());
        libc::_exit(127);
    }
}

impl SuspendedChild {
    pub(crate) fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// A descriptor that becomes readable when the child exits, where the
    /// kernel has `pidfd_open` (Linux 5.3). The child cannot have been
    /// reaped yet, so its pid is still its own.
    pub(crate) fn exit_fd(&self) -> Option<OwnedFd> {
        // SAFETY: pidfd_open takes a pid and flags and returns a new
        // descriptor or -1; it touches no memory of ours.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, self.pid, 0) };
        // SAFETY: a non-negative result is a descriptor that nothing else
        // owns.
        (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
    }

    /// Lets the child exec `command`, the one it was forked for, and waits
    /// until it has; a failed exec is said with the command's name.
    pub(crate) fn exec(self, command: &ResolvedCommand) -> Result<RunningChild, SamplerError> {
        self.resume().map_err(|error| SamplerError::Exec {
            command: command.display.clone(),
            error,
        })
    }

    /// Lets the child exec, and waits until it has (or has failed to).
    fn resume(mut self) -> io::Result<RunningChild> {
        let pid = self.pid;
        // Some from fork until here or Drop, and each takes `self`.
        #[allow(
            clippy::expect_used,
            reason = "the resume pipe is taken once, by whichever of resume and drop ends the child"
        )]
        let mut resume = self
            .resume
            .take()
            .expect("a suspended child is resumed once");
        resume.write_all(&[1])?;
        drop(resume);
        let mut errno = [0u8; size_of::<libc::c_int>()];
        let read = read_fully(&mut self.exec_errors, &mut errno)?;
        let mut child = RunningChild::new(pid);
        if read == 0 {
            return Ok(child);
        }
        child.reap()?;
        Err(io::Error::from_raw_os_error(libc::c_int::from_ne_bytes(
            errno,
        )))
    }
}

impl Drop for SuspendedChild {
    fn drop(&mut self) {
        if self.resume.take().is_some() {
            // The child reads end-of-file and exits; reap it.
            let _ = RunningChild::new(self.pid).reap();
        }
    }
}

fn read_fully(reader: &mut PipeReader, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// The profiled command, running.
pub(crate) struct RunningChild {
    pid: libc::pid_t,
    exit: Option<TargetExit>,
    /// The last signal sent to stop it after an interrupt.
    stopped_with: Option<libc::c_int>,
}

impl RunningChild {
    fn new(pid: libc::pid_t) -> RunningChild {
        RunningChild {
            pid,
            exit: None,
            stopped_with: None,
        }
    }

    /// The exit status, if the child has ended; does not block.
    pub(crate) fn try_wait(&mut self) -> Result<Option<TargetExit>, SamplerError> {
        self.wait_with(libc::WNOHANG).map_err(wait_failed)
    }

    /// Waits for the child to end.
    pub(crate) fn wait(&mut self) -> Result<TargetExit, SamplerError> {
        self.reap().map_err(wait_failed)
    }

    /// After an interrupt noticed at `since`, stops the command if it has
    /// not exited by itself: SIGTERM once [`TERMINATE_AFTER`] has passed,
    /// SIGKILL once [`KILL_AFTER`] has. Called as the wait goes on; each
    /// signal is sent once.
    pub(crate) fn stop_after_interrupt(&mut self, since: Instant) {
        let waited = since.elapsed();
        let signal = match self.stopped_with {
            None if waited >= TERMINATE_AFTER => libc::SIGTERM,
            Some(libc::SIGTERM) if waited >= KILL_AFTER => libc::SIGKILL,
            _ => return,
        };
        self.signal(signal);
        self.stopped_with = Some(signal);
    }

    fn reap(&mut self) -> io::Result<TargetExit> {
        loop {
            if let Some(exit) = self.wait_with(0)? {
                return Ok(exit);
            }
        }
    }

    /// Sends `signal` to the child, unless it has been reaped already.
    fn signal(&self, signal: libc::c_int) {
        if self.exit.is_none() {
            // SAFETY: kill has no memory-safety preconditions; the pid is our
            // unreaped child, so it cannot have been reused.
            unsafe { libc::kill(self.pid, signal) };
        }
    }

    fn wait_with(&mut self, flags: libc::c_int) -> io::Result<Option<TargetExit>> {
        if let Some(exit) = self.exit {
            return Ok(Some(exit));
        }
        let mut status = 0;
        // SAFETY: `status` is a valid out-pointer for the duration of the call.
        let reaped = unsafe { libc::waitpid(self.pid, &mut status, flags) };
        if reaped == -1 {
            let error = io::Error::last_os_error();
            return if error.kind() == io::ErrorKind::Interrupted {
                Ok(None)
            } else {
                Err(error)
            };
        }
        if reaped == 0 {
            return Ok(None);
        }
        let exit = if libc::WIFSIGNALED(status) {
            TargetExit::Signaled(libc::WTERMSIG(status))
        } else {
            TargetExit::Exited(libc::WEXITSTATUS(status))
        };
        self.exit = Some(exit);
        Ok(Some(exit))
    }
}

fn wait_failed(error: io::Error) -> SamplerError {
    SamplerError::System {
        what: "wait",
        error,
    }
}

/// The user and system CPU time of this process's reaped children so far.
pub(crate) fn children_cpu_time() -> Option<(Duration, Duration)> {
    // SAFETY: rusage is plain data; zeroed is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid out-pointer for the duration of the call.
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) } != 0 {
        return None;
    }
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    Some((time(usage.ru_utime), time(usage.ru_stime)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::resolve_command;

    fn command(args: &[&str]) -> ResolvedCommand {
        resolve_command(&args.iter().map(Into::into).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn a_resumed_child_runs_and_its_status_comes_back() {
        let child = spawn_suspended(&command(&["sh", "-c", "exit 7"])).unwrap();
        assert_eq!(
            child.resume().unwrap().wait().unwrap(),
            TargetExit::Exited(7)
        );
        let child = spawn_suspended(&command(&["sh", "-c", "kill -9 $$"])).unwrap();
        let exit = child.resume().unwrap().wait().unwrap();
        assert_eq!(exit, TargetExit::Signaled(9));
        assert_eq!(exit.code(), 137);
        assert!(
            exit.to_string().starts_with("killed by signal 9 (Killed"),
            "{exit}"
        );
    }

    #[test]
    fn a_failed_exec_returns_its_errno() {
        let dir = std::env::temp_dir().join(format!("launch-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("bad-interpreter");
        // Written by a shell, not by this process: a child that another
        // test forked meanwhile would inherit a writable descriptor to the
        // script and make its exec fail with ETXTBSY.
        let written = std::process::Command::new("sh")
            .arg("-c")
            .arg("printf '#!/no/such/interpreter\\n' > \"$0\" && chmod 755 \"$0\"")
            .arg(&script)
            .status()
            .unwrap();
        assert!(written.success());
        let child = spawn_suspended(&command(&[script.to_str().unwrap()])).unwrap();
        let error = child.resume().err().unwrap();
        assert_eq!(error.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn a_child_never_resumed_exits_without_running() {
        let marker = std::env::temp_dir().join(format!("never-ran-{}", std::process::id()));
        let script = format!("touch {}", marker.display());
        let child = spawn_suspended(&command(&["sh", "-c", &script])).unwrap();
        drop(child);
        assert!(!marker.exists());
    }
}
