//! One ELF module, parsed once for all its addresses: its file and, when the
//! file has no DWARF of its own, its separate debug file; the function table
//! over both; the DWARF of whichever has it, read only when needed.
//!
//! The files are opened on the calling thread; then one thread reads the
//! function table while others read inline chains from the DWARF: a group
//! of units at a time where the units stand alone (see `dwarf_units`), else
//! the whole of it on each thread, shared with its abbreviations parsed
//! once. The file pages read are handed back as the reading goes on.

use rustc_hash::FxHashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use gimli::{EndianSlice, Section};
use object::Object;
use profiler_model::{AddressSymbol, BuildId, Detail, FileOffset, Frame, FunctionSymbol, Svma};

use crate::debug_file::{DebugFile, find_debug_file};
use crate::demangle::demangle;
use crate::dwarf::{self, FrameFinder, FunctionNames};
use crate::dwarf_units::UnitIndex;
use crate::error::SymbolsError;
use crate::functions::{Function, FunctionTable};
use crate::image::{self, Bytes, Image, Layout};
use crate::threads::on_threads;

/// Below this many addresses per thread, fewer threads do the work: each
/// thread pays for parsing the compilation units' headers again (some
/// 40 ms on a debug build of this profiler) and holds its own parsed
/// units. On that build, 20k addresses took 0.29 s on two threads against
/// 0.40 s on one, for 10% more memory.
const ADDRESSES_PER_THREAD: usize = 8192;

/// The file pages read are handed back after this many addresses, by each
/// thread reading the whole DWARF and while the addresses are named: a
/// debug build of this profiler touches some 80 MB of its file, and more
/// often costs time in faults for no less memory.
const RELEASE_EVERY: usize = 4096;

/// Below this many addresses per thread, fewer threads name them.
const NAMES_PER_THREAD: usize = 8192;

/// A module's files, opened.
pub(crate) struct ModuleFiles {
    pub path: String,
    pub bytes: Bytes,
    pub debug: Option<DebugFile>,
    /// The build-id the file states, if any.
    pub build_id: Option<BuildId>,
}

impl ModuleFiles {
    /// Opens the file at `path`, and its separate debug file if it needs
    /// one and one is found in `debug_dirs` (or the usual places).
    pub(crate) fn open(path: &Path, debug_dirs: &[PathBuf]) -> Result<ModuleFiles, SymbolsError> {
        let display = path.display().to_string();
        let read_error = |error| SymbolsError::Read {
            path: display.clone(),
            error,
        };
        let bytes = image::open(path).map_err(read_error)?;
        let parsed = Image::parse(&bytes).map_err(|error| SymbolsError::Parse {
            path: display.clone(),
            error,
        })?;
        let debug = find_debug_file(path, &parsed, debug_dirs);
        let build_id = parsed.build_id();
        drop(parsed);
        Ok(ModuleFiles {
            path: display,
            bytes,
            debug,
            build_id,
        })
    }

    /// Hands back the pages of the files read so far: they are read again
    /// from the page cache when next needed.
    pub(crate) fn release_pages(&self) {
        self.bytes.release_pages();
        if let Some(debug) = &self.debug {
            debug.bytes.release_pages();
        }
    }

    /// Starts reading `part` from the file where it is mapped, for
    /// [`ModuleFiles::read_at`] to come.
    pub(crate) fn prefetch(&self, part: &[u8]) {
        self.mapped().for_each(|bytes| bytes.prefetch(part));
    }

    /// Copies into `buf` the bytes at `offset` in `part`, a slice of these
    /// files or of memory: read from the file where it is mapped, which
    /// maps no page. `None` past the end of `part`.
    pub(crate) fn read_at(&self, part: &[u8], offset: usize, buf: &mut [u8]) -> Option<()> {
        (self
            .mapped()
            .find_map(|bytes| bytes.read_at(part, offset, buf)))
        .or_else(|| {
            buf.copy_from_slice(part.get(offset..offset.checked_add(buf.len())?)?);
            Some(())
        })
    }

