//! The names a module's files gave, kept on disk between runs: a report of
//! a short recording of a large program spent most of its time reading
//! the program's symbol tables and debug info, to name the same few
//! thousand addresses as the run before. With the answers kept, a second
//! report reads one small file instead.
//!
//! Only a module with a build-id and files on disk is cached, and an
//! answer is used only for the very files it came from: the key holds the
//! build-id, each file read (the module's, and its separate debug file)
//! by device, inode, size and modification time to the nanosecond, the
//! detail asked for and the options that change names. Anything else is
//! a miss, and a file changed since the recording is refused as it is
//! without the cache, before the cache is looked at. Answers with a
//! problem or notes are never kept, so that these are said each time.
//!
//! The answer for one offset does not depend on the others asked with
//! it, so on a partial hit only the offsets missed are named, and the
//! union kept. One file per module, detail and naming options, under
//! `$XDG_CACHE_HOME/profiler` (or `~/.cache/profiler`); all of them
//! together at most [`BOUND`] bytes (see `cache_dir` for the rest).
//! Deleting the directory is always safe.

use std::path::{Path, PathBuf};

use profiler_model::{AddressSymbol, Detail, FileOffset, Module, ModuleSymbols};

use crate::cache_dir::CacheDir;
use crate::elf_module::ModuleFiles;
use crate::file_identity::FileIdentity;
use crate::naming_codec::{Answer, CacheKey, decode, encode};

/// The most bytes the cache's files hold together: the names of the
/// addresses of a 62k-sample recording of a debug build of this profiler,
/// with their inline chains, take 1.1 MB.
pub(crate) const BOUND: u64 = 64 << 20;

/// The cache directory of the user running: `$XDG_CACHE_HOME/profiler`,
/// else `$HOME/.cache/profiler`; `None` without either.
pub fn default_cache_dir() -> Option<PathBuf> {
    let absolute = |name| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|path| path.is_absolute())
    };
    match absolute("XDG_CACHE_HOME") {
        Some(cache) => Some(cache.join("profiler")),
        None => Some(absolute("HOME")?.join(".cache/profiler")),
    }
}

/// The cache's directory at `path`, if it is safe to use.
pub(crate) fn open_dir(path: &Path) -> Option<CacheDir> {
    CacheDir::open(path, BOUND)
}

/// One module's file in the cache.
pub(crate) struct NamingCache<'d> {
    dir: &'d CacheDir,
    name: String,
    key: CacheKey,
}

