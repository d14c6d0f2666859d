//! Naming sampled locations: the deduplicated offsets of each module go to
//! the symbolizer once (modules in parallel, each module's answer turned
//! into names as soon as it comes, then dropped), and every location gets the
//! function that contains it (the symbol or unwind-table function, as `perf
//! report` and gprof name code) and, when asked for, the chain of functions
//! inlined into it down to the one the instruction came from, each marked as
//! inlined. Function names are kept once each; locations refer to them by
//! index. Where reports go
//! below functions (by source line, by address, annotated listings), each
//! location also keeps its place: its address and source line.

use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::{Arc, Mutex, mpsc};

use profiler_model::{
    AddressSymbol, Avma, Detail, FileOffset, Location, ModuleId, ModuleSymbols, ModuleTable, Svma,
    Symbolizer,
};

/// How much of each sample's place [`read_stacks`](crate::read_stacks)
/// keeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Places {
    #[default]
    None,
    /// Its address, and how far into its function it lies: the symbol
    /// tables suffice.
    Addresses,
    /// Also its source line, from the debug info.
    Lines,
}

/// The module a function belongs to, or a pseudo-module.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum ModuleKey {
    Module(ModuleId),
    Kernel,
    Unmapped,
}

/// A function as reports group samples: by module and display name, and
/// whether it is a frame of code inlined into another function (which has
/// no code of its own there) or the function holding the code.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct FunctionKey {
    pub module: ModuleKey,
    pub name: String,
    pub inlined: bool,
}

/// Where a location is, below its function.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Place {
    /// The address as the file states it (`nm`, `objdump`), when known.
    pub svma: Option<Svma>,
    /// The function holding the address (not the one inlined into it),
    /// when it has a name, and how far into it the address lies, when its
    /// start is known.
    pub function: Option<Arc<str>>,
    pub function_offset: Option<u64>,
    /// The source line of the instruction (its innermost inline frame's).
    pub file: Option<Arc<str>>,
    pub line: Option<u32>,
}

/// What exports say of a function besides its name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct FunctionDetail {
    /// The name as the linker knows it (mangled), where it differs.
    pub linkage_name: Option<Arc<str>>,
    /// The source file of its code, from the debug info.
    pub file: Option<Arc<str>>,
}

/// A function of a profile: where its [`FunctionKey`] lies among the
/// profile's functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct FunctionId(u32);

impl FunctionId {
    pub(crate) fn new(index: usize) -> FunctionId {
        FunctionId(index as u32)
    }

    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }
}

/// The functions of a location.
enum Frames {
    /// The function holding its code.
    Holder(FunctionId),
    /// Where code was inlined (and inline frames were asked for): the whole
    /// chain, innermost first, the holder last.
    Inlined(Box<[FunctionId]>),
}

/// The function of every location.
#[derive(Default)]
pub(crate) struct Names {
    /// One map for both kinds: every frame of every stack is looked up.
    of_location: FxHashMap<Location, Frames>,
    /// When asked for: the source line of each of a location's frames
    /// (0 where unknown), as [`Names::frames`] lists them.
    lines: FxHashMap<Location, Box<[u32]>>,
    functions: Vec<FunctionKey>,
    /// Indexed like `functions`.
    details: Vec<FunctionDetail>,
    interned: FxHashMap<FunctionKey, FunctionId>,
    /// Why some modules' code is unnamed (file missing, changed...).
    pub problems: Vec<String>,
    /// Where each location is, when asked for.
    pub places: FxHashMap<Location, Place>,
}

impl Names {
    /// The functions of `location` as frames, innermost first: the
    /// function alone, or the chain of inlined calls leading to the code.
    pub(crate) fn frames(&self, location: &Location) -> &[FunctionId] {
        match &self.of_location[location] {
            Frames::Holder(id) => std::slice::from_ref(id),
            Frames::Inlined(chain) => chain,
        }
    }

    /// The source line of each of [`Names::frames`], where lines were
    /// asked for (0 where unknown).
    pub(crate) fn lines(&self, location: &Location) -> Option<&[u32]> {
        self.lines.get(location).map(|lines| &lines[..])
    }

    /// Every function, indexed by the ids [`Names::frames`] returns.
    pub(crate) fn functions(&self) -> &[FunctionKey] {
        &self.functions
    }

    /// What is known of each function besides its name, indexed like
    /// [`Names::functions`].
    pub(crate) fn details(&self) -> &[FunctionDetail] {
        &self.details
    }

    fn intern(&mut self, key: FunctionKey) -> FunctionId {
        match self.interned.get(&key) {
            Some(&id) => id,
            None => {
                let id = FunctionId::new(self.functions.len());
                self.functions.push(key.clone());
                self.details.push(FunctionDetail::default());
                self.interned.insert(key, id);
                id
            }
        }
    }

