//! Stack unwinding from user-stack copies (`record --call-graph dwarf`),
//! with the DWARF CFI of the modules on disk (`.eh_frame`, or `.debug_frame`
//! where a file has no `.eh_frame`), through framehop.
//!
//! A module's unwind sections are read once and shared by every process
//! that maps it; each process gets its own list of mappings and rule cache.
//! JIT code is unwound with the unwinding info of its jitdump file, where
//! the JIT wrote some. Code without unwind tables (other JIT code, a module
//! whose file is missing or has changed) is walked by its frame pointers
//! instead.

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use framehop::x86_64::{CacheX86_64, UnwindRegsX86_64, UnwinderX86_64};
use framehop::{ExplicitModuleSectionInfo, FrameAddress, Unwinder};
use gimli::{BaseAddresses, EhFrameHdr, LittleEndian};
use object::{Object, ObjectSection, ObjectSegment};
use profiler_model::{
    Archive, ArchivedSection, ArchivedUnwind, Avma, CallerRegisters, FileOffset, MappedRange,
    Module, ModuleTable, ProcessUnwinder, StackUnwinder, Svma, UserStack,
};

use crate::build_id_cache::open_as_recorded;
use crate::debug_file::find_debug_file;
use crate::image::{self, Image, ObjectFile};
use crate::jitdump::{JitDumps, JitFunction, UnwindInfo};
use crate::symbolizer::SymbolizerOptions;
use crate::vdso::own_vdso;

/// A stack deeper than this is cut: beyond it, a walk is more likely
/// looping through garbage than still finding callers.
const MAX_FRAMES: usize = 1024;

/// Mappings start on page boundaries, segments need not.
const PAGE_SIZE: u64 = 4096;

/// Section bytes, shared by every process that maps the module.
type Data = Arc<[u8]>;

/// Unwinds with the unwind tables of the ELF files on disk, checked against
/// the build-id the recording kept, or those the recording's archive kept.
#[derive(Default)]
pub struct ElfUnwinder {
    options: SymbolizerOptions,
    archive: Arc<Archive>,
    modules: Mutex<HashMap<Module, Slot>>,
    /// The JITs' jitdump files, for the unwinding info they hold.
    jit_dumps: JitDumps,
}

/// A module's unwind data, `None` where it has none usable. A cell per
/// module lets different modules load in parallel, each only once.
type Slot = Arc<OnceLock<Option<Arc<ModuleUnwindData>>>>;

impl ElfUnwinder {
    /// Uses `options.debug_dirs` to find `.debug_frame` for files without
    /// `.eh_frame`, and `options.same_kernel` to unwind through the vdso.
    pub fn new(options: &SymbolizerOptions) -> ElfUnwinder {
        ElfUnwinder::with_archive(options, Arc::default())
    }

    /// Uses the unwind tables `archive` kept for the modules it has them
    /// of, before the files on disk.
    pub fn with_archive(options: &SymbolizerOptions, archive: Arc<Archive>) -> ElfUnwinder {
        ElfUnwinder {
            options: options.clone(),
            archive,
            modules: Mutex::default(),
            jit_dumps: JitDumps::default(),
        }
    }

    fn module_data(&self, module: &Module) -> Option<Arc<ModuleUnwindData>> {
        let cell = {
            let mut modules = self.modules.lock().unwrap_or_else(PoisonError::into_inner);
            Arc::clone(modules.entry(module.clone()).or_default())
        };
        cell.get_or_init(|| {
            let archived = self.archive.module(module).and_then(|m| m.unwind.as_ref());
            match archived {
                Some(tables) => ModuleUnwindData::from_archive(tables),
                None => ModuleUnwindData::load(module, &self.options),
            }
            .map(Arc::new)
        })
        .clone()
    }
}

