//! Disassembly of one function at a time, for annotated listings: its bytes
//! read from the module's file (through the same cache, only its range),
//! decoded as x86 or x86-64 code, each instruction with its inline chain and
//! source line from DWARF.

use iced_x86::{
    Decoder, DecoderError, DecoderOptions, FlowControl, Formatter, GasFormatter, IntelFormatter,
    OpKind,
};
use object::{Architecture, Object, ReadRef};
use profiler_model::{
    AsmSyntax, Detail, Disassembler, FileOffset, Flow, FunctionListing, Instruction, Module, Svma,
};

use crate::demangle::demangle;
use crate::elf_module::{ElfModule, ModuleFiles};
use crate::symbolizer::{ElfSymbolizer, Unopened, parse_recorded};

/// The most of one function that is disassembled: a symbol without a size
/// runs to the next symbol or its section's end, which for the last one may
/// be megabytes of code that are not its own.
const MAX_FUNCTION_LEN: u64 = 1 << 20;

impl Disassembler for ElfSymbolizer {
    fn listing(
        &self,
        module: &Module,
        address: Svma,
        syntax: AsmSyntax,
    ) -> Result<FunctionListing, String> {
        let files = self.open(module).map_err(|unopened| match unopened {
            Unopened::NoFile(why) => why.to_owned(),
            Unopened::Failed(error) => error.to_string(),
        })?;
        let elf = parse_recorded(module, &files).map_err(|e| e.to_string())?;
        let code = function_code(&elf, &files, &module.path, address)?;
        let mut listing = self.listing_of(&elf, &code, syntax);
        listing.make_printable();
        Ok(listing)
    }
}

/// The code of one function, as read from its module's file.
pub(crate) struct FunctionCode<'a> {
    /// 32 or 64.
    pub bitness: u32,
    pub start: Svma,
    pub end: Svma,
    pub offset: FileOffset,
    pub bytes: &'a [u8],
}

/// The code of the function of `elf` (read from `files`, the module at
/// `path`) that holds `address`.
pub(crate) fn function_code<'a>(
    elf: &ElfModule<'_>,
    files: &'a ModuleFiles,
    path: &str,
    address: Svma,
) -> Result<FunctionCode<'a>, String> {
    let bitness = match elf.image.object.architecture() {
        Architecture::X86_64 | Architecture::X86_64_X32 => 64,
        Architecture::I386 => 32,
        other => {
            return Err(format!(
                "{path} holds {other:?} code; only x86 code is disassembled"
            ));
        }
    };
    let function = elf
        .function(address)
        .ok_or_else(|| format!("no function of {path} holds {:#x}", address.0))?;
    let start = Svma(function.start);
    let end = Svma(
        function
            .end
            .min(function.start.saturating_add(MAX_FUNCTION_LEN)),
    );
    let (offset, len) = elf
        .image
        .layout
        .file_range(start, end)
        .ok_or_else(|| format!("{path} has no bytes for its code at {:#x}", start.0))?;
    let bytes = (&files.bytes).read_bytes_at(offset.0, len).map_err(|()| {
        format!(
            "cannot read {len} bytes at offset {:#x} of {path}",
            offset.0
        )
    })?;
    Ok(FunctionCode {
        bitness,
        start,
        end: Svma(start.0 + len),
        offset,
        bytes,
    })
}

impl ElfSymbolizer {
    /// `code`'s instructions, each with its inline chain and line, and
    /// where its direct jumps and calls out of it go.
    pub(crate) fn listing_of(
        &self,
        elf: &ElfModule<'_>,
        code: &FunctionCode<'_>,
        syntax: AsmSyntax,
    ) -> FunctionListing {
        let (start, end) = (code.start, code.end);
        let mut instructions = decode_as(syntax, code.bitness, code.bytes, start, code.offset);
        let svmas: Vec<Svma> = instructions.iter().map(|i| i.svma).collect();
        let resolved = elf.resolve(&svmas, Detail::Frames, self.options().naming());
        let name = resolved
            .first()
            .and_then(|symbol| symbol.function.as_ref())
            .and_then(|function| function.name.as_deref())
            .map(str::to_owned);
        for (instruction, symbol) in instructions.iter_mut().zip(resolved) {
            instruction.frames = symbol.frames;
            instruction.callee = match instruction.flow {
                Flow::Jump(to) | Flow::Call(to) if !(start..end).contains(&to) => {
                    callee(elf, to, self.options().full_signatures)
                }
                _ => None,
            };
        }
        let has_lines = instructions
            .iter()
            .any(|i| i.frames.iter().any(|f| f.line.is_some()));
        FunctionListing {
            name,
            start,
            end,
            has_lines,
            instructions,
        }
    }
}