impl<'d> NamingCache<'d> {
    /// The cache of `module`'s answers from `files` (as opened for it), in
    /// the directory `dir`; `None` where the module is not cached (no
    /// build-id, files that state another, files not on disk) or the
    /// directory is not safe to use.
    pub(crate) fn new(
        dir: &'d CacheDir,
        module: &Module,
        files: &ModuleFiles,
        detail: Detail,
        full_signatures: bool,
    ) -> Option<NamingCache<'d>> {
        let build_id = module.build_id.as_ref()?;
        let cached = module.pid.is_none()
            && module.has_file()
            && (1..=64).contains(&build_id.0.len())
            && files.build_id.as_ref() == Some(build_id);
        if !cached {
            return None;
        }
        let debug = files.debug.as_ref().map(|debug| &debug.bytes);
        let identities = [Some(&files.bytes), debug].into_iter().flatten();
        let files = identities
            .map(|bytes| bytes.file().and_then(FileIdentity::of_file))
            .collect::<Option<Vec<_>>>()?;
        let name = format!(
            "{build_id}.{}{}.names",
            match detail {
                Detail::Functions => "functions",
                Detail::Frames => "frames",
            },
            if full_signatures { ".full" } else { "" }
        );
        let key = CacheKey {
            build_id: build_id.0.clone(),
            files,
            detail,
            full_signatures,
        };
        Some(NamingCache { dir, name, key })
    }

    /// The answers for `offsets` (sorted, without duplicates): those kept,
    /// and those missed from `name`, which are then kept with the others.
    pub(crate) fn symbolize(
        &self,
        offsets: &[FileOffset],
        name: impl FnOnce(&[FileOffset]) -> ModuleSymbols,
    ) -> ModuleSymbols {
        let kept = (self.dir.read(&self.name))
            .and_then(|bytes| decode(&bytes, &self.key))
            .unwrap_or_default();
        let found: Vec<Option<usize>> = (offsets.iter())
            .map(|offset| kept.binary_search_by_key(offset, |(o, _)| *o).ok())
            .collect();
        let missed: Vec<FileOffset> = (offsets.iter().zip(&found))
            .filter(|(_, at)| at.is_none())
            .map(|(&offset, _)| offset)
            .collect();
        let mut named = match missed.is_empty() {
            true => ModuleSymbols::default(),
            false => name(&missed),
        };
        if named.problem.is_some() {
            named.addresses = vec![AddressSymbol::default(); offsets.len()];
            return named;
        }
        let mut fresh = std::mem::take(&mut named.addresses).into_iter();
        let mut answers = Vec::with_capacity(offsets.len());
        let mut new = Vec::with_capacity(missed.len());
        for (&offset, &at) in offsets.iter().zip(&found) {
            let answer = match at {
                Some(at) => kept[at].1.clone(),
                None => {
                    let answer = fresh.next().unwrap_or_default();
                    new.push((offset, answer.clone()));
                    answer
                }
            };
            answers.push(answer);
        }
        if !new.is_empty() && named.notes.is_empty() {
            self.dir
                .write(&self.name, &encode(&self.key, &union(kept, new)));
        }
        named.addresses = answers;
        named
    }
}