impl ElfUnwinder {
    /// Gives `unwinder` the JIT functions of process `pid` in `mapping`
    /// whose jitdump came with unwinding info; returns their ranges.
    fn add_jit_functions(
        &self,
        unwinder: &mut UnwinderX86_64<Data>,
        pid: u32,
        mapping: &MappedRange,
    ) -> Vec<Range<u64>> {
        let Ok(Some(dump)) = self.jit_dumps.get(&self.options.mapped_files, pid) else {
            return Vec::new();
        };
        let mut covered = Vec::new();
        for function in dump.functions_in(mapping.start.0, mapping.end.0) {
            let Some(sections) = function
                .unwind
                .as_ref()
                .and_then(|u| jit_sections(function, u))
            else {
                continue;
            };
            // Anonymous memory is stated at its own addresses; framehop
            // wants addresses within 4 GiB of the base.
            unwinder.add_module(framehop::Module::new(
                function.name.to_string(),
                function.start..function.end,
                function.start,
                sections,
            ));
            covered.push(function.start..function.end);
        }
        covered
    }
}

/// The unwind sections of a JIT function, where its jitdump placed them:
/// `.eh_frame` right after its code, then `.eh_frame_hdr`.
fn jit_sections(
    function: &JitFunction,
    unwind: &UnwindInfo,
) -> Option<ExplicitModuleSectionInfo<Data>> {
    let size = unwind.bytes.len() as u64;
    let eh_frame_size = size.checked_sub(unwind.eh_frame_hdr_size)?;
    let eh_frame_end = function.end.checked_add(eh_frame_size)?;
    let hdr_end = eh_frame_end.checked_add(unwind.eh_frame_hdr_size)?;
    let (eh_frame, eh_frame_hdr) = unwind.bytes.split_at(eh_frame_size as usize);
    let sections = ExplicitModuleSectionInfo {
        base_svma: function.start,
        text_svma: Some(function.start..function.end),
        eh_frame_svma: Some(function.end..eh_frame_end),
        eh_frame: (!eh_frame.is_empty()).then(|| Data::from(eh_frame)),
        eh_frame_hdr_svma: Some(eh_frame_end..hdr_end),
        eh_frame_hdr: (!eh_frame_hdr.is_empty()).then(|| Data::from(eh_frame_hdr)),
        ..ExplicitModuleSectionInfo::default()
    };
    sections
        .eh_frame
        .is_some()
        .then(|| checked_search_table(sections))
}

impl fmt::Debug for ElfUnwinder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ElfUnwinder")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl StackUnwinder for ElfUnwinder {
    fn process<'a>(
        &'a self,
        modules: &ModuleTable,
        mappings: &[MappedRange],
    ) -> Box<dyn ProcessUnwinder + 'a> {
        let mut unwinder = UnwinderX86_64::new();
        let mut covered: Vec<Range<u64>> = Vec::new();
        for mapping in mappings {
            // framehop wants disjoint ranges: where a range was reused, the
            // later mapping wins, even one whose tables cannot be read.
            unwinder.remove_module(mapping.start.0);
            covered.retain(|range| range.start != mapping.start.0);
            let module = modules.get(mapping.module);
            if let Some(pid) = module.pid {
                covered.extend(self.add_jit_functions(&mut unwinder, pid, mapping));
                continue;
            }
            let Some(data) = self.module_data(module) else {
                continue;
            };
            let Some(base_avma) = data
                .svma(mapping.offset.0)
                .and_then(|svma| mapping.start.0.checked_sub(svma))
            else {
                continue;
            };
            unwinder.add_module(framehop::Module::new(
                module.path.clone(),
                mapping.start.0..mapping.end.0,
                base_avma,
                data.sections.clone(),
            ));
            covered.push(mapping.start.0..mapping.end.0);
        }
        Box::new(ElfProcessUnwinder {
            unwinder,
            cache: CacheX86_64::new(),
            covered,
        })
    }
}

