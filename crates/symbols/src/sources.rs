//! The source files debug info names, read for annotated listings: where the
//! build's sources have moved, at their new place (`--source-dir OLD=NEW`).
//!
//! Only the lines a listing shows are kept, and a file is read no further
//! than its last such line, nor past its first 256 MiB, a line no longer
//! than 4 KiB: a source file of gigabytes, or of one endless line, costs
//! what the listing shows.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use profiler_model::{SourceReader, SourceText, open_regular, printable_line};

/// How far into a source file a listing reads.
const MAX_SCAN: u64 = 256 << 20;
/// How much of one line it keeps.
const MAX_LINE: usize = 4 << 10;

/// Reads source files, remapping the directories that moved, and keeps
/// what was read of them (or why they could not be read).
#[derive(Debug, Default)]
pub struct SourceFiles {
    /// `(OLD, NEW)`, normalised: a file under OLD is looked for under NEW
    /// first.
    remaps: Vec<(PathBuf, PathBuf)>,
    files: Mutex<HashMap<String, Reading>>,
}

/// What reading a file gave, and whether reading more of it would give
/// more (it stopped at the last line wanted, not at its end).
type Reading = Result<(Arc<SourceText>, bool), String>;

impl SourceFiles {
    /// Files under the first of `remaps`' OLD directories that holds them
    /// (whole path components, `.` and `..` resolved first) are read from
    /// its NEW directory instead, when the file is there.
    pub fn new(remaps: Vec<(PathBuf, PathBuf)>) -> SourceFiles {
        SourceFiles {
            remaps: (remaps.into_iter())
                .map(|(old, new)| (normalised(&old), new))
                .collect(),
            files: Mutex::default(),
        }
    }

    /// Where `file` moved to, by the first remap that covers it: always
    /// inside that remap's NEW.
    fn remapped(&self, file: &Path) -> Option<PathBuf> {
        let file = normalised(file);
        self.remaps.iter().find_map(|(old, new)| {
            let rest = file.strip_prefix(old).ok()?;
            if rest.components().any(|c| c == Component::ParentDir) {
                return None;
            }
            Some(match rest.as_os_str().is_empty() {
                true => new.clone(),
                false => new.join(rest),
            })
        })
    }

    fn read(&self, file: &str, wanted: &BTreeSet<u32>) -> Reading {
        let original = Path::new(file);
        let moved = self.remapped(original).filter(|path| path.exists());
        let path = moved.as_deref().unwrap_or(original);
        read_lines(path, wanted)
            .map(|(text, more)| (Arc::new(text), more))
            .map_err(|error| {
                let directory = original
                    .parent()
                    .filter(|d| !d.as_os_str().is_empty())
                    .map_or("OLD".into(), |d| d.display().to_string());
                format!(
                    "cannot read source file {}: {error}; if the sources moved, give \
                     --source-dir {directory}=NEW",
                    path.display()
                )
            })
    }
}

impl SourceReader for SourceFiles {
    fn lines(&self, file: &str, wanted: &BTreeSet<u32>) -> Result<Arc<SourceText>, String> {
        let files = || self.files.lock().unwrap_or_else(PoisonError::into_inner);
        let cached = files().get(file).cloned();
        let covers = |(text, more): &(Arc<SourceText>, bool)| {
            !more || wanted.iter().all(|n| text.lines.contains_key(n))
        };
        if let Some(read) = cached.filter(|read| read.as_ref().map_or(true, covers)) {
            return read.map(|(text, _)| text);
        }
        // Read without the lock: a large file on a slow disk should not hold
        // up readers of other files. Two readers of one file read it twice.
        let read = self.read(file, wanted);
        files().insert(file.to_owned(), read.clone());
        read.map(|(text, _)| text)
    }
}

/// `path` with `.` dropped and each `..` taking away the component before
/// it, as far as there is one (`/..` is `/`).
fn normalised(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(".."),
            },
            other => out.push(other),
        }
    }
    out
}