/// Decodes `code` (see [`decode`]) in `syntax`.
pub(crate) fn decode_as(
    syntax: AsmSyntax,
    bitness: u32,
    code: &[u8],
    start: Svma,
    offset: FileOffset,
) -> Vec<Instruction> {
    match syntax {
        AsmSyntax::Att => decode(bitness, code, start, offset, GasFormatter::new()),
        AsmSyntax::Intel => decode(bitness, code, start, offset, IntelFormatter::new()),
    }
}

/// Decodes `code`, which lies at `start` (and at `offset` in the file),
/// writing each instruction with `formatter`. Bytes that are no instruction
/// become `(bad)` ones, so the instructions cover all of `code`.
fn decode(
    bitness: u32,
    code: &[u8],
    start: Svma,
    offset: FileOffset,
    mut formatter: impl Formatter,
) -> Vec<Instruction> {
    let options = formatter.options_mut();
    options.set_uppercase_hex(false);
    options.set_small_hex_numbers_in_decimal(false);
    options.set_branch_leading_zeros(false);
    options.set_show_branch_size(false);
    options.set_hex_prefix("0x");
    options.set_hex_suffix("");

    let mut decoder = Decoder::with_ip(bitness, code, start.0, DecoderOptions::NONE);
    let mut decoded = iced_x86::Instruction::default();
    let mut instructions = Vec::new();
    while decoder.can_decode() {
        let at = decoder.position();
        decoder.decode_out(&mut decoded);
        // A last instruction cut off by the end of the function (its extent
        // capped, or a wrong one) would decode as nothing: its bytes stay
        // one `(bad)` instruction.
        let len = match decoder.last_error() {
            DecoderError::NoMoreBytes => code.len() - at,
            _ => decoded.len(),
        };
        let mut text = String::new();
        match decoded.is_invalid() {
            true => text.push_str("(bad)"),
            false => formatter.format(&decoded, &mut text),
        }
        let delta = at as u64;
        instructions.push(Instruction {
            // An archive may state code at the end of the address space.
            svma: Svma(start.0.wrapping_add(delta)),
            offset: FileOffset(offset.0.wrapping_add(delta)),
            len: u8::try_from(len).unwrap_or(u8::MAX),
            text,
            flow: flow(&decoded),
            callee: None,
            frames: Vec::new(),
        });
        if decoder.last_error() == DecoderError::NoMoreBytes {
            break;
        }
    }
    instructions
}

/// `name` or `name+0xOFFSET` of the function holding `target`.
fn callee(elf: &ElfModule<'_>, target: Svma, full_signatures: bool) -> Option<String> {
    let function = elf.function(target)?;
    let name = demangle(function.name.as_deref()?, full_signatures);
    Some(match target.0 - function.start {
        0 => name,
        offset => format!("{name}+{offset:#x}"),
    })
}

