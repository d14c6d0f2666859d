//! Names for JIT-compiled code from `/tmp/perf-PID.map`, which JITs (V8,
//! the JVM with perf-map-agent, LuaJIT, ...) write as `START SIZE NAME`
//! lines, hexadecimal addresses in the process.
//!
//! Anyone can write a file in /tmp, so a map is believed only from the
//! process's own user or root (as perf believes only the reader's own maps
//! or root's). It is read as a stream, no further than its first 256 MiB,
//! lines of up to 4 KiB, and only the entries that hold a sampled address
//! are kept: a map of gigabytes costs what the samples need of it.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use profiler_model::{Avma, open_regular_with_owner};

/// How much of a map is read.
const MAX_MAP_BYTES: u64 = 256 << 20;
/// A longer line names nothing.
const MAX_LINE: usize = 4 << 10;
/// How many entries are kept: a sampled address may have been reused for
/// new code many times over, and only the last entries for it matter.
const MAX_KEPT: usize = 1 << 20;

/// The map's entries that hold sampled addresses, `start..end` and name,
/// sorted by start.
pub(crate) struct PerfMap {
    entries: Vec<(Avma, Avma, String)>,
}

/// The map of a process, and what the report should say about it.
pub(crate) struct Loaded {
    pub map: Option<PerfMap>,
    /// Why the map was not believed, or what of it was not read.
    pub note: Option<String>,
}

impl PerfMap {
    /// The map of process `pid`, if it wrote one that `believed` (given
    /// the file's owner) accepts, with the entries that hold any of the
    /// sorted `addresses`.
    pub(crate) fn load(pid: u32, addresses: &[Avma], believed: impl Fn(u32) -> bool) -> Loaded {
        let path = format!("/tmp/perf-{pid}.map");
        let (file, owner) = match open_regular_with_owner(Path::new(&path)) {
            Ok(opened) => opened,
            Err(_) => {
                return Loaded {
                    map: None,
                    note: None,
                };
            }
        };
        if !believed(owner) {
            return Loaded {
                map: None,
                note: Some(format!(
                    "{path} belongs to user {owner}, neither the process's user nor root: its \
                     names of JIT code are not used"
                )),
            };
        }
        let (map, cut) = PerfMap::read(BufReader::with_capacity(64 << 10, file), addresses);
        Loaded {
            map: Some(map),
            note: cut.map(|cut| format!("{path}: {cut}")),
        }
    }

    /// The entries of the map `reader` gives that hold any of `addresses`,
    /// and what was left unread.
    fn read(mut reader: impl BufRead, addresses: &[Avma]) -> (PerfMap, Option<String>) {
        let mut entries = Vec::new();
        let (mut scanned, mut long) = (0u64, 0u64);
        let mut line = Vec::new();
        let cut = loop {
            line.clear();
            let mut limited = (&mut reader).take(MAX_MAP_BYTES - scanned);
            let Ok(kept) = (&mut limited)
                .take(MAX_LINE as u64)
                .read_until(b'\n', &mut line)
            else {
                break None;
            };
            let rest = match kept == MAX_LINE && line.last() != Some(&b'\n') {
                true => limited.skip_until(b'\n').unwrap_or(0),
                false => 0,
            };
            scanned += (kept + rest) as u64;
            if kept == 0 {
                break (scanned >= MAX_MAP_BYTES)
                    .then(|| format!("only its first {} MiB were read", MAX_MAP_BYTES >> 20));
            }
            if rest > 1 {
                long += 1;
                continue;
            }
            let Some((start, end, name)) = parse(&line) else {
                continue;
            };
            // Only entries holding a sampled address name anything.
            let first = addresses.partition_point(|&a| a < start);
            if addresses.get(first).is_some_and(|&a| a < end) {
                if entries.len() == MAX_KEPT {
                    break Some(format!(
                        "only its first {MAX_KEPT} entries holding sampled code were read"
                    ));
                }
                entries.push((start, end, name));
            }
        };
        // The last entry of a start wins: JITs reuse freed code's addresses.
        entries.sort_by_key(|e| e.0);
        let long = match long {
            0 => None,
            1 => Some("a line longer than 4 KiB was passed over".to_owned()),
            n => Some(format!("{n} lines longer than 4 KiB were passed over")),
        };
        let note = match (cut, long) {
            (Some(cut), Some(long)) => Some(format!("{cut}; {long}")),
            (cut, long) => cut.or(long),
        };
        (PerfMap { entries }, note)
    }

