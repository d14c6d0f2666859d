//! `.debug_abbrev` read as bytes, where parsing its tables as gimli does
//! would do more than is needed: which tables have an attribute that may
//! refer into another unit, and a table's first abbreviation alone.

use gimli::{EndianSlice, Reader};

/// Whether addr2line may follow an attribute into another unit: a
/// function's origin or specification given as an offset into the whole of
/// `.debug_info` (`DW_FORM_ref_addr`, or a form the entry itself gives).
/// Other references across units (types) it does not follow.
pub(crate) fn may_refer_across(name: gimli::DwAt, form: gimli::DwForm) -> bool {
    matches!(
        name,
        gimli::DW_AT_abstract_origin | gimli::DW_AT_specification
    ) && matches!(form, gimli::DW_FORM_ref_addr | gimli::DW_FORM_indirect)
}

/// Where each table of abbreviations in `.debug_abbrev` starts, and
/// whether it has an attribute addr2line may follow into another unit;
/// `None` where the section cannot be read from end to end.
pub(crate) fn tables_referring_across(section: &[u8]) -> Option<Vec<(usize, bool)>> {
    let mut abbrev = EndianSlice::new(section, gimli::LittleEndian);
    let mut tables = vec![(0, false)];
    while !abbrev.is_empty() {
        // A table: abbreviations up to a zero code; then the next table.
        if abbrev.read_uleb128().ok()? == 0 {
            tables.push((section.len() - abbrev.len(), false));
            continue;
        }
        let mut refers = false;
        read_abbreviation(&mut abbrev, |name, form| {
            refers |= may_refer_across(name, form);
        })?;
        if let Some(table) = tables.last_mut() {
            table.1 |= refers;
        }
    }
    Some(tables)
}

/// The bytes of the first abbreviation of the table at the start of
/// `table`, where its code is `code`.
pub(crate) fn first_abbreviation(table: &[u8], code: u64) -> Option<&[u8]> {
    let mut abbrev = EndianSlice::new(table, gimli::LittleEndian);
    if abbrev.read_uleb128().ok()? != code || code == 0 {
        return None;
    }
    read_abbreviation(&mut abbrev, |_, _| {})?;
    table.get(..table.len() - abbrev.len())
}

/// Reads an abbreviation past its code: its tag, whether it has children,
/// and its attributes, each of which is handed to `each` as (name, form).
fn read_abbreviation(
    abbrev: &mut EndianSlice<'_, gimli::LittleEndian>,
    mut each: impl FnMut(gimli::DwAt, gimli::DwForm),
) -> Option<()> {
    let _tag = abbrev.read_uleb128().ok()?;
    let _children = abbrev.read_u8().ok()?;
    loop {
        let name = abbrev.read_uleb128().ok()?;
        let form = abbrev.read_uleb128().ok()?;
        if (name, form) == (0, 0) {
            return Some(());
        }
        let (name, form) = (gimli::DwAt(name as u16), gimli::DwForm(form as u16));
        each(name, form);
        if form == gimli::DW_FORM_implicit_const {
            abbrev.read_sleb128().ok()?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cross_unit_references_are_found_in_the_abbreviations() {
        // code 1, DW_TAG_compile_unit, children; DW_AT_name strp; end; end of table.
        let plain = [1, 0x11, 1, 0x03, 0x0e, 0, 0, 0];
        let refers = |section: &[u8]| {
            tables_referring_across(section).map(|t| t.iter().any(|(_, refers)| *refers))
        };
        assert_eq!(refers(&plain), Some(false));
        // code 1, DW_TAG_subprogram, no children; DW_AT_abstract_origin ref_addr.
        let across = [1, 0x2e, 0, 0x31, 0x10, 0, 0, 0];
        let both = [&plain[..], &across[..]].concat();
        assert_eq!(refers(&both), Some(true));
        // Only the second table's units are read for references.
        let tables = tables_referring_across(&both).unwrap();
        assert_eq!(tables[..2], [(0, false), (plain.len(), true)]);
        // Nor is a type given across units: addr2line reads no names there.
        let type_across = [1, 0x34, 0, 0x49, 0x10, 0, 0, 0];
        assert_eq!(refers(&type_across), Some(false));
        // An implicit constant whose value looks like ref_addr is no reference.
        let constant = [1, 0x2e, 0, 0x3a, 0x21, 0x10, 0, 0, 0];
        assert_eq!(refers(&constant), Some(false));
        assert_eq!(refers(&[1, 0x2e]), None);
    }

    #[test]
    fn the_roots_abbreviation_is_read_alone_where_it_comes_first() {
        // code 1, DW_TAG_compile_unit, children; DW_AT_name strp; DW_AT_language
        // implicit_const 0x1c; end; then code 2 and the end of the table.
        let table = [
            1, 0x11, 1, 0x03, 0x0e, 0x13, 0x21, 0x1c, 0, 0, 2, 0x2e, 0, 0, 0, 0,
        ];
        assert_eq!(first_abbreviation(&table, 1), Some(&table[..10]));
        // The root's abbreviation is another: the whole table is read.
        assert_eq!(first_abbreviation(&table, 2), None);
        assert_eq!(first_abbreviation(&table[..6], 1), None);
        assert_eq!(first_abbreviation(&[0], 0), None);
    }
}
