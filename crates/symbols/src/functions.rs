//! The functions of a module and their extents, from the symbol tables
//! (`.symtab`, then `.dynsym`, of the file and of its separate debug file),
//! the PLT stubs, and, where nothing names the code, the unwind tables
//! (`.eh_frame` describes every function a stripped binary still has, by
//! range only).

use std::borrow::Cow;
use std::sync::OnceLock;

use gimli::{
    BaseAddresses, CieOrFde, CommonInformationEntry, EhFrame, EndianSlice, RunTimeEndian,
    UnwindSection,
};
use object::{Object, ObjectSection, ObjectSymbol, SymbolKind};
use rustc_hash::FxHashMap;

use crate::image::{Image, ObjectFile};
use crate::plt::plt_entries;

/// A function: `start..end` in stated addresses, with its raw symbol name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Function<'data> {
    pub start: u64,
    pub end: u64,
    pub name: Option<Cow<'data, str>>,
}

/// The functions of a module, sorted by start address.
pub(crate) struct FunctionTable<'data> {
    /// What the symbol tables and PLT stubs name.
    functions: Vec<Function<'data>>,
    /// Where the unwind tables are, for the code no symbol covers.
    unwind: Option<Unwind<'data>>,
    /// The unwind tables' ranges that no function of `functions` starts
    /// in, as unnamed functions, sorted by start: read when an address is
    /// first found in no named function (parsing a debug build's 80k
    /// entries of `.eh_frame` was a tenth of a small report's time, for
    /// code that symbols most often name whole).
    unnamed: OnceLock<Vec<Function<'data>>>,
}

/// A text symbol before duplicates at one address are resolved.
struct Candidate<'data> {
    address: u64,
    rank: (u8, u8),
    /// Zero when the symbol table does not say.
    size: u64,
    name: Cow<'data, str>,
    /// End of the symbol's section: where a sizeless symbol must stop.
    section_end: u64,
    /// Where it was met: of equally preferred symbols, the first names
    /// the address.
    seq: u32,
}

/// Which of several symbols at one address names it: global over weak over
/// local, then the name with fewer leading underscores (`memcpy` over
/// `__memcpy`).
fn preference<'data>(symbol: &object::Symbol<'data, '_, &'data [u8]>, name: &str) -> (u8, u8) {
    let binding = if symbol.is_global() && !symbol.is_weak() {
        0
    } else if symbol.is_weak() {
        1
    } else {
        2
    };
    let underscores = name.len() - name.trim_start_matches('_').len();
    (binding, u8::try_from(underscores).unwrap_or(u8::MAX))
}

impl<'data> FunctionTable<'data> {
    /// The functions of `image`, named also from `debug`'s symbol table
    /// (a file stripped of `.symtab` keeps it in its debug file).
    /// `release` hands back the file pages read so far: each table's, once
    /// read (the names are read again only for code that is sampled).
    pub(crate) fn new(
        image: &Image<'data>,
        debug: Option<&Image<'data>>,
        release: &dyn Fn(),
    ) -> FunctionTable<'data> {
        let mut candidates: Vec<Candidate<'data>> = Vec::new();
        for object in std::iter::once(&image.object).chain(debug.map(|d| &d.object)) {
            collect_symbols(object, &mut candidates);
            release();
        }
        for (address, end, name) in plt_entries(&image.object) {
            let name = Cow::Owned(name);
            candidates.push(Candidate {
                address,
                rank: (0, 0),
                size: end - address,
                name,
                section_end: end,
                seq: 0,
            });
        }
        for (seq, candidate) in candidates.iter_mut().enumerate() {
            candidate.seq = u32::try_from(seq).unwrap_or(u32::MAX);
        }
        // Unstable but ordered as a stable sort: the keys are distinct.
        candidates.sort_unstable_by_key(|c| (c.address, c.rank, c.seq));
        candidates.dedup_by_key(|c| c.address);

