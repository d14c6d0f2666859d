//! A module's DWARF read a few compilation units at a time. An index of
//! where each unit lies and which addresses it covers is read once; then
//! the units that cover sampled addresses are read in groups, each by
//! addr2line over `.debug_info` cut down to the group, and dropped once
//! their addresses are named. Memory holds one group per thread, not the
//! whole debug info's parse, and the file pages a group read are handed
//! back as the reading moves on.
//!
//! A group holds every unit that could answer for each of its addresses,
//! with `.debug_aranges` cut down to match, so addr2line finds in the group
//! what it would find in the whole file: the same units, tried in the same
//! order. Where units refer into each other (`DW_FORM_ref_addr`: Rust's
//! generics inlined across codegen units, LTO, dwz), a group also holds
//! every unit its functions' origins and specifications lead to, each at
//! its own offset in a copy of `.debug_info` where the units left out are
//! stand-ins that addr2line passes over. A group none of whose units refers
//! that way is read in place, as where no unit does.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use gimli::{EndianSlice, Reader, RunTimeEndian, Section};
use memmap2::MmapMut;
use profiler_model::{Frame, Svma};
use rustc_hash::FxHashSet;

use crate::dwarf::{Dwarf, FrameFinder, FunctionNames, Sections};
use crate::dwarf_abbrev::{may_refer_across, tables_referring_across};
use crate::dwarf_roots::{bare_unit, line_ranges, root_abbreviations, root_ranges, unit_bounds};
use crate::threads::on_threads;

/// The file pages read are handed back each time this many bytes of
/// `.debug_info` have been read past. A unit's names lie all over
/// `.debug_str` (33 MB on the debug build), where each one read maps the
/// 64 kB around it: at 256 kB, a report of the debug build peaked with
/// 19 MB of its pages mapped, and 3 MB more memory in all than at 128 kB,
/// which takes no measurably longer.
const RELEASE_EVERY: usize = 128 << 10;

/// Where a module's compilation units lie, and which of them cover the
/// addresses asked about.
pub(crate) struct UnitIndex {
    /// Each unit's bytes in `.debug_info`, header included, in file order.
    units: Vec<Range<usize>>,
    /// The addresses in groups of the units that cover them.
    groups: Vec<Group>,
    /// `.debug_aranges`' sets, as (unit offset, bytes of the set).
    aranges: Vec<(usize, Range<usize>)>,
    /// Where units refer into others: for each unit, the units (itself
    /// among them) its entries' origins and specifications lie in, read
    /// when first needed. Empty where no unit refers into another.
    refs: Vec<OnceLock<Box<[usize]>>>,
    /// Where each table of abbreviations starts, and whether its entries
    /// may refer into other units (empty with `refs`).
    tables: Vec<(usize, bool)>,
}

/// Addresses to name from one run of units.
struct Group {
    units: Range<usize>,
    /// Indices into the addresses asked about.
    addresses: Vec<usize>,
}

