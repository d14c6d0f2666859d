//! Naming sampled locations: the deduplicated offsets of each module go to
//! the symbolizer once, and every location gets the function it belongs to.

use std::collections::{BTreeSet, HashMap};

use profiler_model::{AddressSymbol, FileOffset, Location, ModuleId, ModuleTable, Symbolizer};

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

pub(crate) fn name_locations<'a>(
    modules: &ModuleTable,
    locations: impl Iterator<Item = &'a Location>,
    symbolizer: &dyn Symbolizer,
) -> Names {
    let mut by_module: HashMap<ModuleId, BTreeSet<FileOffset>> = HashMap::new();
    let mut functions = HashMap::new();
    for &location in locations {
        match location {
            Location::Module { module, offset } => {
                by_module.entry(module).or_default().insert(offset);
            }
            Location::Kernel => {
                let name = "[kernel]".to_owned();
                functions.insert(
                    location,
                    FunctionKey {
                        module: ModuleKey::Kernel,
                        name,
                    },
                );
            }
            Location::Unmapped => {
                let name = "[unknown]".to_owned();
                functions.insert(
                    location,
                    FunctionKey {
                        module: ModuleKey::Unmapped,
                        name,
                    },
                );
            }
        }
    }
    let mut sampled: Vec<(ModuleId, Vec<FileOffset>)> = by_module
        .into_iter()
        .map(|(id, offsets)| (id, offsets.into_iter().collect()))
        .collect();
    sampled.sort_by_key(|(id, _)| *id);

    let mut problems = Vec::new();
    for (id, offsets) in sampled {
        let module = modules.get(id);
        let symbols = symbolizer.symbolize(module, &offsets);
        if let Some(problem) = symbols.problem {
            problems.push(problem);
        }
        for (offset, symbol) in offsets.iter().zip(symbols.addresses.iter()) {
            let name = display_name(module.name(), *offset, symbol);
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
            relative: Some(RelativeAddress(0x1139)),
            function: Some(FunctionSymbol {
                name: Some("main".into()),
                start: RelativeAddress(0x1130),
            }),
        };
        assert_eq!(display_name("app", FileOffset(0x1139), &named), "main");
        let unnamed_function = AddressSymbol {
            svma: None,
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
