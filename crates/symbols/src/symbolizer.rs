//! The symbolizer the reports use: one module at a time, from the files on
//! disk, checked against the build-id the recording kept.

use std::collections::HashMap;

use profiler_model::{
    AddressSymbol, FileOffset, FunctionSymbol, Module, ModuleSymbols, Svma, Symbolizer,
};

use crate::demangle::demangle;
use crate::dwarf::{self, DebugInfo};
use crate::error::SymbolsError;
use crate::functions::FunctionTable;
use crate::image::Image;

/// Symbolizes modules from their ELF symbol tables, unwind tables and DWARF.
#[derive(Clone, Copy, Debug, Default)]
pub struct ElfSymbolizer;

impl Symbolizer for ElfSymbolizer {
    fn symbolize(&self, module: &Module, offsets: &[FileOffset]) -> ModuleSymbols {
        if !module.has_file() {
            return unnamed(offsets, None);
        }
        let data = match std::fs::read(&module.path) {
            Ok(data) => data,
            Err(error) => {
                let error = SymbolsError::Read {
                    path: module.path.clone(),
                    error,
                };
                return unnamed(offsets, Some(error));
            }
        };
        match symbolize_image(module, &data, offsets) {
            Ok(symbols) => symbols,
            Err(error) => unnamed(offsets, Some(error)),
        }
    }
}

fn symbolize_image(
    module: &Module,
    data: &[u8],
    offsets: &[FileOffset],
) -> Result<ModuleSymbols, SymbolsError> {
    let image = Image::parse(data).map_err(|error| SymbolsError::Parse {
        path: module.path.clone(),
        error,
    })?;
    if let (Some(recorded), Some(found)) = (&module.build_id, image.build_id())
        && *recorded != found
    {
        let (path, recorded) = (module.path.clone(), recorded.clone());
        return Err(SymbolsError::BuildIdMismatch {
            path,
            recorded,
            found,
        });
    }
    let functions = FunctionTable::new(&image);
    let debug_info = DebugInfo::new(&image);
    let mut context = None;
    let mut names: HashMap<&str, String> = HashMap::new();
    let addresses = offsets
        .iter()
        .map(|&offset| {
            let Some(svma) = image.svma(offset) else {
                return AddressSymbol::default();
            };
            let function = functions.find(svma.0);
            let start = image.relative(Svma(function.map_or(svma.0, |f| f.start)));
            let name = match function.and_then(|f| f.name) {
                Some(raw) => Some(names.entry(raw).or_insert_with(|| demangle(raw)).clone()),
                None => context
                    .get_or_insert_with(|| debug_info.context())
                    .as_ref()
                    .and_then(|c| dwarf::function_name(c, svma.0)),
            };
            let function =
                (function.is_some() || name.is_some()).then_some(FunctionSymbol { name, start });
            AddressSymbol {
                svma: Some(svma),
                relative: Some(image.relative(svma)),
                function,
            }
        })
        .collect();
    Ok(ModuleSymbols {
        problem: None,
        addresses,
    })
}

fn unnamed(offsets: &[FileOffset], problem: Option<SymbolsError>) -> ModuleSymbols {
    ModuleSymbols {
        problem: problem.map(|e| e.to_string()),
        addresses: vec![AddressSymbol::default(); offsets.len()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where this test binary's code is mapped: (start, end, file offset, path).
    fn own_mapping(address: u64) -> (u64, u64, String) {
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        for line in maps.lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (start, end) = fields[0].split_once('-').unwrap();
            let (start, end) = (
                u64::from_str_radix(start, 16).unwrap(),
                u64::from_str_radix(end, 16).unwrap(),
            );
            if (start..end).contains(&address) {
                let offset = u64::from_str_radix(fields[2], 16).unwrap();
                return (start, offset, fields[5].to_owned());
            }
        }
        panic!("{address:#x} is not mapped");
    }

    #[inline(never)]
    fn a_function_with_a_known_name(x: u64) -> u64 {
        std::hint::black_box(x).wrapping_mul(3)
    }

    #[test]
    fn functions_of_this_very_binary_are_named() {
        let address = a_function_with_a_known_name as *const () as u64;
        std::hint::black_box(a_function_with_a_known_name(1));
        let (start, offset, path) = own_mapping(address);
        let module = Module {
            path,
            build_id: None,
        };
        let offsets = [
            FileOffset(address - start + offset),
            FileOffset(address - start + offset + 1),
        ];
        let symbols = ElfSymbolizer.symbolize(&module, &offsets);
        assert_eq!(symbols.problem, None);
        for symbol in &symbols.addresses {
            let function = symbol.function.as_ref().unwrap();
            let name = function.name.as_deref().unwrap();
            assert!(name.ends_with("::a_function_with_a_known_name"), "{name}");
            assert!(!name.contains("::h"), "hash not dropped: {name}");
        }
        let first = &symbols.addresses[0];
        assert_eq!(first.relative, Some(first.function.as_ref().unwrap().start));
    }

    #[test]
    fn a_missing_file_or_a_changed_one_is_a_problem_not_a_wrong_name() {
        let missing = Module {
            path: "/no/such/file.so".into(),
            build_id: None,
        };
        let symbols = ElfSymbolizer.symbolize(&missing, &[FileOffset(0x1000)]);
        assert!(
            symbols
                .problem
                .unwrap()
                .contains("cannot read /no/such/file.so")
        );
        assert_eq!(symbols.addresses, vec![AddressSymbol::default()]);

        let path = std::env::current_exe()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let changed = Module {
            path,
            build_id: Some(profiler_model::BuildId(vec![0; 20])),
        };
        let symbols = ElfSymbolizer.symbolize(&changed, &[FileOffset(0x1000)]);
        let problem = symbols.problem.unwrap();
        assert!(
            problem.contains("has changed since the recording"),
            "{problem}"
        );
    }

    #[test]
    fn regions_without_files_stay_unnamed_quietly() {
        let vdso = Module {
            path: "[vdso]".into(),
            build_id: None,
        };
        let symbols = ElfSymbolizer.symbolize(&vdso, &[FileOffset(0x10)]);
        assert_eq!(symbols.problem, None);
        assert_eq!(symbols.addresses.len(), 1);
    }
}
