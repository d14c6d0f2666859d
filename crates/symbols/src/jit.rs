//! Names for JIT-compiled code from `/tmp/perf-PID.map`, which JITs (V8,
//! the JVM with perf-map-agent, LuaJIT, ...) write as `START SIZE NAME`
//! lines, hexadecimal addresses in the process.

use std::path::Path;

use profiler_model::{Avma, read_regular};

/// The map's entries, `start..end` and name, sorted by start.
pub(crate) struct PerfMap {
    entries: Vec<(Avma, Avma, String)>,
}

impl PerfMap {
    /// The map of process `pid`, if it wrote one.
    pub fn load(pid: u32) -> Option<PerfMap> {
        let path = format!("/tmp/perf-{pid}.map");
        let bytes = read_regular(Path::new(&path)).ok()?;
        Some(PerfMap::parse(&String::from_utf8_lossy(&bytes)))
    }

    fn parse(text: &str) -> PerfMap {
        let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok();
        let mut entries: Vec<(Avma, Avma, String)> = text
            .lines()
            .filter_map(|line| {
                let mut parts = line.splitn(3, ' ');
                let start = hex(parts.next()?)?;
                let size = hex(parts.next()?)?;
                Some((
                    Avma(start),
                    Avma(start.saturating_add(size)),
                    parts.next()?.trim().to_owned(),
                ))
            })
            .collect();
        entries.sort_by_key(|e| e.0);
        PerfMap { entries }
    }

    /// The JIT'd function containing `address`: its start and name.
    pub fn function(&self, address: Avma) -> Option<(Avma, &str)> {
        let after = self.entries.partition_point(|e| e.0 <= address);
        let (start, end, name) = self.entries.get(after.checked_sub(1)?)?;
        (address < *end).then_some((*start, name.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_cover_start_to_start_plus_size() {
        let map = PerfMap::parse(
            "7f0010 20 LazyCompile:*hot app.js:3\n7f0100 10 Builtin:Add\nbad line\n",
        );
        let hot = Some((Avma(0x7f0010), "LazyCompile:*hot app.js:3"));
        assert_eq!(map.function(Avma(0x7f0010)), hot);
        assert_eq!(map.function(Avma(0x7f002f)), hot);
        assert_eq!(map.function(Avma(0x7f0030)), None);
        let add = Some((Avma(0x7f0100), "Builtin:Add"));
        assert_eq!(map.function(Avma(0x7f0105)), add);
    }
}