    /// The JIT'd function containing `address`: its start and name.
    pub(crate) fn function(&self, address: Avma) -> Option<(Avma, &str)> {
        let after = self.entries.partition_point(|e| e.0 <= address);
        let (start, end, name) = self.entries.get(after.checked_sub(1)?)?;
        (address < *end).then_some((*start, name.as_str()))
    }
}

/// A `START SIZE NAME` line: `start..start+size` and the name.
fn parse(line: &[u8]) -> Option<(Avma, Avma, String)> {
    let line = String::from_utf8_lossy(line);
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok();
    let mut parts = line.splitn(3, ' ');
    let start = hex(parts.next()?)?;
    let size = hex(parts.next()?)?;
    let name = parts.next()?.trim();
    Some((
        Avma(start),
        Avma(start.saturating_add(size)),
        name.to_owned(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &[u8], addresses: &[u64]) -> (PerfMap, Option<String>) {
        let addresses: Vec<Avma> = addresses.iter().copied().map(Avma).collect();
        PerfMap::read(text, &addresses)
    }

    #[test]
    fn entries_cover_start_to_start_plus_size() {
        let (map, note) = read(
            b"7f0010 20 LazyCompile:*hot app.js:3\n7f0100 10 Builtin:Add\nbad line\n",
            &[0x7f0010, 0x7f002f, 0x7f0030, 0x7f0105],
        );
        assert_eq!(note, None);
        let hot = Some((Avma(0x7f0010), "LazyCompile:*hot app.js:3"));
        assert_eq!(map.function(Avma(0x7f0010)), hot);
        assert_eq!(map.function(Avma(0x7f002f)), hot);
        assert_eq!(map.function(Avma(0x7f0030)), None);
        let add = Some((Avma(0x7f0100), "Builtin:Add"));
        assert_eq!(map.function(Avma(0x7f0105)), add);
    }

    #[test]
    fn only_entries_of_sampled_code_are_kept_and_the_last_for_a_start_wins() {
        let mut text = Vec::new();
        for i in 0..10_000u64 {
            text.extend(format!("{:x} 10 f{i}\n", 0x1000 + 0x10 * i).bytes());
        }
        text.extend(b"2000 10 reused\n");
        // A line of 8 KiB, and a line without its end.
        text.extend(std::iter::repeat_n(b'7', 8 << 10));
        text.extend(b"\n3000 8 last");
        let (map, note) = read(&text, &[0x1005, 0x2000, 0x3004]);
        // f0, f256 and f512 hold sampled addresses too.
        assert_eq!(map.entries.len(), 5);
        assert_eq!(map.function(Avma(0x1005)), Some((Avma(0x1000), "f0")));
        assert_eq!(map.function(Avma(0x2000)), Some((Avma(0x2000), "reused")));
        assert_eq!(map.function(Avma(0x3004)), Some((Avma(0x3000), "last")));
        assert_eq!(
            note.as_deref(),
            Some("a line longer than 4 KiB was passed over")
        );
    }

    #[test]
    fn a_map_of_one_endless_line_is_read_no_further_than_256_mib() {
        let zeros = std::io::repeat(0).take(1 << 30);
        let (map, note) = PerfMap::read(BufReader::new(zeros), &[Avma(0)]);
        assert!(map.entries.is_empty());
        let note = note.unwrap();
        assert!(
            note.starts_with("only its first 256 MiB were read"),
            "{note}"
        );
    }
}