        // Each function ends where its symbol says, or else at the next
        // (or its section's end): noted in `section_end`, no longer needed.
        for at in 0..candidates.len() {
            let next = candidates.get(at + 1).map_or(u64::MAX, |n| n.address);
            let c = &mut candidates[at];
            // A symbol may claim more than the address space has left.
            c.section_end = match c.size > 0 {
                true => c.address.saturating_add(c.size),
                false => next.min(c.section_end),
            };
        }
        // Made in the candidates' own memory.
        let functions = (candidates.into_iter())
            .map(|c| Function {
                start: c.address,
                end: c.section_end,
                name: Some(c.name),
            })
            .collect();
        let mut functions: Vec<Function<'data>> = functions;
        functions.shrink_to_fit();
        release();
        FunctionTable {
            functions,
            unwind: Unwind::of(image),
            unnamed: OnceLock::new(),
        }
    }

    /// The unwind tables' ranges no symbol covers, as unnamed functions.
    fn unnamed(&self) -> &[Function<'data>] {
        self.unnamed.get_or_init(|| {
            let ranges = self.unwind.as_ref().map_or(Vec::new(), Unwind::ranges);
            let mut unnamed: Vec<Function<'data>> = ranges
                .into_iter()
                .filter(|&(start, _)| find_in(&self.functions, start).is_none())
                .map(|(start, end)| Function {
                    start,
                    end,
                    name: None,
                })
                .collect();
            unnamed.sort_by_key(|f| f.start);
            unnamed
        })
    }

    /// The functions called one of `names`.
    pub(crate) fn named<'a>(
        &'a self,
        names: &'a [&str],
    ) -> impl Iterator<Item = &'a Function<'data>> {
        (self.functions.iter()).filter(|f| f.name.as_deref().is_some_and(|n| names.contains(&n)))
    }

    /// How many functions it holds.
    pub(crate) fn len(&self) -> usize {
        self.functions.len()
    }

    /// The function containing `address`: as found among the named
    /// functions and the unnamed ones sorted together, the named first
    /// where both start at one address. Where a named function holds the
    /// address, the unnamed ones change nothing (none starts inside it,
    /// so none comes between), and are not read.
    pub(crate) fn find(&self, address: u64) -> Option<&Function<'data>> {
        if let Some(found) = find_in(&self.functions, address) {
            return Some(found);
        }
        let unnamed = self.unnamed();
        let mut named = self.functions[..self.functions.partition_point(|f| f.start <= address)]
            .iter()
            .rev()
            .peekable();
        let mut other = unnamed[..unnamed.partition_point(|f| f.start <= address)]
            .iter()
            .rev()
            .peekable();
        // The last four, in the merged order, that start at or before it.
        let merged = std::iter::from_fn(|| match (named.peek(), other.peek()) {
            (Some(n), Some(u)) if n.start > u.start => named.next(),
            (_, Some(_)) => other.next(),
            (Some(_), None) => named.next(),
            (None, None) => None,
        });
        merged.take(4).find(|f| address < f.end)
    }
}

/// The function of `functions` (sorted by start) containing `address`.
fn find_in<'f, 'data>(
    functions: &'f [Function<'data>],
    address: u64,
) -> Option<&'f Function<'data>> {
    let after = functions.partition_point(|f| f.start <= address);
    functions[..after]
        .iter()
        .rev()
        .take(4)
        .find(|f| address < f.end)
}

/// The defined text symbols of `object`'s symbol table and dynamic symbol
/// table.
fn collect_symbols<'data>(object: &ObjectFile<'data>, candidates: &mut Vec<Candidate<'data>>) {
    for symbol in object.symbols().chain(object.dynamic_symbols()) {
        if symbol.kind() != SymbolKind::Text || !symbol.is_definition() || symbol.address() == 0 {
            continue;
        }
        // A name that is not UTF-8 still names its function.
        let Ok(name) = symbol.name_bytes().map(String::from_utf8_lossy) else {
            continue;
        };
        if name.is_empty() {
            continue;
        }
        let section_end = symbol
            .section_index()
            .and_then(|i| object.section_by_index(i).ok())
            .map_or(u64::MAX, |s| s.address().saturating_add(s.size()));
        candidates.push(Candidate {
            address: symbol.address(),
            rank: preference(&symbol, &name),
            size: symbol.size(),
            name,
            section_end,
            seq: 0,
        });
    }
}

/// A module's `.eh_frame`, to be read when needed.
struct Unwind<'data> {
    eh_frame: EhFrame<EndianSlice<'data, RunTimeEndian>>,
    bases: BaseAddresses,
}