    /// Notes what a frame says of function `id`, where nothing was known.
    fn note(&mut self, id: FunctionId, linkage_name: Option<&Arc<str>>, file: Option<&Arc<str>>) {
        let detail = &mut self.details[id.index()];
        if detail.linkage_name.is_none() {
            detail.linkage_name = linkage_name.cloned();
        }
        if detail.file.is_none() {
            detail.file = file.cloned();
        }
    }

    fn insert(&mut self, location: Location, key: FunctionKey) {
        let id = self.intern(key);
        self.of_location.insert(location, Frames::Holder(id));
    }
}

/// Names every location after the function holding its code. With
/// `inline`, code inlined into that function also gets the chain of inlined
/// functions it came from, as frames of their own (marked inlined) before
/// the holder. With `places`, each location of a module also keeps its [`Place`]
/// (with its source line only for [`Places::Lines`]); with `lines`, the
/// source line of each of its frames.
///
/// Function ids follow the functions' order (module, name), not the order
/// in which modules were named: what is printed must not depend on it.
pub(crate) fn name_locations<'a>(
    modules: &ModuleTable,
    locations: impl Iterator<Item = &'a Location>,
    symbolizer: &dyn Symbolizer,
    inline: bool,
    places: Places,
    lines: bool,
) -> Names {
    let mut names = Names::default();
    let mut by_module: FxHashMap<ModuleId, Vec<FileOffset>> = FxHashMap::default();
    let mut kernel: Vec<Avma> = Vec::new();
    // Each location once: stacks share most of their frames.
    let locations: FxHashSet<Location> = locations.copied().collect();
    for location in locations {
        match location {
            Location::Module { module, offset } => {
                by_module.entry(module).or_default().push(offset);
            }
            Location::Kernel { address } => {
                kernel.push(address);
            }
            Location::Unmapped => {
                names.insert(
                    location,
                    FunctionKey {
                        module: ModuleKey::Unmapped,
                        name: "[unknown]".into(),
                        inlined: false,
                    },
                );
            }
        }
    }
    kernel.sort_unstable();
    let detail = if inline || lines || places == Places::Lines {
        Detail::Frames
    } else {
        Detail::Functions
    };
    // The kernel's symbols are read (all of /proc/kallsyms, a fifth of a
    // small report's time) beside the modules'.
    let kernel_names = std::thread::scope(|scope| {
        let kernel_names = scope.spawn(|| KernelNames::read(&kernel, symbolizer));
        symbolize_modules(
            modules,
            by_module,
            symbolizer,
            detail,
            |id, offsets, symbols| {
                names.problems.extend(symbols.problem);
                names.problems.extend(symbols.notes);
                let module = Named {
                    id,
                    name: modules.get(id).name(),
                    inline,
                    places,
                    lines,
                };
                for (offset, symbol) in offsets.iter().zip(&symbols.addresses) {
                    names.add_module_location(&module, *offset, symbol);
                }
            },
        );
        (kernel_names.join()).unwrap_or_else(|e| std::panic::resume_unwind(e))
    });
    names.add_kernel(&kernel, kernel_names);
    names.problems.sort();
    names.renumber();
    names
}

/// A module whose answer is being turned into names, and how.
struct Named<'a> {
    id: ModuleId,
    /// Its short name, for code without a name of its own.
    name: &'a str,
    inline: bool,
    places: Places,
    lines: bool,
}

/// What the symbolizer says of kernel addresses: a name for each where it
/// has one, and why some have none.
#[derive(Default)]
struct KernelNames {
    names: Vec<Option<String>>,
    problem: Option<String>,
}

impl KernelNames {
    fn read(addresses: &[Avma], symbolizer: &dyn Symbolizer) -> KernelNames {
        if addresses.is_empty() {
            return KernelNames::default();
        }
        let names = symbolizer.symbolize_kernel(addresses);
        let problem = match names.iter().any(Option::is_none) {
            true => symbolizer.kernel_problem(),
            false => None,
        };
        KernelNames { names, problem }
    }
}

impl Names {
    /// Names kernel addresses (sorted, free of duplicates): from kallsyms
    /// where the symbolizer has them, else `[kernel]`.
    fn add_kernel(&mut self, addresses: &[Avma], kernel_names: KernelNames) {
        self.problems.extend(kernel_names.problem);
        for (address, name) in addresses.iter().zip(kernel_names.names) {
            let name = name.unwrap_or_else(|| "[kernel]".into());
            self.insert(
                Location::Kernel { address: *address },
                FunctionKey {
                    module: ModuleKey::Kernel,
                    name,
                    inlined: false,
                },
            );
        }
    }

