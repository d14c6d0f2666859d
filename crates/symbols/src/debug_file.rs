//! Finding a module's separate debug info, where gdb and addr2line look:
//! by build-id under each debug directory (`.build-id/ab/cdef….debug`), then
//! by `.gnu_debuglink` name next to the file, in its `.debug/` directory and
//! under each debug directory. `/usr/lib/debug` is always searched last.

use std::path::{Path, PathBuf};

use object::Object;
use profiler_model::read_regular;

use crate::image::{self, Bytes, Image};

/// The debug directory every Debian and Fedora debug package installs into.
const SYSTEM_DEBUG_DIR: &str = "/usr/lib/debug";

/// A debug file found for a module.
pub(crate) struct DebugFile {
    pub path: PathBuf,
    pub bytes: Bytes,
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
    let matching = |candidate: &Path| -> Option<Bytes> {
        match build_id {
            Some(id) => image::open(candidate)
                .ok()
                .filter(|b| build_id_of(b).as_deref() == Some(id)),
            // Without a build-id, the CRC of the whole file is the check.
            None => {
                let crc = image.object.gnu_debuglink().ok().flatten()?.1;
                read_regular(candidate)
                    .ok()
                    .filter(|d| crc32(d) == crc)
                    .map(image::in_memory)
            }
        }
    };
    let found = |candidate: PathBuf| {
        matching(&candidate).map(|bytes| DebugFile {
            path: candidate,
            bytes,
        })
    };

    if let Some(id) = build_id {
        let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
        let by_id = dirs.iter().map(|dir| {
            dir.join(".build-id")
                .join(&hex[..2])
                .join(format!("{}.debug", &hex[2..]))
        });
        if let Some(debug) = by_id.into_iter().find_map(found) {
            return Some(debug);
        }
    }
    let (name, _) = image.object.gnu_debuglink().ok().flatten()?;
    let name = Path::new(std::str::from_utf8(name).ok()?);
    let parent = path.parent().unwrap_or(Path::new("/"));
    let mut candidates = vec![parent.join(name), parent.join(".debug").join(name)];
    for dir in &dirs {
        let relative = parent.strip_prefix("/").unwrap_or(parent);
        candidates.push(dir.join(relative).join(name));
        candidates.push(dir.join(name));
    }
    candidates.into_iter().find_map(found)
}

fn build_id_of(bytes: &Bytes) -> Option<Vec<u8>> {
    let object = object::File::parse(&**bytes).ok()?;
    object.build_id().ok().flatten().map(<[u8]>::to_vec)
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