/// What unwinding needs of one module, read once.
struct ModuleUnwindData {
    /// The unwind sections and the ranges their pointers are relative to.
    /// ELF addresses are stated from 0, so `base_svma` is 0. `.text` bytes
    /// are left out: framehop reads code only for mach-O.
    sections: ExplicitModuleSectionInfo<Data>,
    /// The executable PT_LOAD segments, to place a mapping's file offset.
    segments: Vec<LoadSegment>,
}

/// An executable segment: `file_size` bytes at `file_offset` appear at `svma`.
#[derive(Clone, Copy, Debug)]
struct LoadSegment {
    file_offset: u64,
    file_size: u64,
    svma: u64,
}

impl ModuleUnwindData {
    /// The unwind data of `module`, unless it has no file (JIT code, or the
    /// vdso of another kernel), cannot be read, has changed since the
    /// recording, or has no unwind section.
    fn load(module: &Module, options: &SymbolizerOptions) -> Option<ModuleUnwindData> {
        let bytes = if module.path == "[vdso]" && options.same_kernel {
            image::in_memory(own_vdso()?)
        } else if module.has_file() && module.pid.is_none() {
            let build_id = |bytes: &image::Bytes| Image::parse(bytes).ok()?.build_id();
            open_as_recorded(module, image::open, build_id).ok()?
        } else {
            return None;
        };
        let image = Image::parse(&bytes).ok()?;
        if let (Some(recorded), Some(found)) = (&module.build_id, image.build_id())
            && *recorded != found
        {
            return None;
        }
        let object = &image.object;
        let eh_frame = section_data(object, ".eh_frame");
        // framehop reads `.debug_frame` only where there is no `.eh_frame`,
        // so only then is it worth looking for, in a debug file if need be.
        let debug_frame = match eh_frame {
            Some(_) => None,
            None => section_data(object, ".debug_frame").or_else(|| {
                let debug = find_debug_file(Path::new(&module.path), &image, &options.debug_dirs)?;
                section_data(&object::File::parse(&*debug.bytes).ok()?, ".debug_frame")
            }),
        };
        if eh_frame.is_none() && debug_frame.is_none() {
            return None;
        }
        let segments = object
            .segments()
            .filter(|s| s.permissions().executable())
            .map(|s| {
                let (file_offset, file_size) = s.file_range();
                LoadSegment {
                    file_offset,
                    file_size,
                    svma: s.address(),
                }
            })
            .collect();
        let sections = ExplicitModuleSectionInfo {
            base_svma: 0,
            text_svma: section_range(object, ".text"),
            got_svma: section_range(object, ".got"),
            eh_frame_svma: section_range(object, ".eh_frame"),
            eh_frame,
            eh_frame_hdr_svma: section_range(object, ".eh_frame_hdr"),
            eh_frame_hdr: section_data(object, ".eh_frame_hdr"),
            debug_frame,
            ..ExplicitModuleSectionInfo::default()
        };
        Some(ModuleUnwindData {
            sections: checked_search_table(sections),
            segments,
        })
    }

    /// The unwind data as an archive keeps it.
    fn to_archive(&self) -> ArchivedUnwind {
        let sections = &self.sections;
        let named = [
            (".text", &sections.text_svma, None),
            (".got", &sections.got_svma, None),
            (
                ".eh_frame",
                &sections.eh_frame_svma,
                sections.eh_frame.as_ref(),
            ),
            (
                ".eh_frame_hdr",
                &sections.eh_frame_hdr_svma,
                sections.eh_frame_hdr.as_ref(),
            ),
            (".debug_frame", &None, sections.debug_frame.as_ref()),
        ];
        ArchivedUnwind {
            sections: (named.into_iter())
                .filter(|(_, range, bytes)| range.is_some() || bytes.is_some())
                .map(|(name, range, bytes)| {
                    let range = range.clone().unwrap_or(0..0);
                    ArchivedSection {
                        name: name.to_owned(),
                        start: Svma(range.start),
                        end: Svma(range.end),
                        bytes: bytes.map_or_else(Vec::new, |b| b.to_vec()),
                    }
                })
                .collect(),
            segments: (self.segments.iter())
                .map(|s| (FileOffset(s.file_offset), s.file_size, Svma(s.svma)))
                .collect(),
        }
    }

