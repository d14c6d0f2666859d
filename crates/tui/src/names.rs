//! Naming what the samples hit: each sampled place resolved once to the
//! function holding it (symbol tables, unwind tables, kallsyms) and cached
//! by place, asked of the symbolizer a module at a time, only for places it
//! has not seen.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use rustc_hash::FxHashMap;

use profiler_model::{Avma, Detail, FileOffset, Location, Module, ModuleId, Svma, Symbolizer};

use crate::printable::printable;

/// A function, an index into [`Names::functions`].
pub(crate) type FunctionId = u32;

/// How many places the cache holds before those no count holds any more
/// are let go: a bound on its memory over hours of whole-CPU sampling (a
/// place let go is only named again, the counts stay).
pub(crate) const CACHED_PLACES: usize = 1 << 16;

/// How many functions are known before those no count refers to any
/// more are let go (see [`Names::keep`]).
pub(crate) const MAX_FUNCTIONS: usize = 1 << 16;

/// A module is named again only after this many times what naming it took
/// last: the symbol tables of a large library (a compiler's, a browser's)
/// take a while to read, and a busy machine keeps reaching new code in it,
/// so its new places wait and `top` stays within about 2% of a CPU.
const NAMING_SHARE: u32 = 50;

/// What tells one function from another.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum FunctionKey {
    /// A function of a module, by its first address (relative to the
    /// module's image base).
    Start(ModuleId, u64),
    /// A module's code that no symbol or unwind entry covers.
    Unnamed(ModuleId),
    Kernel(Arc<str>),
    UnnamedKernel,
    Unmapped,
}

/// A function as the screens show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Function {
    /// Its name, printable (control characters escaped).
    pub name: Arc<str>,
    /// Its module, `None` for the kernel and for unmapped code.
    pub module: Option<ModuleId>,
    /// Where the module's symbols could not be read, nothing is named in it.
    pub named: bool,
}

/// A place, named: its function, and its address as the file states it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Named {
    pub function: FunctionId,
    pub svma: Option<Svma>,
}

/// Functions met so far, and the places named.
#[derive(Debug, Default)]
pub(crate) struct Names {
    pub functions: Vec<Function>,
    index: FxHashMap<FunctionKey, FunctionId>,
    places: FxHashMap<Location, Named>,
    /// Indexed by `ModuleId`: every module seen.
    pub modules: Vec<Module>,
    /// Printable module names, indexed like `modules`.
    pub module_names: Vec<Arc<str>>,
    /// Why a module's code is unnamed, by module.
    pub problems: BTreeMap<ModuleId, String>,
    /// When each module may be named again.
    next_naming: FxHashMap<ModuleId, Instant>,
}

impl Names {
    /// Learns of modules `modules[self.modules.len()..]`.
    pub(crate) fn add_modules(&mut self, modules: &[Module]) {
        for module in modules.iter().skip(self.modules.len()) {
            self.module_names.push(Arc::from(printable(module.name())));
            self.modules.push(module.clone());
        }
    }

    /// How many places are named.
    pub(crate) fn named_places(&self) -> usize {
        self.places.len()
    }

    /// Keeps the names of the places `keep` holds true for.
    pub(crate) fn keep_places(&mut self, keep: impl Fn(&Location) -> bool) {
        self.places.retain(|place, _| keep(place));
        self.places.shrink_to(CACHED_PLACES);
    }

    /// The name of `place`, if it has been named.
    pub(crate) fn get(&self, place: &Location) -> Option<Named> {
        self.places.get(place).copied()
    }

