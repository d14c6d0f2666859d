//! The functions of a module and their extents, from the symbol tables
//! (`.symtab`, then `.dynsym`, of the file and of its separate debug file),
//! the PLT stubs, and, where nothing names the code, the unwind tables
//! (`.eh_frame` describes every function a stripped binary still has, by
//! range only).

use std::borrow::Cow;

use gimli::{
    BaseAddresses, CieOrFde, CommonInformationEntry, EhFrame, RunTimeEndian, UnwindSection,
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
    functions: Vec<Function<'data>>,
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
        let mut table = FunctionTable { functions };
        table.add_unnamed(unwind_ranges(image));
        table.functions.shrink_to_fit();
        release();
        table
    }

    /// Adds the ranges no symbol covers, as unnamed functions.
    fn add_unnamed(&mut self, ranges: Vec<(u64, u64)>) {
        let unnamed: Vec<Function<'data>> = ranges
            .into_iter()
            .filter(|&(start, _)| self.find(start).is_none())
            .map(|(start, end)| Function {
                start,
                end,
                name: None,
            })
            .collect();
        if !unnamed.is_empty() {
            self.functions.extend(unnamed);
            self.functions.sort_by_key(|f| f.start);
        }
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

    /// The function containing `address`.
    pub(crate) fn find(&self, address: u64) -> Option<&Function<'data>> {
        let after = self.functions.partition_point(|f| f.start <= address);
        self.functions[..after]
            .iter()
            .rev()
            .take(4)
            .find(|f| address < f.end)
    }
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

/// The address ranges of every FDE in `.eh_frame`.
fn unwind_ranges(image: &Image<'_>) -> Vec<(u64, u64)> {
    let object = &image.object;
    let Some(section) = object.section_by_name(".eh_frame") else {
        return Vec::new();
    };
    let Ok(data) = section.data() else {
        return Vec::new();
    };
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
    let mut ranges = Vec::new();
    // The few CIEs are shared by every FDE: each is parsed once.
    let mut cies: FxHashMap<_, CommonInformationEntry<_>> = FxHashMap::default();
    let mut entries = eh_frame.entries(&bases);
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