    /// The unwind data an archive kept.
    fn from_archive(tables: &ArchivedUnwind) -> Option<ModuleUnwindData> {
        let section = |name: &str| tables.sections.iter().find(|s| s.name == name);
        let range = |name| section(name).map(|s| s.start.0..s.end.0);
        let data = |name| {
            (section(name))
                .filter(|s| !s.bytes.is_empty())
                .map(|s| Data::from(&s.bytes[..]))
        };
        let sections = ExplicitModuleSectionInfo {
            base_svma: 0,
            text_svma: range(".text"),
            got_svma: range(".got"),
            eh_frame_svma: range(".eh_frame"),
            eh_frame: data(".eh_frame"),
            eh_frame_hdr_svma: range(".eh_frame_hdr"),
            eh_frame_hdr: data(".eh_frame_hdr"),
            debug_frame: data(".debug_frame"),
            ..ExplicitModuleSectionInfo::default()
        };
        if sections.eh_frame.is_none() && sections.debug_frame.is_none() {
            return None;
        }
        let segments = (tables.segments.iter())
            .map(|&(offset, size, svma)| LoadSegment {
                file_offset: offset.0,
                file_size: size,
                svma: svma.0,
            })
            .collect();
        Some(ModuleUnwindData {
            sections: checked_search_table(sections),
            segments,
        })
    }

    /// The stated address of the byte at file `offset`, the start of an
    /// executable mapping: the offset of the executable segment's first
    /// page maps to the stated address of that page.
    fn svma(&self, offset: u64) -> Option<u64> {
        let segment = self.segments.iter().find(|s| {
            (s.file_offset & !(PAGE_SIZE - 1)..s.file_offset.saturating_add(s.file_size))
                .contains(&offset)
        })?;
        // The segment may be stated at the very end of the address space.
        match offset.checked_sub(segment.file_offset) {
            Some(after) => segment.svma.checked_add(after),
            None => segment.svma.checked_sub(segment.file_offset - offset),
        }
    }
}

/// The unwind tables of `module`'s file, for an archive.
pub(crate) fn unwind_tables(
    module: &Module,
    options: &SymbolizerOptions,
) -> Option<ArchivedUnwind> {
    Some(ModuleUnwindData::load(module, options)?.to_archive())
}

/// `sections` without their `.eh_frame_hdr` if its search table points
/// before `.eh_frame` or cannot be read: gimli subtracts the two unchecked
/// (an overflow panic in debug builds, a wrapped offset in release). The
/// code is then unwound without it, by frame pointers. x86-64 only, as the
/// unwinder.
fn checked_search_table(
    mut sections: ExplicitModuleSectionInfo<Data>,
) -> ExplicitModuleSectionInfo<Data> {
    let start = |range: &Option<Range<u64>>| range.as_ref().map_or(0, |r| r.start);
    let bases = BaseAddresses::default()
        .set_eh_frame(start(&sections.eh_frame_svma))
        .set_eh_frame_hdr(start(&sections.eh_frame_hdr_svma))
        .set_text(start(&sections.text_svma))
        .set_got(start(&sections.got_svma));
    let fits = |data: &[u8]| -> Option<()> {
        let hdr = EhFrameHdr::new(data, LittleEndian).parse(&bases, 8).ok()?;
        let (Some(table), Ok(frames)) = (hdr.table(), hdr.eh_frame_ptr().direct()) else {
            return Some(());
        };
        let mut entries = table.iter(&bases);
        while let Some((_, fde)) = entries.next().ok()? {
            if fde.direct().is_ok_and(|fde| fde < frames) {
                return None;
            }
        }
        Some(())
    };
    if sections
        .eh_frame_hdr
        .as_deref()
        .is_some_and(|hdr| fits(hdr).is_none())
    {
        sections.eh_frame_hdr = None;
    }
    sections
}