    fn mapped(&self) -> impl Iterator<Item = &Bytes> {
        let debug = self.debug.as_ref().map(|debug| &debug.bytes);
        [Some(&self.bytes), debug].into_iter().flatten()
    }

    /// A module held in memory (the vdso).
    pub(crate) fn in_memory(name: &str, data: Vec<u8>) -> ModuleFiles {
        let bytes = image::in_memory(data);
        let build_id = Image::parse(&bytes).ok().and_then(|image| image.build_id());
        ModuleFiles {
            path: name.to_owned(),
            bytes,
            debug: None,
            build_id,
        }
    }
}

/// How a module's addresses are named.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Naming {
    /// Keep C++ argument lists and return types.
    pub full_signatures: bool,
    /// At most this many threads, for a large module's addresses.
    pub threads: usize,
}

/// A parsed module.
pub(crate) struct ElfModule<'a> {
    files: &'a ModuleFiles,
    pub image: Image<'a>,
    debug: Option<Image<'a>>,
    /// Read on first use: start-up without addresses reads no symbols.
    functions: OnceLock<FunctionTable<'a>>,
    /// What was passed over while naming (sections that claim more than
    /// they can hold), for the report's notes.
    notes: Mutex<Vec<String>>,
}

/// How addresses are named once their inline chains are read.
struct Lookup<'s> {
    layout: &'s Layout,
    detail: Detail,
    full_signatures: bool,
    /// Hands back the file pages read so far: the symbol names read.
    release: &'s (dyn Fn() + Sync),
    /// At most this many threads.
    threads: usize,
}

impl<'a> ElfModule<'a> {
    pub(crate) fn parse(files: &'a ModuleFiles) -> Result<ElfModule<'a>, SymbolsError> {
        let parse = |path: &str, bytes: &'a Bytes| {
            Image::parse(bytes).map_err(|error| SymbolsError::Parse {
                path: path.to_owned(),
                error,
            })
        };
        let image = parse(&files.path, &files.bytes)?;
        let debug = match &files.debug {
            Some(debug) => Some(parse(&debug.path.display().to_string(), &debug.bytes)?),
            None => None,
        };
        Ok(ElfModule {
            files,
            image,
            debug,
            functions: OnceLock::new(),
            notes: Mutex::default(),
        })
    }