/// Where a direct branch or call goes.
fn flow(instruction: &iced_x86::Instruction) -> Flow {
    let near = matches!(
        instruction.op0_kind(),
        OpKind::NearBranch16 | OpKind::NearBranch32 | OpKind::NearBranch64
    );
    if !near {
        return Flow::Next;
    }
    let target = Svma(instruction.near_branch_target());
    match instruction.flow_control() {
        FlowControl::UnconditionalBranch | FlowControl::ConditionalBranch => Flow::Jump(target),
        FlowControl::Call => Flow::Call(target),
        _ => Flow::Next,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elf_module::{ElfModule, ModuleFiles};
    use crate::symbolizer::tests::own_mapping;

    #[inline(never)]
    fn a_function_with_a_loop(n: u64) -> u64 {
        let mut sum = 0u64;
        let mut i = 0;
        while i < n {
            sum = sum.wrapping_add(std::hint::black_box(i).wrapping_mul(i));
            i += 1;
        }
        sum
    }

    /// This test binary as a module, and the stated address of `function`.
    fn own_code(function: *const ()) -> (Module, Svma) {
        let address = function as u64;
        let (start, offset, path) = own_mapping(address);
        let files = ModuleFiles::open(path.as_ref(), &[]).unwrap();
        let elf = ElfModule::parse(&files).unwrap();
        let svma = elf.svmas(&[FileOffset(address - start + offset)])[0].unwrap();
        let module = Module {
            path,
            build_id: elf.image.build_id(),
            pid: None,
        };
        (module, svma)
    }

    #[test]
    fn a_function_of_this_very_binary_is_disassembled() {
        std::hint::black_box(a_function_with_a_loop(3));
        let (module, svma) = own_code(a_function_with_a_loop as *const ());
        let symbolizer = ElfSymbolizer::default();
        let listing = symbolizer
            .listing(&module, Svma(svma.0 + 1), AsmSyntax::Att)
            .unwrap();
        let name = listing.name.as_deref().unwrap();
        assert!(name.ends_with("::a_function_with_a_loop"), "{name}");
        assert_eq!(listing.start, svma);
        assert!(listing.end > listing.start);

        let instructions = &listing.instructions;
        assert_eq!(instructions[0].svma, listing.start);
        for pair in instructions.windows(2) {
            assert_eq!(pair[0].svma.0 + u64::from(pair[0].len), pair[1].svma.0);
            assert_eq!(pair[0].offset.0 + u64::from(pair[0].len), pair[1].offset.0);
        }
        let last = instructions.last().unwrap();
        assert_eq!(last.svma.0 + u64::from(last.len), listing.end.0);
        assert!(instructions.iter().all(|i| !i.text.contains("(bad)")));

        let inside = listing.start..listing.end;
        assert!(
            instructions
                .iter()
                .any(|i| matches!(i.flow, Flow::Jump(target) if inside.contains(&target))),
            "{instructions:#?}"
        );

        assert!(listing.has_lines);
        let innermost = instructions[0].frames.first().unwrap();
        assert!(
            innermost
                .file
                .as_deref()
                .unwrap()
                .ends_with("disassemble.rs"),
            "{innermost:?}"
        );
        assert!(innermost.line.is_some());

        let intel = symbolizer.listing(&module, svma, AsmSyntax::Intel).unwrap();
        assert_eq!(intel.instructions.len(), instructions.len());
        assert!(instructions.iter().any(|i| i.text.contains('%')));
        assert!(intel.instructions.iter().all(|i| !i.text.contains('%')));
    }

    #[test]
    fn direct_branches_print_their_targets() {
        // jmp +0; je -8; call +0x10; call *%rax
        let code = b"\xeb\x00\x74\xf8\xe8\x10\x00\x00\x00\xff\xd0";
        let at = Svma(0x401000);
        let instructions = decode(64, code, at, FileOffset(0x1000), GasFormatter::new());
        let flows: Vec<Flow> = instructions.iter().map(|i| i.flow).collect();
        assert_eq!(
            flows,
            [
                Flow::Jump(Svma(0x401002)),
                Flow::Jump(Svma(0x400ffc)),
                Flow::Call(Svma(0x401019)),
                Flow::Next,
            ]
        );
        assert_eq!(instructions[0].text, "jmp 0x401002");
        assert_eq!(instructions[3].offset, FileOffset(0x1009));
    }

    #[test]
    fn a_cut_off_last_instruction_is_bad_but_covered() {
        // nop; then the first two bytes of a five-byte call.
        let instructions = decode(
            64,
            b"\x90\xe8\x10",
            Svma(0x10),
            FileOffset(0),
            GasFormatter::new(),
        );
        assert_eq!(instructions.len(), 2);
        assert_eq!(instructions[1].text, "(bad)");
        assert_eq!(instructions[1].len, 2);
    }

    #[test]
    fn addresses_in_no_function_and_missing_files_are_errors() {
        let (module, _) = own_code(a_function_with_a_loop as *const ());
        let error = ElfSymbolizer::default()
            .listing(&module, Svma(0x1), AsmSyntax::Att)
            .unwrap_err();
        assert!(error.starts_with("no function of "), "{error}");
        assert!(error.ends_with(" holds 0x1"), "{error}");

        let missing = Module {
            path: "/no/such/file.so".into(),
            build_id: None,
            pid: None,
        };
        let error = ElfSymbolizer::default()
            .listing(&missing, Svma(0x1000), AsmSyntax::Att)
            .unwrap_err();
        assert!(error.contains("/no/such/file.so"), "{error}");

        let jit = Module {
            path: "//anon".into(),
            build_id: None,
            pid: Some(1),
        };
        let error = ElfSymbolizer::default()
            .listing(&jit, Svma(0x1000), AsmSyntax::Att)
            .unwrap_err();
        assert!(error.contains("JIT"), "{error}");
    }

    #[test]
    fn a_changed_file_is_an_error() {
        let (mut module, svma) = own_code(a_function_with_a_loop as *const ());
        module.build_id = Some(profiler_model::BuildId(vec![0; 20]));
        let error = ElfSymbolizer::default()
            .listing(&module, svma, AsmSyntax::Att)
            .unwrap_err();
        assert!(error.contains("has changed since the recording"), "{error}");
    }
}
