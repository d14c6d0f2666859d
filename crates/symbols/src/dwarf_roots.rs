//! What the index of a module's units reads of each unit: where it lies,
//! from the length its header starts with, and the address ranges its
//! root entry states, read as addr2line reads them but for no more of the
//! unit than they need.

use std::ops::Range;
use std::sync::Arc;

use gimli::{EndianSlice, Reader, Section};

use crate::dwarf::{Dwarf, Slice};
use crate::dwarf_abbrev::first_abbreviation;

/// Where each unit of `info` lies, from the lengths its headers start
/// with, read by `read_info`, a positioned read of the file where the
/// section is mapped: the 1924 units of the debug build lie on as many
/// pages, each of which a read through the map faulted in with its
/// neighbours (to be handed back and faulted in again when the unit's root
/// is read). `None` where a length runs past the section's end.
/// The fewest bytes after its length a unit's header takes: a version,
/// the offset of its abbreviations and the size of an address (DWARF 2 to
/// 4, 32-bit; 5 adds the unit's type).
const MIN_UNIT_LEN: usize = 7;

pub(crate) fn unit_bounds(
    info: Slice<'_>,
    read_info: &dyn Fn(usize, &mut [u8]) -> Option<()>,
) -> Option<Vec<Range<usize>>> {
    let mut units = Vec::new();
    let mut at = 0;
    while at < info.len() {
        // A 32-bit length, or all ones and a 64-bit one.
        let mut bytes = [0; 12];
        let read = &mut bytes[..(info.len() - at).min(12)];
        read_info(at, read)?;
        let mut length = EndianSlice::new(read, info.endian());
        let (length, format) = length.read_initial_length().ok()?;
        // Too short for a unit's header: damage (a section of zeros would
        // otherwise be read as a unit every 4 bytes, each kept).
        if length < MIN_UNIT_LEN {
            return None;
        }
        let start = at;
        at = at
            .checked_add(usize::from(format.initial_length_size()))?
            .checked_add(length)?;
        if at > info.len() {
            return None;
        }
        units.push(start..at);
    }
    Some(units)
}

/// The abbreviations of `header`'s unit for its root entry: only the
/// root's where it is the first of its table, as compilers write it (a
/// unit's table holds some 40 on a debug build of this profiler, whose
/// parse was a fifth of reading the index), else all.
pub(crate) fn root_abbreviations(
    dwarf: &Dwarf<'_>,
    header: &gimli::UnitHeader<Slice<'_>>,
) -> gimli::Result<Arc<gimli::Abbreviations>> {
    let section = dwarf.debug_abbrev.reader();
    let table = header.debug_abbrev_offset().0;
    let root_code = (header.range_from(gimli::UnitOffset(header.header_size())..))
        .and_then(|mut entries| entries.read_uleb128());
    if let (Ok(code), Some(first)) = (root_code, section.slice().get(table..))
        && let Some(bytes) = first_abbreviation(first, code)
    {
        let mut table = bytes.to_vec();
        table.push(0);
        let debug_abbrev = gimli::DebugAbbrev::new(&table, section.endian());
        return Ok(Arc::new(
            debug_abbrev.abbreviations(gimli::DebugAbbrevOffset(0))?,
        ));
    }
    dwarf.abbreviations(header)
}

/// The unit of `header` as [`gimli::Unit::new`] makes it, but for its name,
/// directory and line program, which its ranges do not need: reading them
/// touched a page of `.debug_str` and of `.debug_line` per unit, and parsed
/// the line program's table of files.
pub(crate) fn bare_unit<'a>(
    dwarf: &Dwarf<'a>,
    header: gimli::UnitHeader<Slice<'a>>,
    abbreviations: Arc<gimli::Abbreviations>,
) -> gimli::Result<gimli::Unit<Slice<'a>>> {
    let (encoding, file) = (header.encoding(), dwarf.file_type);
    let mut unit = gimli::Unit {
        header,
        abbreviations,
        name: None,
        comp_dir: None,
        low_pc: 0,
        str_offsets_base: gimli::DebugStrOffsetsBase::default_for_encoding_and_file(encoding, file),
        addr_base: gimli::DebugAddrBase(0),
        loclists_base: gimli::DebugLocListsBase::default_for_encoding_and_file(encoding, file),
        rnglists_base: gimli::DebugRngListsBase::default_for_encoding_and_file(encoding, file),
        line_program: None,
        dwo_id: None,
    };
    let mut low_pc = None;
    let mut entries = unit.header.entries_raw(&unit.abbreviations, None)?;
    let root = entries
        .read_abbreviation()?
        .ok_or(gimli::Error::MissingUnitDie)?;
    for spec in root.attributes() {
        let attr = entries.read_attribute(*spec)?;
        match (attr.name(), attr.value()) {
            (gimli::DW_AT_low_pc, value) => low_pc = Some(value),
            (
                gimli::DW_AT_addr_base | gimli::DW_AT_GNU_addr_base,
                gimli::AttributeValue::DebugAddrBase(base),
            ) => unit.addr_base = base,
            (
                gimli::DW_AT_rnglists_base | gimli::DW_AT_GNU_ranges_base,
                gimli::AttributeValue::DebugRngListsBase(base),
            ) => unit.rnglists_base = base,
            _ => {}
        }
    }
    if let Some(value) = low_pc
        && let Some(address) = dwarf.attr_address(&unit, value)?
    {
        unit.low_pc = address;
    }
    Ok(unit)
}

