//! Naming sampled locations: the deduplicated offsets of each module go to
//! the symbolizer once (modules in parallel), and every location gets the
//! function it belongs to: by default the innermost inlined function the
//! instruction came from, or the function that contains it.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use profiler_model::{
    AddressSymbol, Avma, Detail, FileOffset, Location, ModuleId, ModuleSymbols, ModuleTable,
    Symbolizer,
};

/// The module a function belongs to, or a pseudo-module.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ModuleKey {
    Module(ModuleId),
    Kernel,
    Unmapped,
}

/// A function as reports group samples: by module and display name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FunctionKey {
    pub module: ModuleKey,
    pub name: String,
}

pub(crate) struct Names {
    pub functions: HashMap<Location, FunctionKey>,
    /// Why some modules' code is unnamed (file missing, changed...).
    pub problems: Vec<String>,
}

/// Names every location. With `inline`, code inlined into a function is
/// named after the function it was inlined from (its innermost frame).
pub(crate) fn name_locations<'a>(
    modules: &ModuleTable,
    locations: impl Iterator<Item = &'a Location>,
    symbolizer: &dyn Symbolizer,
    inline: bool,
) -> Names {
    let mut by_module: HashMap<ModuleId, BTreeSet<FileOffset>> = HashMap::new();
    let mut kernel: BTreeSet<Avma> = BTreeSet::new();
    let mut functions = HashMap::new();
    for &location in locations {
        match location {
            Location::Module { module, offset } => {
                by_module.entry(module).or_default().insert(offset);
            }
            Location::Kernel { address } => {
                kernel.insert(address);
            }
            Location::Unmapped => {
                let key = FunctionKey {
                    module: ModuleKey::Unmapped,
                    name: "[unknown]".into(),
                };
                functions.insert(location, key);
            }
        }
    }
    let kernel: Vec<Avma> = kernel.into_iter().collect();
    let kernel_names = match kernel.is_empty() {
        true => Vec::new(),
        false => symbolizer.symbolize_kernel(&kernel),
    };
    for (address, name) in kernel.iter().zip(kernel_names) {
        let name = name.unwrap_or_else(|| "[kernel]".into());
        functions.insert(
            Location::Kernel { address: *address },
            FunctionKey {
                module: ModuleKey::Kernel,
                name,
            },
        );
    }

    let mut problems = Vec::new();
    let detail = if inline {
        Detail::Frames
    } else {
        Detail::Functions
    };
    for (id, offsets, symbols) in symbolize_modules(modules, by_module, symbolizer, detail) {
        problems.extend(symbols.problem);
        let module = modules.get(id);
        for (offset, symbol) in offsets.iter().zip(&symbols.addresses) {
            let name = match symbol.frames.first().and_then(|f| f.function.clone()) {
                Some(innermost) if inline => innermost.to_string(),
                _ => display_name(module.name(), *offset, symbol),
            };
            let location = Location::Module {
                module: id,
                offset: *offset,
            };
            functions.insert(
                location,
                FunctionKey {
                    module: ModuleKey::Module(id),
                    name,
                },
            );
        }
    }
    Names {
        functions,
        problems,
    }
}

/// Symbolizes each module's offsets, several modules at a time, the largest
/// first; the answers come back in module order.
fn symbolize_modules(
    modules: &ModuleTable,
    by_module: HashMap<ModuleId, BTreeSet<FileOffset>>,
    symbolizer: &dyn Symbolizer,
    detail: Detail,
) -> Vec<(ModuleId, Vec<FileOffset>, ModuleSymbols)> {
    let mut work: Vec<(ModuleId, Vec<FileOffset>)> = by_module
        .into_iter()
        .map(|(id, offsets)| (id, offsets.into_iter().collect()))
        .collect();
    work.sort_by_key(|(id, offsets)| (std::cmp::Reverse(offsets.len()), *id));
    let queue = Mutex::new(work.into_iter());
    let done = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                while let Some((id, offsets)) = queue.lock().ok().and_then(|mut q| q.next()) {
                    let symbols = symbolizer.symbolize(modules.get(id), &offsets, detail);
                    if let Ok(mut done) = done.lock() {
                        done.push((id, offsets, symbols));
                    }
                }
            });
        }
    });
    let mut done = done.into_inner().unwrap_or_default();
    done.sort_by_key(|(id, _, _)| *id);
    done
}

/// The function's name; for code without one, `module+0xSTART` (the start
/// of its unnamed function, or the address itself).
fn display_name(module: &str, offset: FileOffset, symbol: &AddressSymbol) -> String {
    match (&symbol.function, symbol.relative) {
        (Some(function), _) => match &function.name {
            Some(name) => name.clone(),
            None => format!("{module}+{:#x}", function.start.0),
        },
        (None, Some(relative)) => format!("{module}+{:#x}", relative.0),
        (None, None) => format!("{module}+{:#x}", offset.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use profiler_model::{FunctionSymbol, RelativeAddress};

    #[test]
    fn unnamed_code_is_shown_as_module_plus_offset() {
        let named = AddressSymbol {
            svma: None,
            frames: Vec::new(),
            relative: Some(RelativeAddress(0x1139)),
            function: Some(FunctionSymbol {
                name: Some("main".into()),
                start: RelativeAddress(0x1130),
            }),
        };
        assert_eq!(display_name("app", FileOffset(0x1139), &named), "main");
        let unnamed_function = AddressSymbol {
            svma: None,
            frames: Vec::new(),
            relative: Some(RelativeAddress(0x1139)),
            function: Some(FunctionSymbol {
                name: None,
                start: RelativeAddress(0x1130),
            }),
        };
        assert_eq!(
            display_name("app", FileOffset(0x1139), &unnamed_function),
            "app+0x1130"
        );
        let nothing = AddressSymbol {
            svma: None,
            frames: Vec::new(),
            relative: Some(RelativeAddress(0x1139)),
            function: None,
        };
        assert_eq!(
            display_name("app", FileOffset(0x2139), &nothing),
            "app+0x1139"
        );
        assert_eq!(
            display_name("app", FileOffset(0x2139), &AddressSymbol::default()),
            "app+0x2139"
        );
    }
}