    /// Names the location at `offset` of `module`, which the symbolizer
    /// says is `symbol`.
    fn add_module_location(&mut self, module: &Named, offset: FileOffset, symbol: &AddressSymbol) {
        let key = |name: &str, inlined: bool| FunctionKey {
            module: ModuleKey::Module(module.id),
            name: name.to_owned(),
            inlined,
        };
        let location = Location::Module {
            module: module.id,
            offset,
        };
        if module.places != Places::None {
            self.places.insert(location, place(symbol));
        }
        let holder = key(&display_name(module.name, offset, symbol), false);
        // The frames inlined into the holder: all but the outermost,
        // which is the holder itself.
        let inlined = match (module.inline, symbol.frames.split_last()) {
            (true, Some((_, inlined))) => inlined,
            _ => &[][..],
        };
        // A function's body inlined into its own out-of-line copy
        // (GCC's clones and split parts: `f.isra.0`, `f.part.0`) is
        // its own code.
        let clone_of = holder.name.split_once('.').map(|(name, _)| name);
        let mut chain: Vec<FunctionId> = Vec::new();
        let mut chain_lines: Vec<u32> = Vec::new();
        // Where in the holder the code lies: where the outermost
        // inlined function kept was inlined, or the instruction.
        let mut holder_frame = symbol.frames.first();
        for (index, frame) in inlined.iter().enumerate() {
            let Some(name) = frame.function.as_deref() else {
                continue;
            };
            if name == holder.name || Some(name) == clone_of {
                continue;
            }
            let id = self.intern(key(name, true));
            self.note(id, frame.linkage_name.as_ref(), frame.file.as_ref());
            chain.push(id);
            chain_lines.push(frame.line.unwrap_or(0));
            holder_frame = symbol.frames.get(index + 1);
        }
        let holder_id = self.intern(holder);
        let linkage_name = (symbol.function.as_ref()).and_then(|f| f.linkage_name.as_ref());
        self.note(
            holder_id,
            linkage_name,
            holder_frame.and_then(|f| f.file.as_ref()),
        );
        if module.lines {
            chain_lines.push(holder_frame.and_then(|f| f.line).unwrap_or(0));
            self.lines.insert(location, chain_lines.into());
        }
        let frames = match chain.is_empty() {
            true => Frames::Holder(holder_id),
            false => {
                chain.push(holder_id);
                Frames::Inlined(chain.into())
            }
        };
        self.of_location.insert(location, frames);
    }

    /// Gives the functions ids in their own order (module, name, inlined),
    /// whatever order they were named in.
    fn renumber(&mut self) {
        let mut order: Vec<usize> = (0..self.functions.len()).collect();
        order.sort_by(|&a, &b| {
            let (a, b) = (&self.functions[a], &self.functions[b]);
            (a.module, &a.name, a.inlined).cmp(&(b.module, &b.name, b.inlined))
        });
        let mut new_id = vec![FunctionId::new(0); order.len()];
        for (new, &old) in order.iter().enumerate() {
            new_id[old] = FunctionId::new(new);
        }
        let renumbered = |id: &mut FunctionId| *id = new_id[id.index()];
        (self.of_location.values_mut()).for_each(|frames| match frames {
            Frames::Holder(id) => renumbered(id),
            Frames::Inlined(chain) => chain.iter_mut().for_each(renumbered),
        });
        self.interned.values_mut().for_each(renumbered);
        self.functions = reordered(std::mem::take(&mut self.functions), &order);
        self.details = reordered(std::mem::take(&mut self.details), &order);
    }
}

/// `items` in `order`, a permutation of their indices.
fn reordered<T>(items: Vec<T>, order: &[usize]) -> Vec<T> {
    let mut items: Vec<Option<T>> = items.into_iter().map(Some).collect();
    (order.iter())
        .filter_map(|&old| items[old].take())
        .collect()
}