/// Adds the ranges the root entry of `unit` states (`DW_AT_ranges`, or
/// `DW_AT_low_pc` with `DW_AT_high_pc`), read as addr2line reads them, and
/// says whether it states `DW_AT_ranges` (then addr2line takes the unit's
/// ranges from there or from its line program, never from
/// `.debug_aranges`); `None` where addr2line would fail.
pub(crate) fn root_ranges(
    unit: gimli::UnitRef<'_, Slice<'_>>,
    found: &mut Vec<(u64, u64)>,
) -> Option<bool> {
    let mut entries = unit.entries_raw(None).ok()?;
    let Some(abbrev) = entries.read_abbreviation().ok()? else {
        return Some(false);
    };
    let (mut low, mut high, mut size, mut list) = (None, None, None, None);
    for spec in abbrev.attributes() {
        let attr = entries.read_attribute(*spec).ok()?;
        let address = |value| match value {
            gimli::AttributeValue::Addr(address) => Some(Some(address)),
            gimli::AttributeValue::DebugAddrIndex(index) => unit.address(index).ok().map(Some),
            _ => Some(None),
        };
        match attr.name() {
            gimli::DW_AT_low_pc => low = address(attr.value())?.or(low),
            gimli::DW_AT_high_pc => match attr.value() {
                gimli::AttributeValue::Udata(value) => size = Some(value),
                value => high = address(value)?.or(high),
            },
            gimli::DW_AT_ranges => list = unit.attr_ranges_offset(attr.value()).ok()?,
            _ => {}
        }
    }
    if let Some(list) = list {
        let mut list = unit.ranges(list).ok()?;
        while let Some(range) = list.next().ok()? {
            found.push((range.begin, range.end));
        }
        return Some(true);
    } else if let (Some(begin), Some(end)) = (low, high) {
        found.push((begin, end));
    } else if let (Some(begin), Some(size)) = (low, size) {
        found.push((begin, begin.wrapping_add(size)));
    }
    Some(false)
}

/// Adds the address ranges of the sequences of `unit`'s line program: what
/// addr2line takes a unit's ranges from when it states none.
pub(crate) fn line_ranges(unit: gimli::UnitRef<'_, Slice<'_>>, found: &mut Vec<(u64, u64)>) {
    let Some(program) = &unit.line_program else {
        return;
    };
    let mut rows = program.clone().rows();
    let mut start = None;
    while let Ok(Some((_, row))) = rows.next_row() {
        if row.end_sequence() {
            if let Some(start) = start.take() {
                found.push((start, row.address()));
            }
        } else if start.is_none() {
            start = Some(row.address());
        }
    }
}

#[cfg(test)]
mod tests {
    use gimli::RunTimeEndian;

    use super::*;

    #[test]
    fn units_are_bounded_by_their_32_and_64_bit_lengths() {
        let bounds = |bytes: &[u8]| {
            let read = |at: usize, buf: &mut [u8]| {
                buf.copy_from_slice(bytes.get(at..at + buf.len())?);
                Some(())
            };
            unit_bounds(EndianSlice::new(bytes, RunTimeEndian::Little), &read)
        };
        let mut info = [&8u32.to_le_bytes()[..], &[0; 8]].concat();
        info.extend([&u32::MAX.to_le_bytes()[..], &12u64.to_le_bytes(), &[0; 12]].concat());
        assert_eq!(bounds(&info), Some(vec![0..12, 12..36]));
        assert_eq!(bounds(&[]), Some(Vec::new()));
        // A length past the end, and one cut short.
        assert_eq!(bounds(&info[..35]), None);
        assert_eq!(bounds(&info[..14]), None);
        // Zeros: a unit too short for its header, not a unit every 4 bytes.
        assert_eq!(bounds(&[0; 64]), None);
        assert_eq!(bounds(&[&6u32.to_le_bytes()[..], &[0; 6]].concat()), None);
    }
}