/// Lines `wanted` of the file at `path`, and whether it has more than was
/// read.
fn read_lines(path: &Path, wanted: &BTreeSet<u32>) -> io::Result<(SourceText, bool)> {
    let mut reader = BufReader::with_capacity(64 << 10, open_regular(path)?);
    let last = wanted.last().copied().unwrap_or(0);
    let mut lines = BTreeMap::new();
    let (mut scanned, mut long) = (0u64, false);
    let mut line = Vec::new();
    let mut number = 1u32;
    while number <= last {
        let mut limited = (&mut reader).take(MAX_SCAN - scanned);
        let read = match wanted.contains(&number) {
            true => {
                line.clear();
                let kept = (&mut limited)
                    .take(MAX_LINE as u64)
                    .read_until(b'\n', &mut line)?;
                let rest = match kept == MAX_LINE && line.last() != Some(&b'\n') {
                    true => limited.skip_until(b'\n')?,
                    false => 0,
                };
                // More than the line's end was left out.
                long |= rest > 1;
                kept + rest
            }
            false => limited.skip_until(b'\n')?,
        };
        scanned += read as u64;
        if read == 0 {
            // The end of the file, or of what is read of it.
            let cut = (scanned >= MAX_SCAN).then(|| {
                format!(
                    "only the first {} MiB of {} were read: lines from {number} on are not shown",
                    MAX_SCAN >> 20,
                    path.display()
                )
            });
            return Ok((text(path, lines, cut, long), false));
        }
        if wanted.contains(&number) {
            let end = line.strip_suffix(b"\n").unwrap_or(&line);
            let end = end.strip_suffix(b"\r").unwrap_or(end);
            let text = printable_line(&String::from_utf8_lossy(end)).into_owned();
            lines.insert(number, text);
        }
        number = number.saturating_add(1);
    }
    Ok((text(path, lines, None, long), true))
}

