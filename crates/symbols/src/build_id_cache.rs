//! perf's build-id cache: the copy of each binary that `perf record` keeps
//! by build-id (`~/.debug/.build-id/ab/cdef…/elf`, or `$PERF_BUILDID_DIR`
//! in place of `~/.debug`), so that a recording still names its code after
//! the binary was rebuilt or removed.

use std::path::{Path, PathBuf};

use profiler_model::{BuildId, Module};

/// Opens `module`'s file as it was recorded: the file at its path, or,
/// where that is gone or states another build-id (`build_id` of what was
/// opened), perf's copy of the recorded one. Without a copy, what opening
/// the path gave, so that the change is still said.
pub(crate) fn open_as_recorded<T, E>(
    module: &Module,
    open: impl Fn(&Path) -> Result<T, E>,
    build_id: impl Fn(&T) -> Option<BuildId>,
) -> Result<T, E> {
    let opened = open(Path::new(&module.path));
    let Some(recorded) = &module.build_id else {
        return opened;
    };
    let holds = |opened: &Result<T, E>| {
        (opened.as_ref()).is_ok_and(|file| build_id(file).is_none_or(|found| found == *recorded))
    };
    if holds(&opened) {
        return opened;
    }
    match cached_binary(recorded).map(|cached| open(&cached)) {
        Some(cached) if holds(&cached) => cached,
        _ => opened,
    }
}

/// The cached copy of the binary with `build_id`, if perf kept one.
fn cached_binary(build_id: &BuildId) -> Option<PathBuf> {
    let root = match std::env::var_os("PERF_BUILDID_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".debug"),
    };
    cached_in(&root, build_id)
}

fn cached_in(root: &Path, build_id: &BuildId) -> Option<PathBuf> {
    let hex = build_id.to_string();
    if hex.len() < 3 {
        return None;
    }
    let entry = root.join(".build-id").join(&hex[..2]).join(&hex[2..]);
    // Newer perf links the entry to a directory holding `elf`; older perf
    // to the file itself.
    let file = match entry.is_dir() {
        true => entry.join("elf"),
        false => entry,
    };
    file.is_file().then_some(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_layouts_of_the_cache_are_found() {
        let root = std::env::temp_dir().join(format!("build-id-cache-{}", std::process::id()));
        let newer = root.join(".build-id/ab/cdef");
        std::fs::create_dir_all(&newer).unwrap();
        std::fs::write(newer.join("elf"), b"\x7fELF").unwrap();
        std::fs::write(root.join(".build-id/ab/0000"), b"\x7fELF").unwrap();
        let found = |id: &[u8]| cached_in(&root, &BuildId(id.to_vec()));
        assert_eq!(found(&[0xab, 0xcd, 0xef]), Some(newer.join("elf")));
        assert_eq!(found(&[0xab, 0, 0]), Some(root.join(".build-id/ab/0000")));
        assert_eq!(found(&[0x99, 0x99]), None);
        assert_eq!(found(&[0xab]), None);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
