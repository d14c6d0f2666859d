//! The GNU build-id of an ELF file, read from its note segments as the
//! kernel reads it for its mapping records: mappings described from /proc
//! then name the same module as mappings the kernel reported.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use profiler_model::BuildId;

/// Build-ids by path, each file read once however many processes map it.
#[derive(Debug, Default)]
pub(crate) struct BuildIds(HashMap<String, Option<BuildId>>);

impl BuildIds {
    /// The build-id of the file that process `pid` maps from `path`, read
    /// through the process's own root (it may live in another mount
    /// namespace), else as the path stands here.
    pub fn of(&mut self, pid: u32, path: &str) -> Option<BuildId> {
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

/// `PT_NOTE`, `NT_GNU_BUILD_ID`.
const PT_NOTE: u32 = 4;
const NT_GNU_BUILD_ID: u32 = 3;
/// Note segments larger than this are not read (a build-id note is tiny).
const MAX_NOTES: u64 = 64 << 10;

/// The build-id of the ELF file at `path`; `None` when it cannot be read,
/// is not a little-endian ELF file, or has no build-id.
pub(crate) fn read(path: &Path) -> Option<BuildId> {
    let mut file = File::open(path).ok()?;
    let mut ident = [0u8; 64];
    file.read_exact(&mut ident).ok()?;
    if &ident[..4] != b"\x7fELF" || ident[5] != 1 {
        return None;
    }
    let u16_at = |bytes: &[u8], at: usize| -> Option<u64> {
        Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?).into())
    };
    let u32_at = |bytes: &[u8], at: usize| -> Option<u64> {
        Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?).into())
    };
    let u64_at = |bytes: &[u8], at: usize| -> Option<u64> {
        Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
    };
    // (program header table offset, entry size, count) and where a program
    // header keeps its type, file offset and file size.
    let (wide, phoff, phentsize, phnum) = match ident[4] {
        1 => (
            false,
            u32_at(&ident, 28)?,
            u16_at(&ident, 42)?,
            u16_at(&ident, 44)?,
        ),
        2 => (
            true,
            u64_at(&ident, 32)?,
            u16_at(&ident, 54)?,
            u16_at(&ident, 56)?,
        ),
        _ => return None,
    };
    let mut headers = vec![0u8; usize::try_from(phentsize * phnum).ok()?];
    file.seek(SeekFrom::Start(phoff)).ok()?;
    file.read_exact(&mut headers).ok()?;
    for header in headers.chunks_exact(usize::try_from(phentsize).ok()?) {
        if u32_at(header, 0)? != u64::from(PT_NOTE) {
            continue;
        }
        let (offset, size) = match wide {
            false => (u32_at(header, 4)?, u32_at(header, 16)?),
            true => (u64_at(header, 8)?, u64_at(header, 32)?),
        };
        if size > MAX_NOTES {
            continue;
        }
        let mut notes = vec![0u8; usize::try_from(size).ok()?];
        file.seek(SeekFrom::Start(offset)).ok()?;
        file.read_exact(&mut notes).ok()?;
        if let Some(id) = gnu_build_id(&notes) {
            return Some(id);
        }
    }
    None
}

/// The `NT_GNU_BUILD_ID` note among `notes`: each note is its name size,
/// descriptor size and type (4 bytes each), then the name and the
/// descriptor, each padded to 4 bytes.
fn gnu_build_id(notes: &[u8]) -> Option<BuildId> {
    let word = |at: usize| -> Option<usize> {
        Some(u32::from_le_bytes(notes.get(at..at + 4)?.try_into().ok()?) as usize)
    };
    let padded = |n: usize| n.div_ceil(4) * 4;
    let mut at = 0;
    while at + 12 <= notes.len() {
        let (name_size, desc_size, kind) = (word(at)?, word(at + 4)?, word(at + 8)?);
        let name = notes.get(at + 12..at + 12 + name_size)?;
        let desc_start = at + 12 + padded(name_size);
        let desc = notes.get(desc_start..desc_start + desc_size)?;
        if kind == NT_GNU_BUILD_ID as usize && name == b"GNU\0" && !desc.is_empty() {
            return Some(BuildId(desc.to_vec()));
        }
        at = desc_start + padded(desc_size);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_are_walked_to_the_gnu_build_id() {
        let mut notes = Vec::new();
        // An unrelated note with a 5-byte name (padded to 8) first.
        notes.extend_from_slice(&[5, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0]);
        notes.extend_from_slice(b"stapsdt\0");
        notes.extend_from_slice(&[9, 9, 9, 9]);
        notes.extend_from_slice(&[4, 0, 0, 0, 3, 0, 0, 0, 3, 0, 0, 0]);
        notes.extend_from_slice(b"GNU\0");
        notes.extend_from_slice(&[0xab, 0xcd, 0xef, 0]);
        assert_eq!(gnu_build_id(&notes), Some(BuildId(vec![0xab, 0xcd, 0xef])));
        assert_eq!(gnu_build_id(&notes[..24]), None);
    }

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
