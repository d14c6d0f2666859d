//! The executable mappings of a running process, read from
//! `/proc/PID/maps`: what the kernel would have reported in mapping records
//! had the process been sampled from its start.

use std::fs;
use std::io;

use profiler_model::{Avma, FileOffset, Mmap};

use crate::build_id::BuildIds;

/// One line of `/proc/PID/maps`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct MapsLine {
    start: u64,
    end: u64,
    executable: bool,
    offset: u64,
    /// As the file shows it: a path, a bracketed name (`[vdso]`), or empty
    /// for anonymous memory.
    path: String,
}

/// Parses `START-END PERMS OFFSET DEV INODE [PATH]`. The path is the rest
/// of the line: it may hold spaces.
fn parse_line(line: &str) -> Option<MapsLine> {
    let mut rest = line;
    let mut field = || {
        let trimmed = rest.trim_start();
        let end = trimmed.find(' ').unwrap_or(trimmed.len());
        let (field, tail) = trimmed.split_at(end);
        rest = tail;
        field
    };
    let (start, end) = field().split_once('-')?;
    let perms = field();
    let offset = field();
    let _device = field();
    let _inode = field();
    let path = rest.trim_start().to_owned();
    Some(MapsLine {
        start: u64::from_str_radix(start, 16).ok()?,
        end: u64::from_str_radix(end, 16).ok()?,
        executable: perms.as_bytes().get(2) == Some(&b'x'),
        offset: u64::from_str_radix(offset, 16).ok()?,
        path,
    })
}

/// The mapping record for one executable line, named as the kernel names
/// the same mapping in its own records (without its build-id); `None` for
/// `[vsyscall]`, which lies in kernel addresses and is never reported.
fn mapping(pid: u32, line: MapsLine) -> Option<Mmap> {
    let path = match line.path.as_str() {
        "[vsyscall]" => return None,
        "" => "//anon".to_owned(),
        _ => line.path,
    };
    Some(Mmap {
        // Before anything the recording saw.
        time: 0,
        pid,
        tid: pid,
        start: Avma(line.start),
        len: line.end.saturating_sub(line.start),
        offset: FileOffset(line.offset),
        path,
        build_id: None,
    })
}

/// Every executable mapping of process `pid` as it stands now, as mapping
/// records timed before the recording began, with the build-ids of the
/// files that have one.
pub(crate) fn executable_mappings(pid: u32, build_ids: &mut BuildIds) -> io::Result<Vec<Mmap>> {
    let text = fs::read_to_string(format!("/proc/{pid}/maps"))?;
    Ok(text
        .lines()
        .filter_map(parse_line)
        .filter(|line| line.executable)
        .filter_map(|line| mapping(pid, line))
        .map(|mapping| Mmap {
            build_id: build_ids.of(pid, &mapping.path),
            ..mapping
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_parse_with_paths_that_hold_spaces() {
        let line = "7f3c1a2b0000-7f3c1a2d5000 r-xp 00028000 08:01 1234   /usr/lib/x86 64/libc.so.6";
        assert_eq!(
            parse_line(line),
            Some(MapsLine {
                start: 0x7f3c1a2b0000,
                end: 0x7f3c1a2d5000,
                executable: true,
                offset: 0x28000,
                path: "/usr/lib/x86 64/libc.so.6".into(),
            })
        );
        let anon = parse_line("7f0000000000-7f0000001000 rwxp 00000000 00:00 0 ").unwrap();
        assert_eq!(anon.path, "");
        assert_eq!(mapping(7, anon).unwrap().path, "//anon");
        let data = parse_line("55d0c0000000-55d0c0001000 rw-p 00002000 08:01 99 /bin/app").unwrap();
        assert!(!data.executable);
        let vsyscall =
            parse_line("ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0  [vsyscall]");
        assert_eq!(mapping(7, vsyscall.unwrap()), None);
        assert_eq!(parse_line("garbage"), None);
    }

    #[test]
    fn this_process_maps_its_own_executable() {
        let pid = std::process::id();
        let maps = executable_mappings(pid, &mut BuildIds::default()).unwrap();
        let exe = fs::canonicalize(std::env::current_exe().unwrap()).unwrap();
        let own = maps
            .iter()
            .find(|m| m.path == exe.to_str().unwrap())
            .unwrap_or_else(|| panic!("{exe:?} not among {maps:#?}"));
        assert!(own.len > 0 && own.pid == pid && own.time == 0);
        // This very function's code lies in one of them.
        let here = this_process_maps_its_own_executable as *const () as u64;
        assert!(
            maps.iter()
                .any(|m| (m.start.0..m.start.0 + m.len).contains(&here)),
            "{here:#x} in none of {maps:#?}"
        );
        let error = executable_mappings(u32::MAX, &mut BuildIds::default()).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::NotFound);
    }
}
