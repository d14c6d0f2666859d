//! Names for the procedure linkage table's stubs (`memcpy@plt`), as perf
//! names them: x86-64 only. Each `.rela.plt` relocation has a 16-byte stub,
//! in `.plt.sec` when the binary has one (IBT), else in `.plt` after its
//! 16-byte header; the stubs follow the order of the GOT slots the
//! relocations fill (not the relocations' own order: a library's IRELATIVE
//! relocations come last but fill the first slots). A stub of an IRELATIVE
//! relocation (libc calling its own ifuncs) is named after the ifunc its
//! resolver address is (`strnlen@plt`), else `offset_0x26010@plt`; the
//! `.plt.got` stubs after the `.rela.dyn` relocation of the GOT slot they
//! jump through.

use object::elf::{R_X86_64_IRELATIVE, STT_GNU_IFUNC};
use object::{
    Architecture, Object, ObjectSection, ObjectSymbol, ObjectSymbolTable, SectionKind, SymbolFlags,
    SymbolIndex,
};

use crate::image::ObjectFile;

const ENTRY: u64 = 16;
const RELA: usize = 24;

/// One `Elf64_Rela`.
struct Rela {
    /// The GOT slot it fills.
    offset: u64,
    kind: u32,
    symbol: usize,
    addend: i64,
}

/// The relocations of a section, in its order.
fn relocations(object: &ObjectFile<'_>, section: &str) -> Vec<Rela> {
    let Some(data) = object.section_by_name(section).and_then(|s| s.data().ok()) else {
        return Vec::new();
    };
    let word = |bytes: &[u8], at: usize| {
        u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or_default())
    };
    data.chunks_exact(RELA)
        .map(|rela| {
            let info = word(rela, 8);
            Rela {
                offset: word(rela, 0),
                kind: info as u32,
                symbol: (info >> 32) as usize,
                addend: word(rela, 16) as i64,
            }
        })
        .collect()
}

/// The stubs as `(start, end, name@plt)`.
pub(crate) fn plt_entries(object: &ObjectFile<'_>) -> Vec<(u64, u64, String)> {
    if object.architecture() != Architecture::X86_64 {
        return Vec::new();
    }
    let mut entries = plt_stubs(object);
    entries.extend(plt_got_stubs(object));
    entries
}

/// The stubs of `.plt` (or `.plt.sec`), one per `.rela.plt` relocation.
fn plt_stubs(object: &ObjectFile<'_>) -> Vec<(u64, u64, String)> {
    let (base, first, file_base) = match (
        object.section_by_name(".plt.sec"),
        object.section_by_name(".plt"),
    ) {
        (Some(sec), _) => (sec.address(), 0, sec.file_range().map_or(0, |r| r.0)),
        (None, Some(plt)) => (plt.address(), 1, plt.file_range().map_or(0, |r| r.0)),
        _ => return Vec::new(),
    };
    let mut relocations = relocations(object, ".rela.plt");
    relocations.sort_by_key(|r| r.offset);
    // Stubs the address space has no room for (a crafted `.plt` at its
    // end) are left out.
    relocations
        .iter()
        .enumerate()
        .map_while(|(i, rela)| {
            let slot = (first + i as u64) * ENTRY;
            let start = base.checked_add(slot)?;
            let end = start.checked_add(ENTRY)?;
            let name = symbol_name(object, rela.symbol)
                .or_else(|| match rela.kind == R_X86_64_IRELATIVE.0 {
                    true => ifunc_at(object, rela.addend),
                    false => None,
                })
                .unwrap_or_else(|| format!("offset_{:#x}", file_base.wrapping_add(slot)));
            Some((start, end, format!("{name}@plt")))
        })
        .collect()
}

/// The stubs of `.plt.got`: each jumps through a GOT slot that a
/// `.rela.dyn` relocation of a symbol fills.
fn plt_got_stubs(object: &ObjectFile<'_>) -> Vec<(u64, u64, String)> {
    let Some(section) = object.section_by_name(".plt.got") else {
        return Vec::new();
    };
    let (Ok(data), address) = (section.data(), section.address()) else {
        return Vec::new();
    };
    let size = match section.kind() {
        SectionKind::Text if data.len() % 16 == 0 && data.starts_with(&[0xf3, 0x0f, 0x1e]) => 16,
        _ => 8,
    };
    let relocations = relocations(object, ".rela.dyn");
    data.chunks_exact(size)
        .enumerate()
        .filter_map(|(i, stub)| {
            // `jmp *disp32(%rip)`, perhaps after endbr64 and a bnd prefix.
            let at = stub.windows(2).position(|w| w == [0xff, 0x25])?;
            let disp = i32::from_le_bytes(stub.get(at + 2..at + 6)?.try_into().ok()?);
            let start = address.checked_add((i * size) as u64)?;
            let end = start.checked_add(size as u64)?;
            let slot = (start.wrapping_add(at as u64 + 6)).wrapping_add_signed(i64::from(disp));
            let rela = relocations.iter().find(|r| r.offset == slot)?;
            let name = symbol_name(object, rela.symbol)?;
            Some((start, end, format!("{name}@plt")))
        })
        .collect()
}

/// The dynamic symbol's name, if it has one.
fn symbol_name(object: &ObjectFile<'_>, index: usize) -> Option<String> {
    let symbols = object.dynamic_symbol_table()?;
    let symbol = symbols.symbol_by_index(SymbolIndex(index)).ok()?;
    let name = symbol.name().ok().filter(|n| !n.is_empty())?;
    Some(name.to_owned())
}

/// The ifunc whose resolver lies at `address`: of its names, the one with
/// the fewest leading underscores (`strnlen` over `__strnlen`).
fn ifunc_at(object: &ObjectFile<'_>, address: i64) -> Option<String> {
    let address = u64::try_from(address).ok()?;
    object
        .dynamic_symbols()
        .chain(object.symbols())
        .filter(|s| s.address() == address)
        .filter(|s| {
            matches!(s.flags(), SymbolFlags::Elf { st_info, .. } if st_info.st_type() == STT_GNU_IFUNC)
        })
        .filter_map(|s| s.name().ok().map(str::to_owned))
        .min_by_key(|name| (name.len() - name.trim_start_matches('_').len(), name.clone()))
}
