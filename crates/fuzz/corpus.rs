//! Seed inputs: the target's built-in ones, then the files of the corpus
//! directories the target reads (recordings the tests made, fixture
//! binaries), in path order so that a seed reproduces a run.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::target::Target;

/// Corpus files larger than this are left out: mutating them costs more
/// than it finds.
const MAX_SEED_LEN: u64 = 1 << 20;

/// At most this many seeds are taken from the corpus.
const MAX_SEEDS: usize = 4000;

/// The seeds of `target`: built in, then from `corpus`; how many were
/// built in.
pub(crate) fn seeds(target: &Target, corpus: &[PathBuf]) -> Result<(Vec<Vec<u8>>, usize)> {
    let mut seeds = (target.seeds)();
    let built_in = seeds.len();
    let mut files = Vec::new();
    for path in corpus {
        if !path.exists() {
            bail!("corpus {}: no such file or directory", path.display());
        }
        walk(path, &mut files).with_context(|| format!("corpus {}", path.display()))?;
    }
    files.sort();
    let mut seen: HashSet<Vec<u8>> = seeds.iter().cloned().collect();
    for file in files {
        if seeds.len() - built_in >= MAX_SEEDS {
            break;
        }
        let Ok(bytes) = std::fs::read(&file) else {
            continue;
        };
        if (target.accepts)(&bytes) && seen.insert(bytes.clone()) {
            seeds.push(bytes);
        }
    }
    Ok((seeds, built_in))
}

/// The regular files under `path`, not following symbolic links.
fn walk(path: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let metadata = std::fs::symlink_metadata(path)?;
    if metadata.is_file() && metadata.len() <= MAX_SEED_LEN {
        files.push(path.to_owned());
    } else if metadata.is_dir() {
        for entry in std::fs::read_dir(path)? {
            walk(&entry?.path(), files)?;
        }
    }
    Ok(())
}
