//! The symbolizer target: an ELF image, written to a file as a module of a
//! recording would be, named at addresses across its segments and symbols
//! and at the ends of the address space (functions, inline chains, lines),
//! its functions looked up by name and listed, archived, and its unwind
//! tables walked. Seeds are the fixture binaries.

use object::{Object, ObjectSegment, ObjectSymbol};
use profiler_model::{
    AsmSyntax, Avma, Detail, Disassembler, FileOffset, MappedRange, Module, ModuleTable,
    StackUnwinder, Svma, Symbolizer, UserStack,
};
use profiler_symbols::{Archiver, ElfSymbolizer, ElfUnwinder, SymbolizerOptions, symbolize_file};

use crate::target::{Scratch, Target};

pub(crate) const TARGET: Target = Target {
    name: "symbols",
    accepts: |bytes| bytes.starts_with(b"\x7fELF"),
    seeds: Vec::new,
    dictionary: &[
        b"\x7fELF",
        b".text\0",
        b".eh_frame\0",
        b".eh_frame_hdr\0",
        b".debug_info\0",
        b".debug_line\0",
        b".zdebug_info\0",
        b".gnu_debuglink\0",
        b".plt\0",
        b"GNU\0",
        b"main\0",
        &[0xff; 8],
        &[0; 8],
    ],
    mend: None,
    restructure: None,
    run,
};

/// Where the fuzzed module is mapped for unwinding.
const BASE: u64 = 0x5555_0000_0000;

fn run(input: &[u8], scratch: &Scratch) {
    let path = scratch.write("module", input);
    let module = Module {
        path: path.to_string_lossy().into_owned(),
        build_id: None,
        pid: None,
    };
    let (segments, mut svmas, names) = places(input);
    let mut offsets: Vec<FileOffset> = segments
        .iter()
        .flat_map(|&(offset, size, _)| {
            let end = offset.saturating_add(size);
            [
                offset,
                offset.saturating_add(size / 2),
                end.saturating_sub(1),
                end,
            ]
        })
        .chain([0, 1, 0x1000, u64::MAX - 1, u64::MAX])
        .map(FileOffset)
        .collect();
    offsets.sort();
    offsets.dedup();
    svmas.extend([0, 1, u64::MAX - 1, u64::MAX]);
    svmas.sort();
    svmas.dedup();

    let options = SymbolizerOptions {
        threads: 1,
        ..SymbolizerOptions::default()
    };
    let symbolizer = ElfSymbolizer::new(options.clone());
    for detail in [Detail::Functions, Detail::Frames] {
        let _ = symbolizer.symbolize(&module, &offsets, detail);
    }
    let svma_list: Vec<Svma> = svmas.iter().copied().map(Svma).collect();
    let _ = symbolize_file(&path, &svma_list, &options);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let _ = symbolizer.find_functions(&module, &names);
    for &svma in svmas.iter().take(6) {
        let _ = symbolizer.listing(&module, Svma(svma), AsmSyntax::Att);
    }

    let archiver = Archiver::new(&symbolizer);
    let _ = archiver.symbolize(&module, &offsets, Detail::Frames);
    let _ = archiver.finish(true);

    unwind(&module, &segments, &options);
}

/// The executable segments (file offset, file size, address), the
/// addresses of up to 32 symbols and segments, and up to 4 symbol names.
type Places = (Vec<(u64, u64, u64)>, Vec<u64>, Vec<String>);

fn places(input: &[u8]) -> Places {
    let Ok(file) = object::File::parse(input) else {
        return Default::default();
    };
    let segments: Vec<(u64, u64, u64)> = file
        .segments()
        .filter(|s| s.flags() != object::SegmentFlags::None)
        .map(|s| {
            let (offset, size) = s.file_range();
            (offset, size, s.address())
        })
        .take(8)
        .collect();
    let mut svmas: Vec<u64> = segments.iter().map(|s| s.2).collect();
    let mut names = Vec::new();
    for symbol in file.symbols().chain(file.dynamic_symbols()).take(64) {
        if svmas.len() < 32 && symbol.address() != 0 {
            svmas.push(symbol.address());
            svmas.push(symbol.address().saturating_add(symbol.size() / 2));
        }
        if let Ok(name) = symbol.name()
            && names.len() < 4
            && !name.is_empty()
        {
            names.push(name.to_owned());
        }
    }
    (segments, svmas, names)
}

/// Each segment mapped, and stacks unwound from addresses across it.
fn unwind(module: &Module, segments: &[(u64, u64, u64)], options: &SymbolizerOptions) {
    let mut modules = ModuleTable::default();
    let id = modules.intern(&module.path, None, None);
    let mut mappings: Vec<MappedRange> = segments
        .iter()
        .map(|&(offset, size, _)| {
            let page = offset & !0xfff;
            let start = BASE.saturating_add(page);
            MappedRange {
                start: Avma(start),
                end: Avma(start.saturating_add(size.min(1 << 32) + (offset - page))),
                offset: FileOffset(page),
                module: id,
            }
        })
        .collect();
    mappings.sort_by_key(|m| m.start);
    let unwinder = ElfUnwinder::new(options);
    let mut process = unwinder.process(&modules, &mappings);
    let sp = 0x7ffd_0000_0000u64;
    for mapping in &mappings {
        let (start, end) = (mapping.start.0, mapping.end.0);
        for ip in [start, start + (end - start) / 3, end.saturating_sub(1)] {
            // Return addresses into the same mapping, then the end.
            let words = [ip ^ 1, sp + 32, ip ^ 2, sp + 48, 0, 0, ip ^ 3, 0];
            let stack = UserStack {
                ip: Avma(ip),
                sp: Avma(sp),
                bp: Avma(sp + 8),
                bytes: words.iter().flat_map(|w| w.to_le_bytes()).collect(),
            };
            let mut frames = Vec::new();
            let _ = process.unwind(&stack, &mut frames);
            let _ = process.caller(&stack);
        }
    }
}