fn text(path: &Path, lines: BTreeMap<u32, String>, cut: Option<String>, long: bool) -> SourceText {
    let long = long.then(|| {
        format!(
            "lines of {} longer than {} KiB are cut short",
            path.display(),
            MAX_LINE >> 10
        )
    });
    SourceText {
        path: path.display().to_string(),
        lines,
        cut: match (cut, long) {
            (Some(cut), Some(long)) => Some(format!("{cut}; {long}")),
            (cut, long) => cut.or(long),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory for one test.
    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "profiler-symbols-sources-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn all(range: std::ops::RangeInclusive<u32>) -> BTreeSet<u32> {
        range.collect()
    }

    fn shown(text: &SourceText) -> Vec<(u32, &str)> {
        (text.lines.iter()).map(|(n, l)| (*n, l.as_str())).collect()
    }

    #[test]
    fn the_lines_wanted_are_read_once_without_their_ends() {
        let dir = temp_dir("lines");
        let file = dir.join("hot.c");
        std::fs::write(&file, b"int main(void)\r\n{\n\treturn 0;\xff\x1b[2J\n}").unwrap();
        let sources = SourceFiles::default();
        let path = file.to_str().unwrap();
        let text = sources.lines(path, &all(1..=9)).unwrap();
        assert_eq!(
            shown(&text),
            [
                (1, "int main(void)"),
                (2, "{"),
                (3, "\treturn 0;\u{fffd}\\x1b[2J"),
                (4, "}")
            ]
        );
        assert_eq!(text.path, path);
        assert_eq!(text.cut, None);
        // Kept: the file is not read again.
        std::fs::remove_file(&file).unwrap();
        assert_eq!(sources.lines(path, &all(2..=3)).unwrap(), text);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn only_the_lines_wanted_are_kept_and_reading_stops_after_the_last() {
        let dir = temp_dir("wanted");
        let file = dir.join("big.c");
        let mut bytes: Vec<u8> = (1..=100)
            .flat_map(|n| format!("line {n}\n").into_bytes())
            .collect();
        // A line of 1 MiB, then more lines.
        bytes.extend(std::iter::repeat_n(b'x', 1 << 20));
        bytes.extend(b"\nafter\n");
        std::fs::write(&file, &bytes).unwrap();
        let sources = SourceFiles::default();
        let path = file.to_str().unwrap();
        let text = sources.lines(path, &[3, 50].into()).unwrap();
        assert_eq!(shown(&text), [(3, "line 3"), (50, "line 50")]);
        // More lines: read again.
        let text = sources.lines(path, &[99, 101, 102, 200].into()).unwrap();
        assert_eq!(text.lines[&99], "line 99");
        assert_eq!(text.lines[&101].len(), MAX_LINE);
        assert_eq!(text.lines[&102], "after");
        assert_eq!(text.lines.len(), 3);
        let cut = text.cut.as_deref().unwrap();
        assert!(cut.contains("longer than 4 KiB are cut short"), "{cut}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_is_read_no_further_than_its_first_256_mib() {
        let dir = temp_dir("endless");
        let file = dir.join("endless.c");
        // Sparse: no disk, and no line end.
        std::fs::File::create(&file)
            .unwrap()
            .set_len(1 << 30)
            .unwrap();
        let text = SourceFiles::default()
            .lines(file.to_str().unwrap(), &[1, 2, 3].into())
            .unwrap();
        assert_eq!(text.lines.len(), 1);
        assert_eq!(text.lines[&1].len(), MAX_LINE * 4);
        let cut = text.cut.as_deref().unwrap();
        assert!(cut.starts_with("only the first 256 MiB of "), "{cut}");
        assert!(cut.contains("lines from 2 on are not shown"), "{cut}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_that_moved_is_found_by_its_remap() {
        let dir = temp_dir("remap");
        let new = dir.join("checkout");
        std::fs::create_dir_all(new.join("src")).unwrap();
        std::fs::write(new.join("src/hot.c"), "moved\n").unwrap();
        std::fs::write(dir.join("here.c"), "not moved\n").unwrap();
        let sources = SourceFiles::new(vec![
            ("/build/ap".into(), "/nowhere".into()),
            ("/build/app/./".into(), new.clone()),
            ("/build".into(), "/nowhere".into()),
        ]);
        let text = sources.lines("/build/app/src/hot.c", &[1].into()).unwrap();
        assert_eq!(shown(&text), [(1, "moved")]);
        assert_eq!(text.path, new.join("src/hot.c").display().to_string());
        // `..` is resolved before the remap.
        let text = sources
            .lines("/build/app/lib/../src/./hot.c", &[1].into())
            .unwrap();
        assert_eq!(shown(&text), [(1, "moved")]);
        // A file the remap does not hold is read where the debug info says.
        let remapped = SourceFiles::new(vec![(dir.clone(), new)]);
        let here = dir.join("here.c");
        let text = remapped.lines(here.to_str().unwrap(), &[1].into()).unwrap();
        assert_eq!(shown(&text), [(1, "not moved")]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_remap_never_leads_out_of_new() {
        assert_eq!(
            normalised(Path::new("/a/./b/../../../c/..//d")),
            Path::new("/d")
        );
        assert_eq!(normalised(Path::new("../a/../../b")), Path::new("../../b"));
        let sources = SourceFiles::new(vec![
            ("/build/app".into(), "/new".into()),
            ("..".into(), "/other".into()),
        ]);
        let moved = |file: &str| sources.remapped(Path::new(file));
        assert_eq!(moved("/build/app/x/../y.c"), Some("/new/y.c".into()));
        // Out of OLD once `..` is resolved: not remapped at all.
        assert_eq!(moved("/build/app/../../etc/passwd"), None);
        assert_eq!(moved("/build/app/../app2/y.c"), None);
        assert_eq!(moved("../../y.c"), None);
    }

    #[test]
    fn a_missing_file_names_itself_and_the_way_to_find_it() {
        let sources = SourceFiles::default();
        let error = sources.lines("/build/app/hot.c", &[1].into()).unwrap_err();
        assert!(
            error.starts_with("cannot read source file /build/app/hot.c: "),
            "{error}"
        );
        assert!(
            error.ends_with("; if the sources moved, give --source-dir /build/app=NEW"),
            "{error}"
        );
        assert!(!error.contains('\n'));
        assert_eq!(
            sources.lines("/build/app/hot.c", &[1].into()).unwrap_err(),
            error
        );
    }
}
