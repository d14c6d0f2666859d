//! Finding the program to run, the way a shell would, before anything is
//! started: a missing or non-executable command is reported without a fork.

use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::error::SamplerError;

/// A command ready for `execv`.
#[derive(Clone, Debug)]
pub(crate) struct ResolvedCommand {
    pub path: CString,
    pub argv: Vec<CString>,
    /// The command as the user wrote it, for messages.
    pub display: String,
}

impl ResolvedCommand {
    /// The executable's canonical path (symbolic links resolved), as the
    /// kernel will report it in the program's mapping.
    pub(crate) fn canonical_path(&self) -> Option<String> {
        let path = Path::new(OsStr::from_bytes(self.path.to_bytes()));
        std::fs::canonicalize(path)
            .ok()
            .map(|p| p.to_string_lossy().into_owned())
    }
}

impl ResolvedCommand {
    /// Why the kernel will not sample the command, if it takes on another
    /// user's or group's identity when it starts (a set-user-ID or
    /// set-group-ID program): at such an exec the kernel detaches the
    /// counters that follow the process (`begin_new_exec` calls
    /// `perf_event_exit_task` once the process is no longer dumpable), so
    /// the recording would hold no sample of it.
    pub(crate) fn identity_change(&self) -> Option<String> {
        use std::os::unix::fs::MetadataExt;
        let path = Path::new(OsStr::from_bytes(self.path.to_bytes()));
        let metadata = std::fs::metadata(path).ok()?;
        let (setuid, setgid) = (
            metadata.mode() & libc::S_ISUID != 0,
            metadata.mode() & libc::S_ISGID != 0,
        );
        if !(setuid || setgid) || honours_no_identity_change(path) {
            return None;
        }
        // SAFETY: these four have no preconditions and cannot fail.
        let (uid, euid, gid, egid) = unsafe {
            (
                libc::getuid(),
                libc::geteuid(),
                libc::getgid(),
                libc::getegid(),
            )
        };
        let new_euid = if setuid { metadata.uid() } else { euid };
        let new_egid = if setgid { metadata.gid() } else { egid };
        // fs.suid_dumpable = 1 keeps such a process dumpable, and sampled.
        let dumpable = std::fs::read_to_string("/proc/sys/fs/suid_dumpable")
            .is_ok_and(|value| value.trim() == "1");
        if (new_euid == uid && new_egid == gid) || dumpable {
            return None;
        }
        let (bit, to) = match setuid && new_euid != uid {
            true => ("set-user-ID", format!("uid {}", metadata.uid())),
            false => ("set-group-ID", format!("gid {}", metadata.gid())),
        };
        Some(format!(
            "{} is {bit} (to {to}): the kernel stops sampling a process that takes on another \
             identity when it starts, so it will have no samples; record it as that user, or a \
             copy without the {bit} bit",
            self.display
        ))
    }
}

