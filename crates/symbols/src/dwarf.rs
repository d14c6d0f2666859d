//! Inline chains and source lines from DWARF, through addr2line.

use rustc_hash::FxHashMap;
use std::ops::{Deref, Range};
use std::sync::Arc;

use gimli::{EndianSlice, RunTimeEndian};
use memmap2::MmapMut;
use object::{CompressionFormat, Object, ObjectSection};
use profiler_model::Frame;

use crate::demangle::demangle;
use crate::image::Image;

pub(crate) type Slice<'a> = EndianSlice<'a, RunTimeEndian>;
pub(crate) type Sections<'data> = gimli::DwarfSections<SectionData<'data>>;
pub(crate) type Dwarf<'a> = gimli::Dwarf<Slice<'a>>;

/// A DWARF section's bytes: where the file is mapped, or decompressed.
pub(crate) enum SectionData<'data> {
    InFile(&'data [u8]),
    /// zlib's output, in an anonymous map of its own: memory given back
    /// when dropped. From the heap, a debug file's megabytes would stay
    /// with the allocator, which also takes the size freed as the least it
    /// maps afresh, keeping every smaller block that follows (a report
    /// that read libc's debug file held 6 MB more to its end).
    Inflated(MmapMut),
    /// Other compressions' output.
    Decompressed(Vec<u8>),
}

impl Deref for SectionData<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            SectionData::InFile(bytes) => bytes,
            SectionData::Inflated(map) => map,
            SectionData::Decompressed(bytes) => bytes,
        }
    }
}

/// A compressed section may claim this many times its compressed size
/// once decompressed, and a mebibyte more: DWARF compresses some 3 to 10
/// times, and a section of zeros, a bomb, a thousand.
const MAX_INFLATION: u64 = 64;

/// Whether a section of `compressed` bytes may decompress to `claimed`;
/// if not, why, in words.
pub(crate) fn inflation_refused(name: &str, compressed: usize, claimed: u64) -> Option<String> {
    let most = (compressed as u64)
        .saturating_mul(MAX_INFLATION)
        .saturating_add(1 << 20);
    (claimed > most).then(|| {
        format!(
            "its {name} claims {claimed} bytes once decompressed, more than {MAX_INFLATION} times \
             its {compressed}: it was not read"
        )
    })
}

/// The DWARF sections of `image` that name functions and lines, decompressed
/// (zlib or zstd, SHF_COMPRESSED or `.zdebug_*`); `None` when it has no
/// debug info. Location lists, macros and type units are left unread: they
/// are large, often compressed, and say nothing about where code is. A
/// section that cannot be read or decompressed is empty; one that claims
/// to decompress to more than its size can justify is too, and `notes`
/// says so.
pub(crate) fn load_sections<'data>(
    image: &Image<'data>,
    notes: &mut Vec<String>,
) -> Option<Sections<'data>> {
    use gimli::SectionId::*;
    let object = &image.object;
    object.section_by_name(".debug_info")?;
    gimli::DwarfSections::load(|id| -> Result<_, gimli::Error> {
        if matches!(
            id,
            DebugLoc | DebugLocLists | DebugMacinfo | DebugMacro | DebugTypes
        ) {
            return Ok(SectionData::InFile(&[]));
        }
        let Some(compressed) =
            (object.section_by_name(id.name())).and_then(|section| section.compressed_data().ok())
        else {
            return Ok(SectionData::InFile(&[]));
        };
        let claimed = compressed.uncompressed_size;
        if compressed.format != CompressionFormat::None
            && let Some(refused) = inflation_refused(id.name(), compressed.data.len(), claimed)
        {
            notes.push(refused);
            return Ok(SectionData::InFile(&[]));
        }
        Ok(match compressed.format {
            CompressionFormat::None => SectionData::InFile(compressed.data),
            CompressionFormat::Zlib if claimed == 0 => SectionData::InFile(&[]),
            CompressionFormat::Zlib => inflate(compressed.data, claimed)
                .map_or(SectionData::InFile(&[]), SectionData::Inflated),
            _ => compressed
                .decompress()
                .map_or(SectionData::InFile(&[]), |d| {
                    SectionData::Decompressed(d.into_owned())
                }),
        })
    })
    .ok()
}

/// The zlib stream `data` inflated, where it inflates to `size` bytes (not
/// zero).
fn inflate(data: &[u8], size: u64) -> Option<MmapMut> {
    let mut out = MmapMut::map_anon(usize::try_from(size).ok()?).ok()?;
    let mut zlib = flate2::Decompress::new(true);
    let status = zlib.decompress(data, &mut out, flate2::FlushDecompress::Finish);
    let whole = matches!(status, Ok(flate2::Status::StreamEnd)) && zlib.total_out() == size;
    whole.then_some(out)
}

/// The DWARF of `sections`, to be shared by the threads that read it: every
/// unit's abbreviations parsed once for all of them (a debug build of this
/// profiler holds 15 MB of them, which each thread parsed and kept again).
pub(crate) fn shared<'a>(sections: &'a Sections<'_>, endian: RunTimeEndian) -> Arc<Dwarf<'a>> {
    let mut dwarf = sections.borrow(|section| EndianSlice::new(section, endian));
    dwarf.populate_abbreviations_cache(gimli::AbbreviationsCacheStrategy::All);
    Arc::new(dwarf)
}

pub(crate) fn endian(image: &Image<'_>) -> RunTimeEndian {
    if image.object.is_little_endian() {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    }
}

/// A function's demangled name, and its raw (linkage) name where that
/// differs.
pub(crate) type Names = (Arc<str>, Option<Arc<str>>);