/// Symbolizes each module's offsets, several modules at a time, the largest
/// first, handing each answer to `take` as soon as it is ready.
fn symbolize_modules(
    modules: &ModuleTable,
    by_module: FxHashMap<ModuleId, Vec<FileOffset>>,
    symbolizer: &dyn Symbolizer,
    detail: Detail,
    mut take: impl FnMut(ModuleId, &[FileOffset], ModuleSymbols),
) {
    let mut work: Vec<(ModuleId, Vec<FileOffset>)> = by_module.into_iter().collect();
    work.iter_mut()
        .for_each(|(_, offsets)| offsets.sort_unstable());
    work.sort_by_key(|(id, offsets)| (std::cmp::Reverse(offsets.len()), *id));
    let queue = Mutex::new(work.into_iter());
    let workers = symbolizer.threads().max(1);
    std::thread::scope(|scope| {
        let (done, answers) = mpsc::channel();
        for _ in 0..workers {
            let (queue, done) = (&queue, done.clone());
            scope.spawn(move || {
                while let Some((id, offsets)) = queue.lock().ok().and_then(|mut q| q.next()) {
                    let symbols = symbolizer.symbolize(modules.get(id), &offsets, detail);
                    if done.send((id, offsets, symbols)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(done);
        for (id, offsets, symbols) in answers {
            take(id, &offsets, symbols);
        }
    });
}

fn place(symbol: &AddressSymbol) -> Place {
    let innermost = symbol.frames.first();
    let function_offset = match (&symbol.function, symbol.relative) {
        (Some(function), Some(relative)) => relative.0.checked_sub(function.start.0),
        _ => None,
    };
    Place {
        svma: symbol.svma,
        function: symbol.function.as_ref().and_then(|f| f.name.clone()),
        function_offset,
        file: innermost.and_then(|f| f.file.clone()),
        line: innermost.and_then(|f| f.line),
    }
}

/// The function's name; for code without one, `module+0xSTART` (the start
/// of its unnamed function, or the address itself).
fn display_name(module: &str, offset: FileOffset, symbol: &AddressSymbol) -> String {
    match (&symbol.function, symbol.relative) {
        (Some(function), _) => match &function.name {
            Some(name) => name.to_string(),
            None => format!("{module}+{:#x}", function.start.0),
        },
        (None, Some(relative)) => format!("{module}+{:#x}", relative.0),
        (None, None) => format!("{module}+{:#x}", offset.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use profiler_model::{Frame, FunctionSymbol, Module, RelativeAddress};

    /// Every address is in `scan.isra.0`, whose code came from `parse`
    /// inlined into `scan` inlined into its own clone.
    struct Clone;

    impl Symbolizer for Clone {
        fn symbolize(&self, _: &Module, offsets: &[FileOffset], _: Detail) -> ModuleSymbols {
            let frame = |name: &str, line: u32| Frame {
                function: Some(name.into()),
                linkage_name: None,
                file: Some(format!("{name}.c").into()),
                line: Some(line),
            };
            let symbol = AddressSymbol {
                svma: None,
                relative: Some(RelativeAddress(0x1010)),
                function: Some(FunctionSymbol {
                    name: Some("scan.isra.0".into()),
                    linkage_name: None,
                    start: RelativeAddress(0x1000),
                }),
                frames: vec![
                    frame("parse", 10),
                    frame("scan", 20),
                    frame("scan.isra.0", 30),
                ],
            };
            ModuleSymbols {
                problem: None,
                addresses: vec![symbol; offsets.len()],
                notes: Vec::new(),
            }
        }
    }

    #[test]
    fn inline_chains_end_in_the_holder_without_its_own_body() {
        let mut modules = ModuleTable::default();
        let app = modules.intern("/bin/app", None, None);
        let location = Location::Module {
            module: app,
            offset: FileOffset(0x1010),
        };
        let names = |inline| {
            let names = name_locations(
                &modules,
                [location].iter(),
                &Clone,
                inline,
                Places::None,
                false,
            );
            let frames: Vec<(String, bool)> = (names.frames(&location).iter())
                .map(|&f| {
                    let key = &names.functions()[f.index()];
                    (key.name.clone(), key.inlined)
                })
                .collect();
            frames
        };
        assert_eq!(
            names(true),
            [
                ("parse".to_owned(), true),
                ("scan.isra.0".to_owned(), false)
            ]
        );
        assert_eq!(names(false), [("scan.isra.0".to_owned(), false)]);
    }

    #[test]
    fn each_frame_keeps_its_line_and_the_holder_the_line_of_its_own_body() {
        let mut modules = ModuleTable::default();
        let app = modules.intern("/bin/app", None, None);
        let location = Location::Module {
            module: app,
            offset: FileOffset(0x1010),
        };
        let named = |inline| {
            name_locations(
                &modules,
                [location].iter(),
                &Clone,
                inline,
                Places::None,
                true,
            )
        };
        // `scan` inlined into its clone is the clone's own body: the
        // clone's line is where `parse` was inlined into that body.
        let names = named(true);
        assert_eq!(names.lines(&location), Some(&[10, 20][..]));
        let files: Vec<Option<&str>> = (names.frames(&location).iter())
            .map(|&f| names.details()[f.index()].file.as_deref())
            .collect();
        assert_eq!(files, [Some("parse.c"), Some("scan.c")]);
        // Without inlined frames, the holder's line is the instruction's.
        let names = named(false);
        assert_eq!(names.lines(&location), Some(&[10][..]));
    }

    #[test]
    fn unnamed_code_is_shown_as_module_plus_offset() {
        let named = AddressSymbol {
            svma: None,
            frames: Vec::new(),
            relative: Some(RelativeAddress(0x1139)),
            function: Some(FunctionSymbol {
                name: Some("main".into()),
                linkage_name: None,
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
                linkage_name: None,
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