/// Whether exec ignores the set-user-ID and set-group-ID bits of `path`:
/// it lies on a file system mounted `nosuid`.
fn honours_no_identity_change(path: &Path) -> bool {
    let Ok(c_path) = CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: statvfs is plain data; zeroed is a valid value.
    let mut stats: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c_path` is a NUL-terminated string and `stats` a valid
    // out-pointer, both alive for the call.
    let read = unsafe { libc::statvfs(c_path.as_ptr(), &mut stats) };
    read == 0 && stats.f_flag & libc::ST_NOSUID != 0
}

pub(crate) fn resolve_command(args: &[OsString]) -> Result<ResolvedCommand, SamplerError> {
    let program = args.first().ok_or_else(|| SamplerError::CommandNotFound {
        command: String::new(),
    })?;
    let display = program.to_string_lossy().into_owned();
    let path = find_program(program, &display)?;
    let to_c = |s: &OsStr| {
        CString::new(s.as_bytes()).map_err(|_| SamplerError::NotExecutable {
            command: display.clone(),
            reason: "an argument contains a NUL byte".into(),
        })
    };
    Ok(ResolvedCommand {
        path: to_c(path.as_os_str())?,
        argv: args.iter().map(|a| to_c(a)).collect::<Result<_, _>>()?,
        display,
    })
}

fn find_program(program: &OsStr, display: &str) -> Result<PathBuf, SamplerError> {
    if program.is_empty() {
        return Err(SamplerError::CommandNotFound {
            command: display.to_owned(),
        });
    }
    if program.as_bytes().contains(&b'/') {
        let path = PathBuf::from(program);
        return match check_executable(&path) {
            Check::Runnable => Ok(path),
            Check::Missing => Err(SamplerError::CommandNotFound {
                command: display.to_owned(),
            }),
            Check::NotRunnable(reason) => Err(SamplerError::NotExecutable {
                command: display.to_owned(),
                reason,
            }),
        };
    }
    let search_path =
        std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    let mut refusal = None;
    for dir in std::env::split_paths(&search_path) {
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        let candidate = dir.join(program);
        match check_executable(&candidate) {
            Check::Runnable => return Ok(candidate),
            Check::Missing => {}
            Check::NotRunnable(reason) => {
                refusal.get_or_insert((candidate, reason));
            }
        }
    }
    match refusal {
        Some((path, reason)) => Err(SamplerError::NotExecutable {
            command: display.to_owned(),
            reason: format!("{} {reason}", path.display()),
        }),
        None => Err(SamplerError::CommandNotFound {
            command: display.to_owned(),
        }),
    }
}

enum Check {
    Runnable,
    Missing,
    NotRunnable(String),
}

fn check_executable(path: &Path) -> Check {
    let Ok(metadata) = std::fs::metadata(path) else {
        return Check::Missing;
    };
    if metadata.is_dir() {
        return Check::NotRunnable("is a directory".into());
    }
    let Ok(c_path) = CString::new(path.as_os_str().as_bytes()) else {
        return Check::Missing;
    };
    // SAFETY: `c_path` is a valid NUL-terminated string that outlives the call.
    let allowed = unsafe { libc::access(c_path.as_ptr(), libc::X_OK) } == 0;
    if allowed && metadata.is_file() {
        Check::Runnable
    } else {
        Check::NotRunnable(
            "is not executable (permission denied); is it a program? chmod +x it".into(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(args: &[&str]) -> Result<ResolvedCommand, SamplerError> {
        resolve_command(&args.iter().map(OsString::from).collect::<Vec<_>>())
    }

    #[test]
    fn programs_are_found_in_path_or_by_their_path() {
        let sh = resolve(&["sh", "-c", "true"]).unwrap();
        assert!(sh.path.to_bytes().ends_with(b"/sh"));
        assert_eq!(sh.argv.len(), 3);
        assert_eq!(resolve(&["/bin/sh"]).unwrap().path.to_bytes(), b"/bin/sh");
    }

    #[test]
    fn missing_and_non_executable_commands_are_told_apart() {
        let error = resolve(&["no-such-command-anywhere"]).unwrap_err();
        assert!(error.is_command_not_found(), "{error}");
        let error = resolve(&["./no/such/file"]).unwrap_err();
        assert!(error.is_command_not_found(), "{error}");
        let text_file = std::env::temp_dir().join(format!("not-a-program-{}", std::process::id()));
        std::fs::write(&text_file, "plain text\n").unwrap();
        std::fs::set_permissions(
            &text_file,
            std::os::unix::fs::PermissionsExt::from_mode(0o644),
        )
        .unwrap();
        let error = resolve(&[text_file.to_str().unwrap()]).unwrap_err();
        assert!(error.is_command_not_runnable(), "{error}");
        assert!(error.to_string().contains("not executable"), "{error}");
        let error = resolve(&["/tmp"]).unwrap_err();
        assert!(error.to_string().contains("is a directory"), "{error}");
    }
}