/// `kept` and `new` (each sorted by offset, none in both) as one list.
fn union(kept: Vec<Answer>, new: Vec<Answer>) -> Vec<Answer> {
    let mut all = kept;
    all.extend(new);
    all.sort_unstable_by_key(|(offset, _)| *offset);
    all
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;
    use crate::symbolizer::tests::own_mapping;
    use crate::symbolizer::{ElfSymbolizer, SymbolizerOptions};
    use profiler_model::Symbolizer;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("naming-cache-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// This test binary as a module with its build-id, and offsets spread
    /// over its code.
    fn this_binary() -> (Module, Vec<FileOffset>) {
        let address = this_binary as *const () as u64;
        let (start, offset, path) = own_mapping(address);
        let files = ModuleFiles::open(Path::new(&path), &[]).unwrap();
        let module = Module {
            path,
            build_id: files.build_id.clone(),
            pid: None,
        };
        assert!(
            module.build_id.is_some(),
            "this test binary has no build-id"
        );
        let at = address - start + offset;
        let offsets = (0..48)
            .map(|i| FileOffset(at - 0x6000 + i * 0x200 + i % 5))
            .collect();
        (module, offsets)
    }

    fn symbolizer(cache: Option<&Path>) -> ElfSymbolizer {
        ElfSymbolizer::new(SymbolizerOptions {
            cache_dir: cache.map(Path::to_path_buf),
            ..SymbolizerOptions::default()
        })
    }

    /// The offsets `cache` asks the real symbolizer for, with what `dir`'s
    /// cache answers.
    fn missed(
        dir: &Path,
        module: &Module,
        offsets: &[FileOffset],
        detail: Detail,
    ) -> (Vec<FileOffset>, ModuleSymbols) {
        let files = ModuleFiles::open(Path::new(&module.path), &[]).unwrap();
        let dir = open_dir(dir).unwrap();
        let cache = NamingCache::new(&dir, module, &files, detail, false).unwrap();
        let asked = RefCell::new(Vec::new());
        let answer = cache.symbolize(offsets, |missed| {
            asked.borrow_mut().extend_from_slice(missed);
            symbolizer(None).symbolize(module, missed, detail)
        });
        (asked.into_inner(), answer)
    }

    #[test]
    fn an_offsets_answer_does_not_depend_on_the_others_asked() {
        let (module, offsets) = this_binary();
        let symbolizer = symbolizer(None);
        for detail in [Detail::Functions, Detail::Frames] {
            let all = symbolizer.symbolize(&module, &offsets, detail);
            let (even, odd): (Vec<_>, Vec<_>) = offsets.iter().partition(|o| o.0 % 2 == 0);
            for part in [even, odd] {
                let alone = symbolizer.symbolize(&module, &part, detail);
                for (offset, answer) in part.iter().zip(&alone.addresses) {
                    let at = offsets.iter().position(|o| o == offset).unwrap();
                    assert_eq!(*answer, all.addresses[at], "{offset:?} {detail:?}");
                }
            }
        }
    }

    #[test]
    fn warm_answers_are_the_cold_ones_and_only_misses_are_named() {
        let dir = scratch("warm");
        let (module, offsets) = this_binary();
        for detail in [Detail::Functions, Detail::Frames] {
            let fresh = symbolizer(None).symbolize(&module, &offsets, detail);
            let cold = symbolizer(Some(&dir)).symbolize(&module, &offsets, detail);
            let warm = symbolizer(Some(&dir)).symbolize(&module, &offsets, detail);
            assert_eq!(cold, fresh);
            assert_eq!(warm, fresh);
            let (asked, answer) = missed(&dir, &module, &offsets, detail);
            assert_eq!(asked, []);
            let mut printable = answer;
            printable.make_printable();
            assert_eq!(printable, fresh);
        }
        // Half known: only the other half is named, and then all are kept.
        let _ = std::fs::remove_dir_all(&dir);
        let half: Vec<FileOffset> = offsets.iter().copied().step_by(2).collect();
        let rest: Vec<FileOffset> = offsets.iter().copied().skip(1).step_by(2).collect();
        symbolizer(Some(&dir)).symbolize(&module, &half, Detail::Frames);
        let (asked, mut answer) = missed(&dir, &module, &offsets, Detail::Frames);
        assert_eq!(asked, rest);
        answer.make_printable();
        assert_eq!(
            answer,
            symbolizer(None).symbolize(&module, &offsets, Detail::Frames)
        );
        assert_eq!(missed(&dir, &module, &offsets, Detail::Frames).0, []);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_damaged_cache_file_is_a_miss() {
        let dir = scratch("damaged");
        let (module, offsets) = this_binary();
        let fresh = symbolizer(None).symbolize(&module, &offsets, Detail::Functions);
        symbolizer(Some(&dir)).symbolize(&module, &offsets, Detail::Functions);
        let file = std::fs::read_dir(&dir)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let bytes = std::fs::read(&file).unwrap();
        for damaged in [&bytes[..bytes.len() / 2], b"garbage"] {
            std::fs::write(&file, damaged).unwrap();
            let (asked, _) = missed(&dir, &module, &offsets, Detail::Functions);
            assert_eq!(asked, offsets);
            std::fs::write(&file, damaged).unwrap();
            let named = symbolizer(Some(&dir)).symbolize(&module, &offsets, Detail::Functions);
            assert_eq!(named, fresh);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn modules_without_a_build_id_or_of_another_build_are_not_cached() {
        let dir = scratch("uncached");
        let (module, _) = this_binary();
        let files = ModuleFiles::open(Path::new(&module.path), &[]).unwrap();
        let detail = Detail::Functions;
        let without = Module {
            build_id: None,
            ..module.clone()
        };
        let cache_dir = open_dir(&dir).unwrap();
        assert!(NamingCache::new(&cache_dir, &without, &files, detail, false).is_none());
        let other = Module {
            build_id: Some(profiler_model::BuildId(vec![0; 20])),
            ..module.clone()
        };
        assert!(NamingCache::new(&cache_dir, &other, &files, detail, false).is_none());
        let jit = Module {
            pid: Some(1),
            ..module.clone()
        };
        assert!(NamingCache::new(&cache_dir, &jit, &files, detail, false).is_none());
        assert!(NamingCache::new(&cache_dir, &module, &files, detail, false).is_some());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
