//! Finding a module's separate debug info, where gdb and addr2line look:
//! by build-id under each debug directory (`.build-id/ab/cdef….debug`), then
//! by `.gnu_debuglink` name next to the file, in its `.debug/` directory and
//! under each debug directory. `/usr/lib/debug` is always searched last.

use std::path::{Path, PathBuf};

use object::Object;

use crate::image::Image;

/// The debug directory every Debian and Fedora debug package installs into.
const SYSTEM_DEBUG_DIR: &str = "/usr/lib/debug";

/// A debug file found for a module, read into memory.
pub(crate) struct DebugFile {
    pub path: PathBuf,
    pub data: Vec<u8>,
}

/// The separate debug file of the module `image` read from `path`, if the
/// module has no DWARF of its own and one is found that matches it (same
/// build-id, or the CRC its debuglink names).
pub(crate) fn find_debug_file(
    path: &Path,
    image: &Image<'_>,
    debug_dirs: &[PathBuf],
) -> Option<DebugFile> {
    if image.object.section_by_name(".debug_info").is_some() {
        return None;
    }
    let mut dirs: Vec<&Path> = debug_dirs.iter().map(PathBuf::as_path).collect();
    dirs.push(Path::new(SYSTEM_DEBUG_DIR));
    let build_id = image
        .object
        .build_id()
        .ok()
        .flatten()
        .filter(|id| id.len() >= 2);

    if let Some(id) = build_id {
        let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
        for dir in &dirs {
            let candidate = dir
                .join(".build-id")
                .join(&hex[..2])
                .join(format!("{}.debug", &hex[2..]));
            if let Some(found) = read_matching(&candidate, |data| same_build_id(data, id)) {
                return Some(found);
            }
        }
    }
    let (name, crc) = image.object.gnu_debuglink().ok().flatten()?;
    let name = Path::new(std::str::from_utf8(name).ok()?);
    let parent = path.parent().unwrap_or(Path::new("/"));
    let mut candidates = vec![parent.join(name), parent.join(".debug").join(name)];
    for dir in &dirs {
        let relative = parent.strip_prefix("/").unwrap_or(parent);
        candidates.push(dir.join(relative).join(name));
        candidates.push(dir.join(name));
    }
    candidates.into_iter().find_map(|candidate| {
        read_matching(&candidate, |data| match build_id {
            Some(id) => same_build_id(data, id),
            None => crc32(data) == crc,
        })
    })
}

fn read_matching(path: &Path, matches: impl Fn(&[u8]) -> bool) -> Option<DebugFile> {
    let data = std::fs::read(path).ok()?;
    matches(&data).then(|| DebugFile {
        path: path.to_owned(),
        data,
    })
}

fn same_build_id(data: &[u8], id: &[u8]) -> bool {
    object::File::parse(data)
        .ok()
        .and_then(|f| f.build_id().ok().flatten())
        == Some(id)
}

/// The CRC-32 (IEEE, as zlib computes it) that `.gnu_debuglink` records.
fn crc32(data: &[u8]) -> u32 {
    static TABLE: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        std::array::from_fn(|i| {
            (0..8).fold(i as u32, |c, _| {
                if c & 1 == 1 {
                    0xedb8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                }
            })
        })
    });
    !data.iter().fold(!0u32, |c, &b| {
        table[((c ^ u32::from(b)) & 0xff) as usize] ^ (c >> 8)
    })
}

#[cfg(test)]
mod tests {
    use super::crc32;

    #[test]
    fn crc32_is_zlibs() {
        assert_eq!(crc32(b""), 0);
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        assert_eq!(
            crc32(b"The quick brown fox jumps over the lazy dog"),
            0x414f_a339
        );
    }
}