impl UnitIndex {
    /// The index of `dwarf`'s units for `addresses`, read on at most
    /// `threads` threads; `None` where the units cannot be read as
    /// addr2line reads them (it then fails the same way over the whole
    /// file), or are too many bytes to leave some out. `release` hands back
    /// the file pages read so far; `read_info` reads bytes of `.debug_info`
    /// at an offset without mapping its pages (see [`unit_bounds`]).
    pub(crate) fn new(
        dwarf: &Dwarf<'_>,
        addresses: &[Svma],
        threads: usize,
        release: &(dyn Fn() + Sync),
        read_info: &dyn Fn(usize, &mut [u8]) -> Option<()>,
    ) -> Option<UnitIndex> {
        let tables = tables_referring_across(dwarf.debug_abbrev.reader().slice())?;
        let across = tables.iter().any(|(_, refers)| *refers);
        // A stand-in for units left out of a group is one 32-bit unit.
        if across && dwarf.debug_info.reader().len() > STAND_IN_MAX {
            return None;
        }
        let mut aranges = Vec::new();
        let mut headers = dwarf.debug_aranges.headers();
        while let Some(header) = headers.next().ok()? {
            let at = header.offset().0;
            let size = usize::from(header.encoding().format.initial_length_size());
            let end = at.checked_add(size)?.checked_add(header.length())?;
            aranges.push((header.debug_info_offset().0, at..end));
        }
        aranges.sort_unstable_by_key(|(info, _)| *info);
        let units = unit_bounds(*dwarf.debug_info.reader(), read_info)?;
        let mut order: Vec<usize> = (0..addresses.len()).collect();
        order.sort_unstable_by_key(|&i| addresses[i]);
        let sorted: Vec<u64> = order.iter().map(|&i| addresses[i].0).collect();
        let (mut spans, arangeable) = unit_ranges(dwarf, &units, &sorted, threads, release)?;
        for (info, set) in &aranges {
            let Ok(id) = units.binary_search_by_key(info, |unit| unit.start) else {
                continue;
            };
            if !arangeable[id] {
                continue;
            }
            let offset = gimli::DebugArangesOffset(set.start);
            let Ok(header) = dwarf.debug_aranges.header(offset) else {
                continue;
            };
            let mut entries = header.entries();
            let mut ranges = Vec::new();
            while let Some(entry) = entries.next().transpose() {
                if let Ok(entry) = entry {
                    ranges.push((entry.range().begin, entry.range().end));
                }
            }
            spans.cover(&sorted, &mut ranges, id);
        }
        let (refs, tables) = match across {
            true => (units.iter().map(|_| OnceLock::new()).collect(), tables),
            false => (Vec::new(), Vec::new()),
        };
        Some(UnitIndex {
            units,
            groups: groups(spans, &order),
            aranges,
            refs,
            tables,
        })
    }

    /// The inline chain of each of `addresses` (those the index was made
    /// for), read on at most `threads` threads, a group of units at a time.
    pub(crate) fn frames(
        &self,
        sections: &Sections<'_>,
        endian: RunTimeEndian,
        addresses: &[Svma],
        threads: usize,
        full_signatures: bool,
        release: &(dyn Fn() + Sync),
    ) -> Vec<Vec<Frame>> {
        let groups = &self.groups;
        let next = AtomicUsize::new(0);
        let pages = Pages::new(release);
        let threads = threads.min(groups.len()).max(1);
        let found = on_threads(0..threads, |_| {
            let mut names = FunctionNames::new(full_signatures);
            let mut found = Vec::new();
            while let Some(group) = groups.get(next.fetch_add(1, Ordering::Relaxed)) {
                let bytes =
                    self.read_group(sections, endian, group, addresses, &mut names, &mut found);
                pages.read(bytes);
            }
            found
        });
        release();
        let mut frames = vec![Vec::new(); addresses.len()];
        for (index, chain) in found.into_iter().flatten() {
            frames[index] = chain;
        }
        frames
    }

