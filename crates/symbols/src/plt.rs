//! Names for the procedure linkage table's stubs (`memcpy@plt`), as objdump
//! prints them: x86-64 only, where each `.rela.plt` relocation has a 16-byte
//! stub, in `.plt.sec` when the binary has one (IBT), else in `.plt` after
//! its 16-byte header.

use object::{Architecture, Object, ObjectSection, ObjectSymbol, ObjectSymbolTable, SymbolIndex};

use crate::image::ObjectFile;

/// The stubs as `(start, end, name@plt)`.
pub(crate) fn plt_entries(object: &ObjectFile<'_>) -> Vec<(u64, u64, String)> {
    const ENTRY: u64 = 16;
    const RELA: usize = 24;
    if object.architecture() != Architecture::X86_64 {
        return Vec::new();
    }
    let (Some(relocations), Some(symbols)) = (
        object.section_by_name(".rela.plt"),
        object.dynamic_symbol_table(),
    ) else {
        return Vec::new();
    };
    let Ok(data) = relocations.data() else {
        return Vec::new();
    };
    let (base, first) = match (
        object.section_by_name(".plt.sec"),
        object.section_by_name(".plt"),
    ) {
        (Some(sec), _) => (sec.address(), 0),
        (None, Some(plt)) => (plt.address(), 1),
        _ => return Vec::new(),
    };
    data.chunks_exact(RELA)
        .enumerate()
        .filter_map(|(i, rela)| {
            let info = u64::from_le_bytes(rela[8..16].try_into().ok()?);
            let symbol = symbols
                .symbol_by_index(SymbolIndex((info >> 32) as usize))
                .ok()?;
            let name = symbol.name().ok().filter(|n| !n.is_empty())?;
            let start = base + (first + i as u64) * ENTRY;
            Some((start, start + ENTRY, format!("{name}@plt")))
        })
        .collect()
}