    /// Names the places of `places` not named yet, but those of modules
    /// named too recently for what naming them costs (unless `all`).
    pub(crate) fn name<'a>(
        &mut self,
        places: impl Iterator<Item = &'a Location>,
        symbolizer: &dyn Symbolizer,
        all: bool,
    ) {
        let mut by_module: BTreeMap<ModuleId, Vec<FileOffset>> = BTreeMap::new();
        let mut kernel = Vec::new();
        let mut unmapped = false;
        for place in places {
            if self.places.contains_key(place) {
                continue;
            }
            match *place {
                Location::Module { module, offset } => {
                    by_module.entry(module).or_default().push(offset);
                }
                Location::Kernel { address } => kernel.push(address),
                Location::Unmapped => unmapped = true,
            }
        }
        let now = Instant::now();
        let mut named_any = false;
        for (module, mut offsets) in by_module {
            if !all
                && self
                    .next_naming
                    .get(&module)
                    .is_some_and(|&next| now < next)
            {
                continue;
            }
            offsets.sort_unstable();
            offsets.dedup();
            let started = Instant::now();
            self.name_module(module, &offsets, symbolizer);
            let took = started.elapsed();
            self.next_naming
                .insert(module, started + took * NAMING_SHARE);
            named_any = true;
        }
        if named_any {
            // Reading a module's tables allocates far more than the names
            // kept: let it go, or the heap stays at the largest module's.
            profiler_sampler::release_freed_memory();
        }
        kernel.sort_unstable();
        kernel.dedup();
        self.name_kernel(&kernel, symbolizer);
        if unmapped {
            let function = self.function(FunctionKey::Unmapped, || Function {
                name: Arc::from("[unknown]"),
                module: None,
                named: false,
            });
            let named = Named {
                function,
                svma: None,
            };
            self.places.insert(Location::Unmapped, named);
        }
    }

    fn name_module(&mut self, id: ModuleId, offsets: &[FileOffset], symbolizer: &dyn Symbolizer) {
        let Some(module) = self.modules.get(id as usize).cloned() else {
            return;
        };
        let answer = symbolizer.symbolize(&module, offsets, Detail::Functions);
        if let Some(problem) = answer.problem {
            self.problems.insert(id, printable(&problem));
        }
        let module_name = self.module_names[id as usize].clone();
        for (offset, symbol) in offsets.iter().zip(&answer.addresses) {
            let function = match &symbol.function {
                Some(function) => {
                    let start = function.start.0;
                    self.function(FunctionKey::Start(id, start), || Function {
                        name: match &function.name {
                            Some(name) => Arc::from(printable(name)),
                            None => Arc::from(format!("{module_name}+{start:#x}")),
                        },
                        module: Some(id),
                        named: true,
                    })
                }
                None => self.function(FunctionKey::Unnamed(id), || Function {
                    name: Arc::from(format!("[{module_name}]")),
                    module: Some(id),
                    named: false,
                }),
            };
            let place = Location::Module {
                module: id,
                offset: *offset,
            };
            let svma = symbol.svma;
            self.places.insert(place, Named { function, svma });
        }
    }

    fn name_kernel(&mut self, addresses: &[Avma], symbolizer: &dyn Symbolizer) {
        if addresses.is_empty() {
            return;
        }
        let names = symbolizer.symbolize_kernel(addresses);
        for (address, name) in addresses.iter().zip(names) {
            let function = match name {
                Some(name) => {
                    let name: Arc<str> = Arc::from(printable(&name));
                    self.function(FunctionKey::Kernel(name.clone()), || Function {
                        name,
                        module: None,
                        named: true,
                    })
                }
                None => self.function(FunctionKey::UnnamedKernel, || Function {
                    name: Arc::from("[kernel]"),
                    module: None,
                    named: false,
                }),
            };
            let place = Location::Kernel { address: *address };
            let named = Named {
                function,
                svma: None,
            };
            self.places.insert(place, named);
        }
    }

    fn function(&mut self, key: FunctionKey, make: impl FnOnce() -> Function) -> FunctionId {
        if let Some(&id) = self.index.get(&key) {
            return id;
        }
        let id = self.functions.len() as FunctionId;
        self.functions.push(make());
        self.index.insert(key, id);
        id
    }

    /// Keeps only the functions `used` holds true for, and the places named
    /// after them; returns each old id's new one.
    pub(crate) fn keep(&mut self, used: &[bool]) -> Vec<Option<FunctionId>> {
        let mut remap = vec![None; self.functions.len()];
        let mut kept = Vec::new();
        for (id, function) in std::mem::take(&mut self.functions).into_iter().enumerate() {
            if used.get(id).copied().unwrap_or(false) {
                remap[id] = Some(kept.len() as FunctionId);
                kept.push(function);
            }
        }
        self.functions = kept;
        self.index.retain(|_, id| match remap[*id as usize] {
            Some(new) => {
                *id = new;
                true
            }
            None => false,
        });
        self.places
            .retain(|_, named| match remap[named.function as usize] {
                Some(new) => {
                    named.function = new;
                    true
                }
                None => false,
            });
        self.functions.shrink_to_fit();
        remap
    }

    /// The module name shown for `function`.
    pub(crate) fn module_of(&self, function: FunctionId) -> Arc<str> {
        let module = self.functions.get(function as usize).and_then(|f| f.module);
        match (module, self.functions.get(function as usize)) {
            (Some(module), _) => self.module_names[module as usize].clone(),
            (None, Some(f)) if f.name.as_ref() != "[unknown]" => Arc::from("[kernel]"),
            _ => Arc::from("[unknown]"),
        }
    }
}