fn section_range(object: &ObjectFile<'_>, name: &str) -> Option<Range<u64>> {
    let section = object.section_by_name(name)?;
    let start = section.address();
    Some(start..start.saturating_add(section.size()))
}

fn section_data(object: &ObjectFile<'_>, name: &str) -> Option<Data> {
    let compressed = object.section_by_name(name)?.compressed_data().ok()?;
    let claimed = compressed.uncompressed_size;
    if compressed.format != object::CompressionFormat::None
        && crate::dwarf::inflation_refused(name, compressed.data.len(), claimed).is_some()
    {
        return None;
    }
    let data = compressed.decompress().ok()?;
    (!data.is_empty()).then(|| Data::from(&*data))
}

/// One process's mappings, as framehop modules, and its rule cache.
struct ElfProcessUnwinder {
    unwinder: UnwinderX86_64<Data>,
    cache: CacheX86_64,
    /// The address ranges of the modules given to `unwinder`: those with
    /// unwind tables.
    covered: Vec<Range<u64>>,
}

impl ProcessUnwinder for ElfProcessUnwinder {
    fn unwind(&mut self, stack: &UserStack, frames: &mut Vec<Avma>) -> bool {
        let regs = UnwindRegsX86_64::new(stack.ip.0, stack.sp.0, stack.bp.0);
        let mut read_stack = |address| stack.read_u64(address).ok_or(());
        let mut walk =
            self.unwinder
                .iter_frames(stack.ip.0, regs, &mut self.cache, &mut read_stack);
        for _ in 0..MAX_FRAMES {
            match walk.next() {
                // The instruction pointer, then raw return addresses: the
                // reports step back into the call instruction themselves.
                Ok(Some(frame)) => frames.push(Avma(frame.address())),
                Ok(None) => return true,
                Err(_) => return false,
            }
        }
        matches!(walk.next(), Ok(None))
    }