    /// Names the addresses of `group` into `found`; returns how many bytes
    /// of `.debug_info` it read.
    fn read_group(
        &self,
        sections: &Sections<'_>,
        endian: RunTimeEndian,
        group: &Group,
        addresses: &[Svma],
        names: &mut FunctionNames,
        found: &mut Vec<(usize, Vec<Frame>)>,
    ) -> usize {
        let mut dwarf = sections.borrow(|section| EndianSlice::new(section, endian));
        let whole_info = dwarf.debug_info.reader().slice();
        let sets = dwarf.debug_aranges.reader().slice();
        let masked;
        let refers = |unit| !self.unit_refs(&dwarf, unit).is_empty();
        let (info, units, base): (&[u8], Vec<usize>, usize) =
            if self.refs.is_empty() || !group.units.clone().any(refers) {
                let span = self.units[group.units.start].start..self.units[group.units.end - 1].end;
                (
                    &whole_info[span.clone()],
                    group.units.clone().collect(),
                    span.start,
                )
            } else {
                let units = self.closure(&dwarf, group.units.clone());
                masked = self.masked(whole_info, &units, endian);
                match &masked {
                    Some(masked) => (&masked[..], units, 0),
                    None => (&[][..], Vec::new(), 0),
                }
            };
        let aranges = self.aranges(sets, endian, &units, base);
        dwarf.debug_info = EndianSlice::new(info, endian).into();
        dwarf.debug_aranges = EndianSlice::new(&aranges, endian).into();
        // Names that lie in a copy of the units are not kept past the group.
        let transient = match self.refs.is_empty() {
            true => 0..0,
            false => info.as_ptr() as usize..info.as_ptr() as usize + info.len(),
        };
        match FrameFinder::new(Arc::new(dwarf), names, transient) {
            Some(mut finder) => {
                for &index in &group.addresses {
                    found.push((index, finder.frames(addresses[index].0)));
                }
            }
            None => found.extend(group.addresses.iter().map(|&index| (index, Vec::new()))),
        }
        units.iter().map(|&unit| self.units[unit].len()).sum()
    }

    /// The units `run` and every unit their entries' origins and
    /// specifications lead to, however far: those addr2line may read a
    /// function's name from. Sorted.
    fn closure(&self, whole: &Dwarf<'_>, run: Range<usize>) -> Vec<usize> {
        let mut seen: FxHashSet<usize> = run.clone().collect();
        let mut todo: Vec<usize> = run.collect();
        while let Some(unit) = todo.pop() {
            let refs = self.unit_refs(whole, unit);
            todo.extend(refs.iter().filter(|&&other| seen.insert(other)));
        }
        let mut units: Vec<usize> = seen.into_iter().collect();
        units.sort_unstable();
        units
    }

    /// The units, itself among them, that `unit`'s origins and
    /// specifications refer into by offset in the whole `.debug_info`;
    /// read once.
    fn unit_refs(&self, whole: &Dwarf<'_>, unit: usize) -> &[usize] {
        self.refs[unit].get_or_init(|| self.read_refs(whole, unit))
    }

    /// [`UnitIndex::unit_refs`] read. Entries past one that cannot be read
    /// are not read, as addr2line reads no function there either.
    fn read_refs(&self, whole: &Dwarf<'_>, unit: usize) -> Box<[usize]> {
        let mut offsets = Vec::new();
        let _ = refs_in_unit(whole, self.units[unit].start, &self.tables, &mut offsets);
        let mut refs: Vec<usize> = (offsets.into_iter())
            .map(|offset| self.units.partition_point(|u| u.start <= offset))
            .filter_map(|after| after.checked_sub(1))
            .collect();
        refs.sort_unstable();
        refs.dedup();
        refs.into()
    }

    /// A copy of `.debug_info` up to the last of `units` (sorted) with
    /// only those units in it, each at its own offset so that references
    /// between them hold; each run of units between them is one stand-in
    /// unit whose abbreviations cannot be read, which addr2line passes
    /// over. The copy is an anonymous map: pages no unit is copied to
    /// stay unallocated. `None` where no map can be made.
    fn masked(&self, info: &[u8], units: &[usize], endian: RunTimeEndian) -> Option<MmapMut> {
        let end = self.units[*units.last()?].end;
        let mut masked = MmapMut::map_anon(end).ok()?;
        let mut at = 0;
        for &unit in units {
            let range = self.units[unit].clone();
            if at < range.start {
                stand_in(&mut masked[at..range.start], endian);
            }
            masked[range.clone()].copy_from_slice(info.get(range.clone())?);
            at = range.end;
        }
        Some(masked)
    }