    /// What was passed over while naming, each in one line.
    pub(crate) fn notes(&self) -> Vec<String> {
        self.notes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// How many functions its table holds (reading it if not yet read).
    pub(crate) fn function_count(&self) -> usize {
        self.functions().len()
    }

    /// The notes gathered so far, taken: a module kept between calls
    /// gives each note once.
    pub(crate) fn take_notes(&self) -> Vec<String> {
        std::mem::take(&mut *self.notes.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The function holding `address`.
    pub(crate) fn function(&self, address: Svma) -> Option<&Function<'a>> {
        self.functions().find(address.0)
    }

    /// Where the functions called one of `names` lie, in file offsets.
    pub(crate) fn functions_named(&self, names: &[&str]) -> Vec<Range<FileOffset>> {
        (self.functions().named(names))
            .filter_map(|f| self.image.layout.file_range(Svma(f.start), Svma(f.end)))
            .map(|(start, len)| start..FileOffset(start.0.saturating_add(len)))
            .collect()
    }

    /// The stated address of each file offset.
    pub(crate) fn svmas(&self, offsets: &[FileOffset]) -> Vec<Option<Svma>> {
        offsets.iter().map(|&o| self.image.layout.svma(o)).collect()
    }

    /// Names every address (sorted addresses make the DWARF lookups cheaper).
    pub(crate) fn resolve(
        &self,
        addresses: &[Svma],
        detail: Detail,
        naming: Naming,
    ) -> Vec<AddressSymbol> {
        let dwarf_image = self.debug.as_ref().unwrap_or(&self.image);
        let release = || self.files.release_pages();
        let lookup = Lookup {
            layout: &self.image.layout,
            detail,
            full_signatures: naming.full_signatures,
            release: &release,
            threads: naming.threads,
        };
        // Without addresses, nothing is read: start-up costs no DWARF.
        if addresses.is_empty() {
            return Vec::new();
        }
        if detail == Detail::Functions {
            // For functions alone, DWARF (tens of megabytes to read, perhaps
            // to decompress) is worth reading only for a module without a
            // symbol table: where one exists, what it leaves unnamed is
            // padding or nameless code that DWARF seldom names either.
            let functions = self.functions();
            let unnamed = |a: &Svma| functions.find(a.0).is_none_or(|f| f.name.is_none());
            let no_symbol_table = ![Some(&self.image), self.debug.as_ref()]
                .into_iter()
                .flatten()
                .any(|image| image.object.symbols().next().is_some());
            if !(no_symbol_table && addresses.iter().any(unnamed)) {
                return lookup.name(addresses, functions, Vec::new());
            }
        }
        let mut notes = Vec::new();
        let sections = dwarf::load_sections(dwarf_image, &mut notes);
        if !notes.is_empty() {
            let path = match &self.files.debug {
                Some(debug) => debug.path.display().to_string(),
                None => self.files.path.clone(),
            };
            let mut kept = self.notes.lock().unwrap_or_else(PoisonError::into_inner);
            kept.extend(notes.iter().map(|note| format!("{path}: {note}")));
        }
        let Some(sections) = sections else {
            return lookup.name(addresses, self.functions(), Vec::new());
        };
        let endian = dwarf::endian(dwarf_image);
        // The symbol tables are read on a thread of their own while the
        // inline chains are read on others.
        let (functions, frames) = std::thread::scope(|scope| {
            let table = scope.spawn(|| self.functions());
            let whole = sections.borrow(|section| EndianSlice::new(section, endian));
            let info = whole.debug_info.reader().slice();
            self.files.prefetch(info);
            let read_info = |offset: usize, buf: &mut [u8]| self.files.read_at(info, offset, buf);
            let frames =
                match UnitIndex::new(&whole, addresses, naming.threads, &release, &read_info) {
                    Some(index) => {
                        let full = naming.full_signatures;
                        index.frames(&sections, endian, addresses, naming.threads, full, &release)
                    }
                    None => whole_frames(&sections, endian, addresses, naming, &release),
                };
            let functions = table
                .join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e));
            (functions, frames)
        });
        lookup.name(addresses, functions, frames)
    }

    /// The function table, read on first use.
    fn functions(&self) -> &FunctionTable<'a> {
        let release = || self.files.release_pages();
        (self.functions)
            .get_or_init(|| FunctionTable::new(&self.image, self.debug.as_ref(), &release))
    }
}

/// The inline chain of each of `addresses`, from addr2line over the whole
/// of the DWARF in `sections`: for a module whose units cannot be read a
/// group at a time (`.debug_abbrev` unreadable from end to end, or units
/// that refer into each other past 4 GB). Large modules are read on up to
/// `naming.threads` threads, each over a share of the addresses.
pub(crate) fn whole_frames(
    sections: &dwarf::Sections<'_>,
    endian: gimli::RunTimeEndian,
    addresses: &[Svma],
    naming: Naming,
    release: &(dyn Fn() + Sync),
) -> Vec<Vec<Frame>> {
    let threads = (naming.threads)
        .min(addresses.len().div_ceil(ADDRESSES_PER_THREAD))
        .max(1);
    let chunk = addresses.len().div_ceil(threads);
    let dwarf = dwarf::shared(sections, endian);
    let frames = on_threads(addresses.chunks(chunk), |part| {
        let mut names = FunctionNames::new(naming.full_signatures);
        let Some(mut finder) = FrameFinder::new(dwarf.clone(), &mut names, 0..0) else {
            return vec![Vec::new(); part.len()];
        };
        let mut frames = Vec::with_capacity(part.len());
        for addresses in part.chunks(RELEASE_EVERY) {
            frames.extend(addresses.iter().map(|a| finder.frames(a.0)));
            release();
        }
        frames
    });
    frames.into_iter().flatten().collect()
}

