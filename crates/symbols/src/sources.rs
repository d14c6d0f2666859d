//! The source files debug info names, read for annotated listings: where the
//! build's sources have moved, at their new place (`--source-dir OLD=NEW`),
//! each file read once.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use profiler_model::{SourceReader, read_regular};

/// Reads source files, remapping the directories that moved, and keeps
/// their lines (or why they could not be read).
#[derive(Debug, Default)]
pub struct SourceFiles {
    /// `(OLD, NEW)`: a file under OLD is looked for under NEW first.
    remaps: Vec<(PathBuf, PathBuf)>,
    files: Mutex<HashMap<String, Lines>>,
}

/// A file's lines, or why it cannot be read.
type Lines = Result<Arc<[String]>, String>;

impl SourceFiles {
    /// Files under the first of `remaps`' OLD directories that holds them
    /// (whole path components) are read from its NEW directory instead,
    /// when the file is there.
    pub fn new(remaps: Vec<(PathBuf, PathBuf)>) -> SourceFiles {
        SourceFiles {
            remaps,
            files: Mutex::default(),
        }
    }

    /// Where `file` moved to, by the first remap that covers it.
    fn remapped(&self, file: &Path) -> Option<PathBuf> {
        self.remaps.iter().find_map(|(old, new)| {
            let rest = file.strip_prefix(old).ok()?;
            Some(match rest.as_os_str().is_empty() {
                true => new.clone(),
                false => new.join(rest),
            })
        })
    }

    fn read(&self, file: &str) -> Lines {
        let original = Path::new(file);
        let moved = self.remapped(original).filter(|path| path.exists());
        let path = moved.as_deref().unwrap_or(original);
        let bytes = read_regular(path).map_err(|error| {
            let directory = original
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .map_or("OLD".into(), |d| d.display().to_string());
            format!(
                "cannot read source file {}: {error}; if the sources moved, give \
                 --source-dir {directory}=NEW",
                path.display()
            )
        })?;
        Ok(split_lines(&String::from_utf8_lossy(&bytes)))
    }
}

impl SourceReader for SourceFiles {
    fn lines(&self, file: &str) -> Lines {
        let cached = self
            .files
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(file)
            .cloned();
        if let Some(lines) = cached {
            return lines;
        }
        // Read without the lock: a large file on a slow disk should not hold
        // up readers of other files. Two readers of one file read it twice.
        let lines = self.read(file);
        self.files
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(file.to_owned(), lines.clone());
        lines
    }
}

/// The lines of `text`, without their `\n` or `\r\n` ends.
fn split_lines(text: &str) -> Arc<[String]> {
    text.lines()
        .map(|line| line.strip_suffix('\r').unwrap_or(line).to_owned())
        .collect()
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

    #[test]
    fn a_files_lines_are_read_once_without_their_ends() {
        let dir = temp_dir("lines");
        let file = dir.join("hot.c");
        std::fs::write(&file, b"int main(void)\r\n{\n\treturn 0;\xff\n}").unwrap();
        let sources = SourceFiles::default();
        let path = file.to_str().unwrap();
        let lines = sources.lines(path).unwrap();
        assert_eq!(
            &lines[..],
            ["int main(void)", "{", "\treturn 0;\u{fffd}", "}"]
        );
        // Kept: the file is not read again.
        std::fs::remove_file(&file).unwrap();
        assert_eq!(sources.lines(path).unwrap(), lines);
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
            ("/build/app".into(), new.clone()),
            ("/build".into(), "/nowhere".into()),
        ]);
        assert_eq!(
            &sources.lines("/build/app/src/hot.c").unwrap()[..],
            ["moved"]
        );
        // A file the remap does not hold is read where the debug info says.
        let remapped = SourceFiles::new(vec![(dir.clone(), new)]);
        let here = dir.join("here.c");
        assert_eq!(
            &remapped.lines(here.to_str().unwrap()).unwrap()[..],
            ["not moved"]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_file_names_itself_and_the_way_to_find_it() {
        let sources = SourceFiles::default();
        let error = sources.lines("/build/app/hot.c").unwrap_err();
        assert!(
            error.starts_with("cannot read source file /build/app/hot.c: "),
            "{error}"
        );
        assert!(
            error.ends_with("; if the sources moved, give --source-dir /build/app=NEW"),
            "{error}"
        );
        assert!(!error.contains('\n'));
        assert_eq!(sources.lines("/build/app/hot.c").unwrap_err(), error);
    }
}