    /// The sets of `.debug_aranges` for `units`, with their offsets into
    /// `.debug_info` made relative to `base`.
    fn aranges(&self, sets: &[u8], endian: RunTimeEndian, units: &[usize], base: usize) -> Vec<u8> {
        let mut bytes = Vec::new();
        for &unit in units {
            let offset = self.units[unit].start;
            let first = self.aranges.partition_point(|(u, _)| *u < offset);
            for (_, set) in self.aranges[first..]
                .iter()
                .take_while(|(u, _)| *u == offset)
            {
                let Some(set_bytes) = sets.get(set.clone()) else {
                    continue;
                };
                let at = bytes.len();
                bytes.extend_from_slice(set_bytes);
                // The unit's offset follows the length (4 bytes, or 12 in
                // the 64-bit format) and a 2-byte version.
                let rebased = (offset - base) as u64;
                let (field, width) = match set_bytes.get(..4) == Some(&[0xff; 4]) {
                    true => (at + 14, 8),
                    false => (at + 6, 4),
                };
                let value = match endian {
                    RunTimeEndian::Little => &rebased.to_le_bytes()[..width],
                    RunTimeEndian::Big => &rebased.to_be_bytes()[8 - width..],
                };
                if let Some(slot) = bytes.get_mut(field..field + width) {
                    slot.copy_from_slice(value);
                }
            }
        }
        bytes
    }
}

/// Hands back the file pages read each time `RELEASE_EVERY` bytes of
/// units have been read, by any thread.
struct Pages<'r> {
    since_release: AtomicUsize,
    release: &'r (dyn Fn() + Sync),
}

impl<'r> Pages<'r> {
    fn new(release: &'r (dyn Fn() + Sync)) -> Pages<'r> {
        Pages {
            since_release: AtomicUsize::new(0),
            release,
        }
    }

    /// Notes `bytes` more read.
    fn read(&self, bytes: usize) {
        if self.since_release.fetch_add(bytes, Ordering::Relaxed) + bytes > RELEASE_EVERY {
            self.since_release.store(0, Ordering::Relaxed);
            (self.release)();
        }
    }
}

/// The first and last unit covering each of a sorted list of addresses.
struct Spans(Vec<(usize, usize)>);

impl Spans {
    /// No unit covers any of `len` addresses.
    fn new(len: usize) -> Spans {
        Spans(vec![(usize::MAX, 0); len])
    }

    /// Notes that `unit` covers the addresses `sorted` that `ranges` (begin
    /// and end; sorted here) hold. A unit states hundreds of ranges, few
    /// of which hold an address asked about: with the ranges in order, one
    /// that ends before the next address costs a comparison, not a search.
    fn cover(&mut self, sorted: &[u64], ranges: &mut [(u64, u64)], unit: usize) {
        ranges.sort_unstable();
        let mut first = 0;
        for &(begin, end) in ranges.iter() {
            if sorted.get(first).is_some_and(|&a| a < begin) {
                first += sorted[first..].partition_point(|&a| a < begin);
            }
            if sorted.get(first).is_none_or(|&a| a >= end) {
                continue;
            }
            let past = first + sorted[first..].partition_point(|&a| a < end);
            for (f, l) in &mut self.0[first..past] {
                (*f, *l) = ((*f).min(unit), (*l).max(unit));
            }
        }
    }

