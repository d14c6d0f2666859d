//! The temporary files recordings leave beside their final name,
//! `.NAME.RANDOM.tmp`, seen from outside: those of runs still writing,
//! and those of runs that were killed.
//!
//! They are only looked at, never opened: in a directory others can write,
//! a file of that name may be anyone's, a FIFO that would hang an `open`,
//! or a link into someone else's file. A name counts only if it is a
//! regular file of this user's (by `statx` without following links) that
//! holds something; whether a run still writes it is read from the locks
//! the kernel lists in /proc/locks, which such a run holds on its file.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;

use rustix::fs::{FileType, Mode, OFlags, Statx};

use crate::output_dir::OutputDir;

/// The temporary files of recordings into one name.
#[derive(Debug, Default)]
pub(crate) struct Leftovers {
    /// Those of runs that were killed, by name, sorted.
    pub(crate) killed: Vec<OsString>,
    /// Those of runs still writing.
    pub(crate) live: Vec<LiveWriter>,
}

/// A temporary file that a running `record` holds locked.
#[derive(Debug)]
pub(crate) struct LiveWriter {
    pub(crate) name: OsString,
    /// The process holding the lock, as the kernel lists it.
    pub(crate) pid: u32,
    /// When the file was made (nanoseconds since the epoch), if the file
    /// system tells.
    pub(crate) born: Option<i128>,
}

/// The temporary files beside `name` in `dir`, but for `ours`.
pub(crate) fn scan(dir: &OutputDir, name: &OsStr, ours: Option<&OsStr>) -> Leftovers {
    let mut found = Leftovers::default();
    // Without the kernel's list of locks, a live run cannot be told from a
    // killed one: neither is named.
    let Some(locks) = locks() else {
        return found;
    };
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let Ok(listing) = rustix::fs::openat(dir.fd(), ".", flags, Mode::empty()) else {
        return found;
    };
    let Ok(entries) = rustix::fs::Dir::new(listing) else {
        return found;
    };
    let euid = rustix::process::geteuid().as_raw();
    for entry in entries.filter_map(Result::ok) {
        let entry_name = OsStr::from_bytes(entry.file_name().to_bytes());
        if !is_temporary_of(entry_name, name) || Some(entry_name) == ours {
            continue;
        }
        let Ok(Some(stat)) = dir.stat(entry_name) else {
            continue;
        };
        let regular = FileType::from_raw_mode(stat.stx_mode.into()) == FileType::RegularFile;
        if !regular || stat.stx_uid != euid {
            continue;
        }
        match locks.get(&(stat.stx_dev_major, stat.stx_dev_minor, stat.stx_ino)) {
            Some(&pid) => found.live.push(LiveWriter {
                name: entry_name.to_owned(),
                pid,
                born: born(&stat),
            }),
            // Killed before it wrote a byte: nothing to read in it.
            None if stat.stx_size == 0 => {}
            None => found.killed.push(entry_name.to_owned()),
        }
    }
    found.killed.sort();
    found
}

/// When the file `stat` describes was made, if the file system tells.
pub(crate) fn born(stat: &Statx) -> Option<i128> {
    let told = stat.stx_mask & rustix::fs::StatxFlags::BTIME.bits() != 0;
    told.then(|| {
        i128::from(stat.stx_btime.tv_sec) * 1_000_000_000 + i128::from(stat.stx_btime.tv_nsec)
    })
}

/// Whether `candidate` is `.NAME.RANDOM.tmp` for `name`, RANDOM being
/// letters and digits (the names this profiler gives; nothing else, so that
/// a name with control characters in it is never printed).
fn is_temporary_of(candidate: &OsStr, name: &OsStr) -> bool {
    let bytes = candidate.as_bytes();
    let Some(rest) = bytes.strip_prefix(b".") else {
        return false;
    };
    let Some(rest) = rest.strip_prefix(name.as_bytes()) else {
        return false;
    };
    let Some(random) = rest
        .strip_prefix(b".")
        .and_then(|r| r.strip_suffix(b".tmp"))
    else {
        return false;
    };
    !random.is_empty() && random.iter().all(u8::is_ascii_alphanumeric)
}

/// The files locked now, by device (major, minor) and inode, with the
/// process holding the lock; `None` if /proc/locks cannot be read.
fn locks() -> Option<HashMap<(u32, u32, u64), u32>> {
    let text = std::fs::read_to_string("/proc/locks").ok()?;
    Some(text.lines().filter_map(parse_lock).collect())
}

/// `1: FLOCK  ADVISORY  WRITE 5925 fe:00:5361411 0 EOF`; a line starting
/// `1: ->` is a waiter, not a holder.
fn parse_lock(line: &str) -> Option<((u32, u32, u64), u32)> {
    let mut fields = line.split_whitespace().skip(1);
    let kind = fields.next()?;
    if kind == "->" {
        return None;
    }
    let pid = fields.nth(2)?.parse().ok()?;
    let mut file = fields.next()?.split(':');
    let major = u32::from_str_radix(file.next()?, 16).ok()?;
    let minor = u32::from_str_radix(file.next()?, 16).ok()?;
    let inode = file.next()?.parse().ok()?;
    Some(((major, minor, inode), pid))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_this_profiler_gives_are_temporaries() {
        let name = OsStr::new("out.data");
        for yes in [".out.data.k3j9x0a1bc.tmp", ".out.data.1.tmp"] {
            assert!(is_temporary_of(OsStr::new(yes), name), "{yes}");
        }
        for no in [
            "out.data",
            ".out.data..tmp",
            ".out.data.x\x1b[31m.tmp",
            ".out.data.x y.tmp",
            ".out.datax.abc.tmp",
            ".out.data.abc.tmpx",
        ] {
            assert!(!is_temporary_of(OsStr::new(no), name), "{no:?}");
        }
    }

    #[test]
    fn lock_lines_give_the_file_and_its_holder() {
        assert_eq!(
            parse_lock("1: FLOCK  ADVISORY  WRITE 5925 fe:00:5361411 0 EOF"),
            Some(((0xfe, 0, 5361411), 5925))
        );
        assert_eq!(
            parse_lock("2: POSIX  ADVISORY  READ 77 08:1a:12 0 EOF"),
            Some(((8, 0x1a, 12), 77))
        );
        assert_eq!(
            parse_lock("1: -> FLOCK  ADVISORY  WRITE 5926 fe:00:5361411 0 EOF"),
            None
        );
    }

    #[test]
    fn a_lock_this_process_holds_is_listed() {
        let path = std::env::temp_dir().join(format!("leftovers-lock-{}", std::process::id()));
        let file = std::fs::File::create(&path).unwrap();
        file.try_lock().unwrap();
        let stat = rustix::fs::statx(
            rustix::fs::CWD,
            &path,
            rustix::fs::AtFlags::empty(),
            rustix::fs::StatxFlags::BASIC_STATS,
        )
        .unwrap();
        let key = (stat.stx_dev_major, stat.stx_dev_minor, stat.stx_ino);
        assert_eq!(locks().unwrap().get(&key), Some(&std::process::id()));
        drop(file);
        std::fs::remove_file(path).unwrap();
    }
}