impl<'data> Unwind<'data> {
    /// Where `image`'s `.eh_frame` lies, and the bases its pointers take.
    fn of(image: &Image<'data>) -> Option<Unwind<'data>> {
        let object = &image.object;
        let section = object.section_by_name(".eh_frame")?;
        let data = section.data().ok()?;
        let endian = if object.is_little_endian() {
            RunTimeEndian::Little
        } else {
            RunTimeEndian::Big
        };
        let mut eh_frame = EhFrame::new(data, endian);
        eh_frame.set_address_size(if object.is_64() { 8 } else { 4 });
        let mut bases = BaseAddresses::default().set_eh_frame(section.address());
        if let Some(text) = object.section_by_name(".text") {
            bases = bases.set_text(text.address());
        }
        if let Some(got) = object.section_by_name(".got") {
            bases = bases.set_got(got.address());
        }
        Some(Unwind { eh_frame, bases })
    }

    /// The address ranges of every FDE.
    fn ranges(&self) -> Vec<(u64, u64)> {
        unwind_ranges(&self.eh_frame, &self.bases)
    }
}

/// The address ranges of every FDE in `eh_frame`.
fn unwind_ranges(
    eh_frame: &EhFrame<EndianSlice<'_, RunTimeEndian>>,
    bases: &BaseAddresses,
) -> Vec<(u64, u64)> {
    let mut ranges = Vec::new();
    // The few CIEs are shared by every FDE: each is parsed once.
    let mut cies: FxHashMap<_, CommonInformationEntry<_>> = FxHashMap::default();
    let mut entries = eh_frame.entries(bases);
    while let Ok(Some(entry)) = entries.next() {
        let CieOrFde::Fde(partial) = entry else {
            continue;
        };
        let Ok(fde) = partial.parse(|section, bases, offset| {
            if let Some(cie) = cies.get(&offset) {
                return Ok(cie.clone());
            }
            let cie = section.cie_from_offset(bases, offset)?;
            cies.insert(offset, cie.clone());
            Ok(cie)
        }) else {
            continue;
        };
        if fde.len() > 0 && fde.initial_address() != 0 {
            let start = fde.initial_address();
            ranges.push((start, start.saturating_add(fde.len())));
        }
    }
    ranges
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use object::{Object, ObjectSection};

    use super::*;
    use crate::elf_module::{ElfModule, ModuleFiles};

    /// What the table found when the unnamed functions were sorted in
    /// with the named ones from the start.
    fn found_in_whole(table: &FunctionTable<'_>, address: u64) -> Option<(u64, u64)> {
        let mut whole: Vec<&Function<'_>> = table.functions.iter().collect();
        whole.extend(table.unnamed());
        whole.sort_by_key(|f| f.start);
        let after = whole.partition_point(|f| f.start <= address);
        (whole[..after].iter().rev().take(4))
            .find(|f| address < f.end)
            .map(|f| (f.start, f.end))
    }

    #[test]
    fn unnamed_code_is_found_as_in_one_table_with_the_named() {
        let dir = std::env::temp_dir().join(format!("functions-unnamed-{}", std::process::id()));
        let Some(program) = crate::dwarf_units::tests::build(&dir, &[]) else {
            return;
        };
        let stripped = dir.join("stripped");
        let made = Command::new("strip")
            .arg("-o")
            .args([&stripped, &program])
            .status();
        if !made.is_ok_and(|status| status.success()) {
            profiler_testing::skip("strip could not strip the program");
            return;
        }
        for path in [&program, &stripped] {
            let files = ModuleFiles::open(path, &[]).unwrap();
            let module = ElfModule::parse(&files).unwrap();
            let table = FunctionTable::new(&module.image, None, &|| ());
            let text = module.image.object.section_by_name(".text").unwrap();
            let (start, end) = (text.address(), text.address() + text.size());
            for address in (start.saturating_sub(64)..end + 64).chain([0, u64::MAX]) {
                let found = table.find(address).map(|f| (f.start, f.end));
                assert_eq!(
                    found,
                    found_in_whole(&table, address),
                    "{address:#x} in {path:?}"
                );
            }
            let unnamed = table.unnamed().len();
            match path == &stripped {
                true => assert!(unnamed > 3, "{unnamed} unnamed functions stripped"),
                false => assert!(table.functions.len() > 3),
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