    /// The spans of both.
    fn merge(mut self, other: &Spans) -> Spans {
        for ((f, l), (of, ol)) in self.0.iter_mut().zip(&other.0) {
            (*f, *l) = ((*f).min(*of), (*l).max(*ol));
        }
        self
    }
}

/// Each address's first and last covering unit, from every range addr2line
/// might take a unit's from, whichever it prefers (a group may hold more
/// units than it needs, never fewer); and which units it may take ranges
/// from `.debug_aranges` for: those it reads the ranges of (not type or
/// partial units, nor those it cannot read) whose root states no
/// `DW_AT_ranges` (which addr2line prefers; on a debug build of this
/// profiler, 1924 units of 2239). Read on `threads` threads, a few units at a
/// time; `None` where a unit's root cannot be read as addr2line reads it.
fn unit_ranges(
    dwarf: &Dwarf<'_>,
    units: &[Range<usize>],
    sorted: &[u64],
    threads: usize,
    release: &(dyn Fn() + Sync),
) -> Option<(Spans, Vec<bool>)> {
    const UNITS_AT_ONCE: usize = 16;
    let next = AtomicUsize::new(0);
    let pages = Pages::new(release);
    // Reads the units from `first` on; returns how many bytes they span.
    let read = |first: usize, spans: &mut Spans, arangeable: &mut Vec<usize>| {
        let some = &units[first..(first + UNITS_AT_ONCE).min(units.len())];
        for (id, unit) in (first..).zip(some) {
            let offset = gimli::DebugInfoOffset(unit.start);
            let header = dwarf.debug_info.header_from_offset(offset).ok()?;
            if matches!(
                header.type_(),
                gimli::UnitType::Type { .. }
                    | gimli::UnitType::SplitType { .. }
                    | gimli::UnitType::Partial
            ) {
                continue;
            }
            let Ok(abbreviations) = root_abbreviations(dwarf, &header) else {
                continue;
            };
            let Ok(unit) = bare_unit(dwarf, header, abbreviations.clone()) else {
                continue;
            };
            let mut found = Vec::new();
            let listed = root_ranges(gimli::UnitRef::new(dwarf, &unit), &mut found)?;
            if !found.iter().any(|(begin, end)| begin < end) {
                let Ok(unit) = gimli::Unit::new_with_abbreviations(dwarf, header, abbreviations)
                else {
                    continue;
                };
                line_ranges(gimli::UnitRef::new(dwarf, &unit), &mut found);
            }
            spans.cover(sorted, &mut found, id);
            if !listed {
                arangeable.push(id);
            }
        }
        Some(some.iter().map(|unit| unit.len()).sum())
    };
    let worker = || {
        let mut spans = Spans::new(sorted.len());
        let mut arangeable = Vec::new();
        while let first = next.fetch_add(UNITS_AT_ONCE, Ordering::Relaxed)
            && first < units.len()
        {
            pages.read(read(first, &mut spans, &mut arangeable)?);
        }
        Some((spans, arangeable))
    };
    let threads = threads.min(units.len().div_ceil(UNITS_AT_ONCE)).max(1);
    let found = on_threads(0..threads, |_| worker());
    release();
    let mut spans = Spans::new(sorted.len());
    let mut arangeable = vec![false; units.len()];
    for (found, ids) in found.into_iter().collect::<Option<Vec<_>>>()? {
        spans = spans.merge(&found);
        ids.into_iter().for_each(|id| arangeable[id] = true);
    }
    Some((spans, arangeable))
}

/// The addresses in groups of the units that cover them, in file order,
/// from the first and last unit covering each address (by its place in
/// `order`): each address with every unit from its first to its last, and
/// groups that would share a unit merged. Addresses no unit covers are left
/// out (nothing names them).
fn groups(spans: Spans, order: &[usize]) -> Vec<Group> {
    let mut spans: Vec<(usize, usize, usize)> = (spans.0.into_iter().zip(order))
        .filter(|((first, _), _)| *first != usize::MAX)
        .map(|((first, last), &index)| (first, last, index))
        .collect();
    spans.sort_unstable();
    let mut groups: Vec<Group> = Vec::new();
    for (first, last, index) in spans {
        match groups.last_mut() {
            Some(group) if first < group.units.end => {
                group.units.end = group.units.end.max(last + 1);
                group.addresses.push(index);
            }
            _ => groups.push(Group {
                units: first..last + 1,
                addresses: vec![index],
            }),
        }
    }
    groups
}

/// The largest `.debug_info` whose units can be left out of a group: one
/// 32-bit unit stands in for any run of them.
const STAND_IN_MAX: usize = 0xffff_fff0;

/// Writes over `bytes` (at least a header long) a DWARF 4 unit header
/// spanning them, whose abbreviations lie past any `.debug_abbrev`; the
/// zeros after it read as no entries.
fn stand_in(bytes: &mut [u8], endian: RunTimeEndian) {
    let length = (bytes.len() - 4) as u32;
    let (length, version, abbrev) = match endian {
        RunTimeEndian::Little => (
            length.to_le_bytes(),
            4u16.to_le_bytes(),
            u32::MAX.to_le_bytes(),
        ),
        RunTimeEndian::Big => (
            length.to_be_bytes(),
            4u16.to_be_bytes(),
            u32::MAX.to_be_bytes(),
        ),
    };
    let header = [&length[..], &version, &abbrev, &[8]].concat();
    bytes[..header.len()].copy_from_slice(&header);
}

/// Adds to `offsets` where in `.debug_info` the origins and specifications
/// of the unit at `offset` refer to, when given as offsets into the whole
/// section (`DW_FORM_ref_addr`).
fn refs_in_unit(
    dwarf: &Dwarf<'_>,
    offset: usize,
    tables: &[(usize, bool)],
    offsets: &mut Vec<usize>,
) -> gimli::Result<()> {
    let header = dwarf
        .debug_info
        .header_from_offset(gimli::DebugInfoOffset(offset))?;
    // A unit whose table of abbreviations has no attribute that may refer
    // across has no entry that does (a table not found where it starts is
    // read through).
    let table = header.debug_abbrev_offset().0;
    if let Ok(at) = tables.binary_search_by_key(&table, |(start, _)| *start)
        && !tables[at].1
    {
        return Ok(());
    }
    let abbreviations = header.abbreviations(&dwarf.debug_abbrev)?;
    let mut entries = header.entries_raw(&abbreviations, None)?;
    while !entries.is_empty() {
        let Some(abbrev) = entries.read_abbreviation()? else {
            continue;
        };
        let specs = abbrev.attributes();
        let mut skip_from = 0;
        for (at, spec) in specs.iter().enumerate() {
            if may_refer_across(spec.name(), spec.form()) {
                entries.skip_attributes(&specs[skip_from..at])?;
                skip_from = at + 1;
                if let gimli::AttributeValue::DebugInfoRef(to) =
                    entries.read_attribute(*spec)?.value()
                {
                    offsets.push(to.0);
                }
            }
        }
        entries.skip_attributes(&specs[skip_from..])?;
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use std::path::Path;
    use std::process::Command;

    use object::{Object, ObjectSection};
    use profiler_model::Svma;

    use super::*;
    use crate::dwarf;
    use crate::elf_module::{ElfModule, ModuleFiles, Naming, whole_frames};

    /// C in three translation units, with functions inlined into each other
    /// within and (through a header) across them.
    const SOURCES: [(&str, &str); 4] = [
        (
            "inline.h",
            "static inline unsigned mix(unsigned x) { return x * 2654435761u ^ (x >> 7); }\n\
             static inline unsigned twice(unsigned x) { return mix(mix(x) + 1); }\n\
             unsigned a(unsigned); unsigned b(unsigned); unsigned c(unsigned);\n",
        ),
        (
            "a.c",
            "#include \"inline.h\"\n\
             unsigned a(unsigned x) { for (int i = 0; i < 50; i++) x = twice(x) + b(x); return x; }\n\
             int main(int argc, char **argv) { return (int)a((unsigned)argc); }\n",
        ),
        (
            "b.c",
            "#include \"inline.h\"\n\
             unsigned b(unsigned x) { return x & 1 ? twice(x) : c(mix(x)); }\n",
        ),
        (
            "c.c",
            "#include \"inline.h\"\n\
             static unsigned d(unsigned x) { return twice(x) ^ mix(x + 3); }\n\
             unsigned c(unsigned x) { return x > 9 ? d(x) + c(x / 3) : x; }\n",
        ),
    ];

    /// Builds the C program in `dir` with `flags`; `None` (having skipped
    /// the test) where no C compiler builds it.
    pub(crate) fn build(dir: &Path, flags: &[&str]) -> Option<std::path::PathBuf> {
        std::fs::create_dir_all(dir).unwrap();
        for (name, text) in SOURCES {
            std::fs::write(dir.join(name), text).unwrap();
        }
        let exe = dir.join("program");
        let built = Command::new("cc")
            .current_dir(dir)
            .args(["-O2", "-g", "-o", "program", "a.c", "b.c", "c.c"])
            .args(flags)
            .status();
        match built {
            Ok(status) if status.success() => Some(exe),
            other => {
                profiler_testing::skip(format_args!("cc could not build the program: {other:?}"));
                None
            }
        }
    }

    /// Names every byte of the program's code (and a few addresses no unit
    /// covers) a group of units at a time and over the whole debug info,
    /// and requires the same chains; then calls `check` with the index.
    fn names_as_the_whole_debug_info_does(flags: &[&str], check: impl Fn(&UnitIndex, &Dwarf<'_>)) {
        let name = format!("dwarf-units-{}{}", std::process::id(), flags.concat());
        let dir = std::env::temp_dir().join(name);
        let Some(exe) = build(&dir, flags) else {
            return;
        };
        let files = ModuleFiles::open(&exe, &[]).unwrap();
        let module = ElfModule::parse(&files).unwrap();
        let text = module.image.object.section_by_name(".text").unwrap();
        let mut addresses: Vec<Svma> = (text.address()..text.address() + text.size())
            .map(Svma)
            .collect();
        addresses.extend([0, 1, u64::MAX - 1, u64::MAX].map(Svma));
        addresses.reverse();

        let sections = dwarf::load_sections(&module.image, &mut Vec::new()).unwrap();
        let endian = dwarf::endian(&module.image);
        let whole = sections.borrow(|section| EndianSlice::new(section, endian));
        let release = || files.release_pages();
        let info = whole.debug_info.reader().slice();
        let read_info = |offset: usize, buf: &mut [u8]| files.read_at(info, offset, buf);
        let index = UnitIndex::new(&whole, &addresses, 2, &release, &read_info)
            .expect("an index of the units");
        assert!(index.units.len() >= 3, "{} units", index.units.len());
        let grouped = index.frames(&sections, endian, &addresses, 2, false, &release);

        let naming = Naming {
            full_signatures: false,
            threads: 2,
        };
        let expected = whole_frames(&sections, endian, &addresses, naming, &|| ());
        assert_eq!(grouped.len(), expected.len());
        for ((address, grouped), expected) in addresses.iter().zip(&grouped).zip(&expected) {
            assert_eq!(grouped, expected, "at {:#x}", address.0);
        }
        // The comparison covers inline chains, not only empty answers.
        let inlined = grouped.iter().filter(|chain| chain.len() >= 2).count();
        assert!(inlined > 10, "{inlined} addresses in inlined code");
        check(&index, &whole);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn groups_of_units_name_every_address_as_the_whole_debug_info_does() {
        names_as_the_whole_debug_info_does(&[], |index, _| {
            assert!(index.refs.is_empty(), "C units refer into no other");
        });
    }

    #[test]
    fn groups_with_the_units_they_refer_into_name_as_the_whole_debug_info_does() {
        // Link-time optimization puts the abstract entries of inlined
        // functions in units of their own, which the code's units refer to.
        names_as_the_whole_debug_info_does(&["-flto"], |index, whole| {
            assert!(!index.refs.is_empty(), "units refer into others");
            let reaching = (index.groups.iter())
                .filter(|g| index.closure(whole, g.units.clone()).len() > g.units.len())
                .count();
            assert!(reaching > 0, "no group needs a unit outside its run");
        });
    }
}