impl Lookup<'_> {
    /// Names each address from `functions`, with its inline chain from
    /// `frames` (the same length as `addresses`, or empty when DWARF was
    /// not read). Many addresses are named in parts side by side: sorted,
    /// each part has functions of its own to demangle.
    fn name(
        &self,
        addresses: &[Svma],
        functions: &FunctionTable<'_>,
        mut frames: Vec<Vec<Frame>>,
    ) -> Vec<AddressSymbol> {
        let parts = (self.threads)
            .min(addresses.len() / NAMES_PER_THREAD)
            .max(1);
        // Each part names into its share of one list: joining lists made
        // for the parts held the answer twice over.
        let mut named = vec![AddressSymbol::default(); addresses.len()];
        if parts == 1 {
            self.name_part(addresses, functions, &mut frames, &mut named);
            return named;
        }
        let chunk = addresses.len().div_ceil(parts);
        let mut frames = frames.chunks_mut(chunk);
        let parts: Vec<_> = (addresses.chunks(chunk).zip(named.chunks_mut(chunk)))
            .map(|(part, out)| (part, out, frames.next().unwrap_or_default()))
            .collect();
        on_threads(parts, |(part, out, frames)| {
            self.name_part(part, functions, frames, out)
        });
        named
    }

    /// [`Lookup::name`] on one thread, into `named`, taking the chains out
    /// of `frames` (as long as `addresses`, or empty).
    fn name_part(
        &self,
        addresses: &[Svma],
        functions: &FunctionTable<'_>,
        frames: &mut [Vec<Frame>],
        named: &mut [AddressSymbol],
    ) {
        // Demangled names, and the raw ones where they differ.
        let mut names: FxHashMap<&str, dwarf::Names> = FxHashMap::default();
        let mut frames = frames.iter_mut().map(std::mem::take);
        // The names of a large module's functions are spread over megabytes
        // of its string table.
        let named = named.chunks_mut(RELEASE_EVERY);
        for (part, named) in addresses.chunks(RELEASE_EVERY).zip(named) {
            for (&svma, named) in part.iter().zip(named) {
                let function = functions.find(svma.0);
                let symbol_names = function.and_then(|f| f.name.as_deref()).map(|raw| {
                    names
                        .entry(raw)
                        .or_insert_with(|| {
                            let name = demangle(raw, self.full_signatures);
                            let linkage = (name != raw).then(|| Arc::from(raw));
                            (name.into(), linkage)
                        })
                        .clone()
                });
                let (symbol_name, symbol_linkage) = symbol_names.unzip();
                let mut frames = frames.next().unwrap_or_default();
                if self.detail == Detail::Functions && symbol_name.is_some() {
                    frames.clear();
                }
                // The outermost frame is the function the symbol table names, as
                // addr2line and llvm-symbolizer name it: DWARF often knows only
                // its short name (`.cold` parts, functions without a linkage name).
                if let (Some(name), Some(outermost)) = (&symbol_name, frames.last_mut()) {
                    outermost.function = Some(name.clone());
                    outermost.linkage_name = symbol_linkage.clone().flatten();
                }
                // Where no symbol names the code, the debug info may.
                let (name, linkage_name) = match symbol_name {
                    Some(name) => (Some(name), symbol_linkage.flatten()),
                    None => frames.last().map_or((None, None), |f| {
                        (f.function.clone(), f.linkage_name.clone())
                    }),
                };
                let start = self
                    .layout
                    .relative(Svma(function.map_or(svma.0, |f| f.start)));
                let function = (function.is_some() || name.is_some()).then_some(FunctionSymbol {
                    name,
                    linkage_name,
                    start,
                });
                *named = AddressSymbol {
                    svma: Some(svma),
                    relative: Some(self.layout.relative(svma)),
                    function,
                    frames,
                };
            }
            (self.release)();
        }
    }
}
