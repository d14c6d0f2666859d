//! The calling process as /proc describes it: its threads, and where its
//! program's text is mapped.

use std::fs;
use std::path::Path;
use std::sync::{Mutex, PoisonError};

use crate::error::SamplerError;

/// The id of the calling thread.
pub(crate) fn current_tid() -> libc::pid_t {
    // SAFETY: gettid takes no arguments, touches no memory and cannot fail.
    unsafe { libc::gettid() }
}

/// The library's own threads (the profiles' drain thread): counted by no
/// profile or set of counters.
static LIBRARY_THREADS: Mutex<Vec<libc::pid_t>> = Mutex::new(Vec::new());

/// Marks the calling thread as one of the library's, until it ends.
pub(crate) fn mark_library_thread() {
    let me = current_tid();
    let mut threads = LIBRARY_THREADS
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    // A tid of this process reused after an earlier thread of ours ended.
    threads.retain(|&tid| tid != me && Path::new(&format!("/proc/self/task/{tid}")).exists());
    threads.push(me);
}

/// Every thread of the calling process now but the library's own and
/// `except`. Reading
/// /proc/self/task while other threads exit can skip live entries (the
/// kernel resumes the listing by position), so the listing is taken again
/// until two agree.
pub(crate) fn threads_except(except: libc::pid_t) -> Result<Vec<libc::pid_t>, SamplerError> {
    let mut previous = list_threads(except)?;
    for _ in 0..8 {
        let now = list_threads(except)?;
        if now == previous {
            break;
        }
        previous = now;
    }
    Ok(previous)
}

fn list_threads(except: libc::pid_t) -> Result<Vec<libc::pid_t>, SamplerError> {
    let library = LIBRARY_THREADS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let listing = |error| SamplerError::System {
        what: "listing the threads of this process (/proc/self/task)",
        error,
    };
    let mut tids = Vec::new();
    for entry in fs::read_dir("/proc/self/task").map_err(listing)? {
        let name = entry.map_err(listing)?.file_name();
        // Every entry is a tid; anything else is no thread to follow.
        if let Some(tid) = name.to_str().and_then(|n| n.parse::<libc::pid_t>().ok())
            && tid != except
            && !library.contains(&tid)
        {
            tids.push(tid);
        }
    }
    tids.sort_unstable();
    Ok(tids)
}

/// The addresses `[start, end)` of the running program's text: from the
/// lowest start to the highest end of its executable mappings.
pub(crate) fn own_text() -> Result<(u64, u64), SamplerError> {
    let exe = fs::read_link("/proc/self/exe").map_err(|error| SamplerError::System {
        what: "reading /proc/self/exe",
        error,
    })?;
    let exe = exe.to_string_lossy();
    let maps = fs::read_to_string("/proc/self/maps").map_err(|error| SamplerError::System {
        what: "reading /proc/self/maps",
        error,
    })?;
    executable_bounds(&maps, &exe).ok_or_else(|| SamplerError::OwnTextNotFound {
        exe: exe.into_owned(),
    })
}

/// The bounds of `path`'s executable mappings in a /proc/PID/maps listing.
fn executable_bounds(maps: &str, path: &str) -> Option<(u64, u64)> {
    maps.lines()
        .filter_map(parse_mapping)
        .filter(|m| m.executable && m.path == path)
        .map(|m| (m.start, m.end))
        .reduce(|(start, end), (s, e)| (start.min(s), end.max(e)))
}

struct Mapping<'a> {
    start: u64,
    end: u64,
    executable: bool,
    path: &'a str,
}

/// `start-end perms offset dev inode   path`; the path may hold spaces.
fn parse_mapping(line: &str) -> Option<Mapping<'_>> {
    let (range, rest) = line.split_once(' ')?;
    let (start, end) = range.split_once('-')?;
    let mut fields = rest.splitn(5, ' ');
    let perms = fields.next()?;
    let path = fields.nth(3).map_or("", str::trim_start);
    Some(Mapping {
        start: u64::from_str_radix(start, 16).ok()?,
        end: u64::from_str_radix(end, 16).ok()?,
        executable: perms.contains('x'),
        path,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPS: &str = "\
5581a2c00000-5581a2c05000 r--p 00000000 08:01 1234                       /usr/bin/my prog
5581a2c05000-5581a2c20000 r-xp 00005000 08:01 1234                       /usr/bin/my prog
5581a2c20000-5581a2c28000 r--p 00020000 08:01 1234                       /usr/bin/my prog
5581a2c30000-5581a2c31000 r-xp 00030000 08:01 1234                       /usr/bin/my prog
7f0000000000-7f0000020000 r-xp 00002000 08:01 99                         /usr/lib/libc.so.6
7f0000100000-7f0000101000 rw-p 00000000 00:00 0 
7ffd00000000-7ffd00001000 r-xp 00000000 00:00 0                          [vdso]
";

    #[test]
    fn the_text_spans_every_executable_mapping_of_the_program() {
        assert_eq!(
            executable_bounds(MAPS, "/usr/bin/my prog"),
            Some((0x5581_a2c0_5000, 0x5581_a2c3_1000))
        );
        assert_eq!(
            executable_bounds(MAPS, "/usr/lib/libc.so.6"),
            Some((0x7f00_0000_0000, 0x7f00_0002_0000))
        );
        assert_eq!(executable_bounds(MAPS, "/usr/bin/other"), None);
        assert_eq!(executable_bounds("", "/usr/bin/my prog"), None);
    }

    #[test]
    fn this_process_has_threads_and_text() {
        let me = current_tid();
        assert!(threads_except(0).unwrap().contains(&me));
        assert!(!threads_except(me).unwrap().contains(&me));
        let (start, end) = own_text().unwrap();
        let here = this_process_has_threads_and_text as fn() as usize as u64;
        assert!(start <= here && here < end, "{start:#x} {here:#x} {end:#x}");
    }
}
