//! The fuzz targets: which reader each feeds, which files of a corpus are
//! its inputs, its built-in seeds and its format's tokens.

use std::path::{Path, PathBuf};

use crate::rng::Rng;

/// Rearranges an input's parts; `None` where it cannot.
pub(crate) type Restructure = fn(&mut Rng, &[u8]) -> Option<Vec<u8>>;

/// One reader to fuzz.
pub(crate) struct Target {
    pub name: &'static str,
    /// Whether a file found in a corpus directory is an input of this
    /// target.
    pub accepts: fn(&[u8]) -> bool,
    /// Inputs that need no corpus.
    pub seeds: fn() -> Vec<Vec<u8>>,
    /// Tokens of the format, dropped into inputs.
    pub dictionary: &'static [&'static [u8]],
    /// Mends what a mutation broke that would stop the reader at its door
    /// (checksums), applied to half the inputs.
    pub mend: Option<fn(&mut [u8])>,
    /// Rearranges an input's parts whole (chunks dropped, repeated,
    /// moved), for a third of the inputs; `None` where it has none.
    pub restructure: Option<Restructure>,
    /// Feeds one input to the reader; it must return (errors are fine),
    /// never panic, hang or exhaust memory.
    pub run: fn(&[u8], &Scratch),
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// A worker's own directory, for inputs the readers take as files.
pub(crate) struct Scratch {
    pub dir: PathBuf,
}

impl Scratch {
    /// Writes `bytes` to the file `name` of the directory, and says where.
    pub(crate) fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.dir.join(name);
        // The reader then sees a missing file, which it must take as well.
        let _ = std::fs::write(&path, bytes);
        path
    }
}

/// The repository's root, where the fixtures are.
pub(crate) fn repository() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}
