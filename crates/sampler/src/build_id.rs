//! The GNU build-id of an ELF file, as the kernel reads it for its mapping
//! records: mappings described from /proc then name the same module as
//! mappings the kernel reported.

use std::collections::HashMap;
use std::path::Path;

use object::{Object, ReadCache};
use profiler_model::{BuildId, open_regular};

/// Build-ids by path, each file read once however many processes map it.
#[derive(Debug, Default)]
pub(crate) struct BuildIds(HashMap<String, Option<BuildId>>);

impl BuildIds {
    /// The build-id of the file that process `pid` maps from `path`, read
    /// through the process's own root (it may live in another mount
    /// namespace), else as the path stands here.
    pub(crate) fn of(&mut self, pid: u32, path: &str) -> Option<BuildId> {
        if !path.starts_with('/') || path.starts_with("//") || path.ends_with(" (deleted)") {
            return None;
        }
        self.0
            .entry(path.to_owned())
            .or_insert_with(|| {
                read(Path::new(&format!("/proc/{pid}/root{path}")))
                    .or_else(|| read(Path::new(path)))
            })
            .clone()
    }
}

/// The build-id of the ELF file at `path`; `None` when it cannot be read,
/// is not an ELF file, or has no build-id. Only the headers and the notes
/// are read.
pub(crate) fn read(path: &Path) -> Option<BuildId> {
    let file = ReadCache::new(open_regular(path).ok()?);
    let elf = object::File::parse(&file).ok()?;
    let id = elf.build_id().ok()??;
    (!id.is_empty()).then(|| BuildId(id.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_system_library_has_the_build_id_readelf_shows() {
        let Some(libc) = ["/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib64/libc.so.6"]
            .into_iter()
            .map(Path::new)
            .find(|p| p.exists())
        else {
            return;
        };
        let Ok(output) = std::process::Command::new("readelf")
            .arg("-n")
            .arg(libc)
            .output()
        else {
            return;
        };
        let text = String::from_utf8_lossy(&output.stdout);
        let Some(expected) = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("Build ID: "))
        else {
            return;
        };
        assert_eq!(
            read(libc).map(|id| id.to_string()).as_deref(),
            Some(expected)
        );
        assert_eq!(read(Path::new("/proc/self/status")), None);
    }
}