/// Demangled names, and the raw names where they differ, by where the raw
/// name lies in the debug info: the same functions recur across addresses,
/// and demangling dominates otherwise.
pub(crate) struct FunctionNames {
    full_signatures: bool,
    names: FxHashMap<(usize, usize), Names>,
}

impl FunctionNames {
    pub(crate) fn new(full_signatures: bool) -> FunctionNames {
        FunctionNames {
            full_signatures,
            names: FxHashMap::default(),
        }
    }
}

/// Frame lookups over one context, with the names and paths already made
/// kept for reuse.
pub(crate) struct FrameFinder<'a, 'n> {
    context: addr2line::Context<Slice<'a>>,
    names: &'n mut FunctionNames,
    /// Where names lie that are not kept in `names`: memory that outlives
    /// this finder no longer.
    transient: Range<usize>,
    /// Paths, by where addr2line keeps them.
    files: FxHashMap<(usize, usize), Arc<str>>,
}

impl<'a, 'n> FrameFinder<'a, 'n> {
    /// A finder over `dwarf`; each thread that symbolizes needs its own.
    /// Names read from `transient` are not kept in `names`.
    pub(crate) fn new(
        dwarf: Arc<Dwarf<'a>>,
        names: &'n mut FunctionNames,
        transient: Range<usize>,
    ) -> Option<Self> {
        let context = addr2line::Context::from_arc_dwarf(dwarf).ok()?;
        Some(FrameFinder {
            context,
            names,
            transient,
            files: FxHashMap::default(),
        })
    }

    /// The inline chain at `address`, innermost first, each frame with its
    /// function (demangled) and source line (for outer frames, the line of
    /// the call). Empty when the debug info does not cover the address.
    pub(crate) fn frames(&mut self, address: u64) -> Vec<Frame> {
        let mut chain = Vec::new();
        // No range (its end exclusive) covers the last address, and
        // addr2line's lookup adds one to the address.
        if address == u64::MAX {
            return chain;
        }
        let Ok(mut frames) = self.context.find_frames(address).skip_all_loads() else {
            return chain;
        };
        while let Ok(Some(frame)) = frames.next() {
            let names = frame.function.and_then(|f| {
                let raw = f.name.slice();
                let key = (raw.as_ptr() as usize, raw.len());
                let full = self.names.full_signatures;
                match self.names.names.get(&key) {
                    Some(names) => Some(names.clone()),
                    None => {
                        let raw = f.raw_name().ok()?;
                        let name: Arc<str> = demangle(&raw, full).into();
                        let linkage = (*name != *raw).then(|| Arc::from(&*raw));
                        if !self.transient.contains(&key.0) {
                            (self.names.names).insert(key, (name.clone(), linkage.clone()));
                        }
                        Some((name, linkage))
                    }
                }
            });
            let (function, linkage_name) = names.unzip();
            let (file, line) = match frame.location {
                Some(location) => (
                    location.file.map(|f| intern(&mut self.files, f)),
                    location.line,
                ),
                None => (None, None),
            };
            chain.push(Frame {
                function,
                linkage_name: linkage_name.flatten(),
                file,
                line,
            });
        }
        if chain.is_empty()
            && let Ok(Some(location)) = self.context.find_location(address)
        {
            // Line tables without function entries (assembly): a line, no name.
            let file = location.file.map(|f| intern(&mut self.files, f));
            chain.push(Frame {
                function: None,
                linkage_name: None,
                file,
                line: location.line,
            });
        }
        // Most chains are one frame long, and there is one per address.
        chain.shrink_to_fit();
        chain
    }
}

fn intern(cache: &mut FxHashMap<(usize, usize), Arc<str>>, text: &str) -> Arc<str> {
    cache
        .entry((text.as_ptr() as usize, text.len()))
        .or_insert_with(|| text.into())
        .clone()
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use object::{Object, ObjectSection};
    use profiler_model::{Detail, Svma};

    use crate::dwarf_units::tests::build;
    use crate::elf_module::{ElfModule, ModuleFiles, Naming};

    #[test]
    fn compressed_debug_info_names_code_as_the_plain_one_does() {
        let dir = std::env::temp_dir().join(format!("dwarf-compressed-{}", std::process::id()));
        let Some(plain) = build(&dir, &[]) else {
            return;
        };
        let naming = Naming {
            full_signatures: false,
            threads: 2,
        };
        let names = |path: &std::path::Path| {
            let files = ModuleFiles::open(path, &[]).unwrap();
            let module = ElfModule::parse(&files).unwrap();
            let text = module.image.object.section_by_name(".text").unwrap();
            let addresses: Vec<Svma> = (text.address()..text.address() + text.size())
                .map(Svma)
                .collect();
            module.resolve(&addresses, Detail::Frames, naming)
        };
        let expected = names(&plain);
        let inlined = expected.iter().filter(|a| a.frames.len() >= 2).count();
        assert!(inlined > 10, "{inlined} addresses in inlined code");
        for format in ["zlib", "zstd"] {
            let compressed = dir.join(format);
            let made = Command::new("objcopy")
                .arg(format!("--compress-debug-sections={format}"))
                .args([&plain, &compressed])
                .status();
            if !made.is_ok_and(|status| status.success()) {
                profiler_testing::skip(format_args!("objcopy could not compress with {format}"));
                continue;
            }
            let files = ModuleFiles::open(&compressed, &[]).unwrap();
            let image = ElfModule::parse(&files).unwrap().image;
            let info = image.object.section_by_name(".debug_info").unwrap();
            assert_ne!(
                info.compressed_data().unwrap().format,
                object::CompressionFormat::None
            );
            assert_eq!(names(&compressed), expected, "{format}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