    fn caller(&mut self, stack: &UserStack) -> Option<CallerRegisters> {
        // Elsewhere framehop would guess by frame pointers, which is no
        // better than the kernel's own chain.
        if !self.covered.iter().any(|range| range.contains(&stack.ip.0)) {
            return None;
        }
        let mut regs = UnwindRegsX86_64::new(stack.ip.0, stack.sp.0, stack.bp.0);
        let mut read_stack = |address| stack.read_u64(address).ok_or(());
        let return_address = self
            .unwinder
            .unwind_frame(
                FrameAddress::from_instruction_pointer(stack.ip.0),
                &mut regs,
                &mut self.cache,
                &mut read_stack,
            )
            .ok()??;
        Some(CallerRegisters {
            return_address: Avma(return_address),
            sp: Avma(regs.sp()),
            bp: Avma(regs.bp()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::ObjectSymbol;
    use profiler_model::{BuildId, FileOffset};

    #[inline(never)]
    fn a_function_to_unwind_from(x: u64) -> u64 {
        std::hint::black_box(x).wrapping_add(7)
    }

    /// The mapping of this test binary that holds `address`:
    /// (start, end, file offset, path).
    fn own_mapping(address: u64) -> (u64, u64, u64, String) {
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        for line in maps.lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (start, end) = fields[0].split_once('-').unwrap();
            let start = u64::from_str_radix(start, 16).unwrap();
            let end = u64::from_str_radix(end, 16).unwrap();
            if (start..end).contains(&address) {
                let offset = u64::from_str_radix(fields[2], 16).unwrap();
                return (start, end, offset, fields[5].to_owned());
            }
        }
        panic!("{address:#x} is not mapped");
    }

    /// A module table holding this test binary, and its executable
    /// mapping as the recorder would have seen it.
    fn this_binary(build_id: Option<BuildId>) -> (ModuleTable, MappedRange, u64) {
        let function = a_function_to_unwind_from as *const () as u64;
        std::hint::black_box(a_function_to_unwind_from(1));
        let (start, end, offset, path) = own_mapping(function);
        let mut modules = ModuleTable::default();
        let module = modules.intern(&path, build_id.as_ref(), None);
        let mapping = MappedRange {
            start: Avma(start),
            end: Avma(end),
            offset: FileOffset(offset),
            module,
        };
        (modules, mapping, function)
    }

    /// A stack copy at an arbitrary address, from 64-bit words.
    fn stack(ip: u64, bp_index: usize, words: &[u64]) -> UserStack {
        let sp = 0x7ffd_0000_0000;
        UserStack {
            ip: Avma(ip),
            sp: Avma(sp),
            bp: Avma(sp + 8 * bp_index as u64),
            bytes: words.iter().flat_map(|w| w.to_le_bytes()).collect(),
        }
    }

    #[test]
    fn the_unwind_data_and_load_bias_of_this_very_binary() {
        let (modules, mapping, function) = this_binary(None);
        let module = modules.get(mapping.module);
        let data = ModuleUnwindData::load(module, &SymbolizerOptions::default()).unwrap();
        assert!(
            data.sections
                .eh_frame
                .as_ref()
                .is_some_and(|d| d.len() > 100)
        );
        assert!(data.sections.eh_frame_hdr.is_some());
        assert!(data.sections.eh_frame_svma.is_some());

        // The load bias, from the mapping alone, must agree with where the
        // symbol table states the function.
        let bias = mapping.start.0 - data.svma(mapping.offset.0).unwrap();
        let bytes = image::open(Path::new(&module.path)).unwrap();
        let image = Image::parse(&bytes).unwrap();
        let stated = image
            .object
            .symbols()
            .find(|s| {
                s.name()
                    .is_ok_and(|n| n.contains("a_function_to_unwind_from"))
            })
            .expect("the test binary has a symbol table")
            .address();
        assert_eq!(function - bias, stated);
    }

    #[test]
    fn a_page_aligned_offset_before_the_segment_maps_to_its_page() {
        let data = ModuleUnwindData {
            sections: ExplicitModuleSectionInfo::default(),
            // As lld lays out code: offset and address agree modulo a page.
            segments: vec![LoadSegment {
                file_offset: 0x12340,
                file_size: 0x5000,
                svma: 0x13340,
            }],
        };
        assert_eq!(data.svma(0x12000), Some(0x13000));
        assert_eq!(data.svma(0x14000), Some(0x15000));
        assert_eq!(data.svma(0x11000), None);
        assert_eq!(data.svma(0x17340), None);
    }

    /// At a function's first instruction, its CFI says the return address
    /// is at sp; the frame-pointer fallback would read it at bp + 8
    /// instead. The caller is code without a module (JIT), walked by frame
    /// pointers to a zero frame pointer, the end of the stack.
    #[test]
    fn the_cfi_of_this_binary_finds_a_caller_that_frame_pointers_miss() {
        let (jit_1, jit_2) = (0x10_0010, 0x10_0020);
        let words = [jit_1, 0, 0, jit_2];
        let (modules, mapping, function) = this_binary(None);
        let unwinder = ElfUnwinder::default();
        let mut process = unwinder.process(&modules, &[mapping]);
        let mut frames = Vec::new();
        assert!(process.unwind(&stack(function, 2, &words), &mut frames));
        assert_eq!(frames, [Avma(function), Avma(jit_1), Avma(jit_2)]);

        // A stack copy cut short is not a clean end.
        frames.clear();
        assert!(!process.unwind(&stack(function, 2, &words[..3]), &mut frames));
        assert_eq!(frames, [Avma(function), Avma(jit_1)]);

        // A file changed since the recording: its tables are not used.
        let (modules, mapping, _) = this_binary(Some(BuildId(vec![0; 20])));
        let mut process = unwinder.process(&modules, &[mapping]);
        frames.clear();
        assert!(process.unwind(&stack(function, 2, &words), &mut frames));
        assert_eq!(frames, [Avma(function), Avma(jit_2)]);
    }

    /// One step from a function's first instruction (a prologue, where
    /// the kernel's frame-pointer walk skips the caller): the return
    /// address at sp, and the caller's bp, still in the register. Code
    /// without tables gets no answer rather than a guess.
    #[test]
    fn the_caller_of_a_function_entered_this_instant_is_at_sp() {
        let (modules, mapping, function) = this_binary(None);
        let unwinder = ElfUnwinder::default();
        let mut process = unwinder.process(&modules, &[mapping]);
        let stack = stack(function, 2, &[0x10_0010, 0, 0, 0x10_0020]);
        let caller = process.caller(&stack).unwrap();
        assert_eq!(caller.return_address, Avma(0x10_0010));
        assert_eq!(caller.sp, Avma(stack.sp.0 + 8));
        assert_eq!(caller.bp, stack.bp);

        let jit = UserStack {
            ip: Avma(0x10_0000),
            ..stack.clone()
        };
        assert_eq!(process.caller(&jit), None);
        // A copy too short to hold the return address.
        let short = UserStack {
            bytes: Vec::new(),
            ..stack
        };
        assert_eq!(process.caller(&short), None);
    }

    #[test]
    fn a_search_table_that_points_before_eh_frame_is_left_out() {
        let (modules, mapping, function) = this_binary(None);
        let original = modules.get(mapping.module);
        let mut bytes = std::fs::read(&original.path).unwrap();
        let (offset, size) = {
            let file = object::File::parse(&*bytes).unwrap();
            let hdr = file.section_by_name(".eh_frame_hdr").unwrap();
            hdr.file_range().unwrap()
        };
        // After the version, three encodings, `.eh_frame`'s address and
        // the count: pairs of 4-byte addresses relative to the header, each
        // FDE's made 16 bytes before the header, which precedes `.eh_frame`.
        let table = (offset + 12) as usize;
        for entry in (table..(offset + size) as usize).step_by(8) {
            bytes[entry + 4..entry + 8].copy_from_slice(&(-16i32).to_le_bytes());
        }
        let crafted = std::env::temp_dir().join(format!("unwind-hdr-{}", std::process::id()));
        std::fs::write(&crafted, &bytes).unwrap();
        let mut table = ModuleTable::default();
        let module = table.intern(&crafted.to_string_lossy(), None, None);
        let options = SymbolizerOptions::default();
        let data = ModuleUnwindData::load(table.get(module), &options).unwrap();
        assert!(data.sections.eh_frame_hdr.is_none());
        assert!(data.sections.eh_frame.is_some());
        let kept = ModuleUnwindData::load(original, &options).unwrap();
        assert!(kept.sections.eh_frame_hdr.is_some());

        // Unwinding goes on by frame pointers.
        let (jit_1, jit_2) = (0x10_0010, 0x10_0020);
        let unwinder = ElfUnwinder::default();
        let mut process = unwinder.process(&table, &[MappedRange { module, ..mapping }]);
        let mut frames = Vec::new();
        process.unwind(&stack(function, 2, &[jit_1, 0, 0, jit_2]), &mut frames);
        assert_eq!(frames[0], Avma(function));
        let _ = std::fs::remove_file(&crafted);
    }

    #[test]
    fn an_endless_frame_pointer_chain_stops_at_the_frame_limit() {
        // Each frame: the next frame's address, then a return address.
        let sp = 0x7ffd_0000_0000u64;
        let words: Vec<u64> = (0..2 * MAX_FRAMES as u64)
            .flat_map(|i| [sp + 16 * (i + 1), 0x10_0000 + i])
            .collect();
        let unwinder = ElfUnwinder::default();
        let modules = ModuleTable::default();
        let mut process = unwinder.process(&modules, &[]);
        let mut frames = Vec::new();
        assert!(!process.unwind(&stack(0x10_0000, 0, &words), &mut frames));
        assert_eq!(frames.len(), MAX_FRAMES);
    }
}
