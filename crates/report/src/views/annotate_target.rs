//! Which function `annotate SYMBOL` means: a function with samples, by its
//! demangled name, by a prefix that only one such function has (of the whole
//! name, or else of the name without its path), or any function by
//! `MODULE:ADDRESS` (the address as `nm` and `objdump` print it).

use rustc_hash::FxHashMap;

use profiler_model::{Module, ModuleId, Svma};

use crate::error::ReportError;
use crate::read::naming::{FunctionId, ModuleKey};
use crate::read::stacks::StackProfile;

/// A function to annotate: a module and an address inside the function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnnotateTarget {
    pub module: Module,
    pub(crate) module_id: ModuleId,
    pub address: Svma,
    /// The function's name as reports show it, when it was found by name.
    pub name: Option<String>,
}

/// How many candidates an error lists.
const LISTED: usize = 12;

/// A function with samples of its own, with its hottest address.
struct Sampled<'a> {
    name: &'a str,
    module: ModuleId,
    samples: u64,
    /// The address with the most samples, and its count.
    hottest: (Svma, u64),
}

impl StackProfile {
    /// The function `symbol` names, among the functions with samples of the
    /// events read (which must have been read with places, functions named
    /// after the function holding the code).
    pub fn find_function(&self, symbol: &str) -> Result<AnnotateTarget, ReportError> {
        if let Some(target) = self.module_address(symbol)? {
            return Ok(target);
        }
        let sampled = self.sampled_functions();
        // `app+0x1130` names a function without a symbol; `hot_a+0x1c` a
        // place in hot_a.
        let symbol = match sampled.iter().any(|f| f.name == symbol) {
            true => symbol,
            false => plain_name(symbol),
        };
        let exact: Vec<&Sampled> = sampled.iter().filter(|f| f.name == symbol).collect();
        let mut prefixed: Vec<&Sampled> = sampled
            .iter()
            .filter(|f| f.name.starts_with(symbol))
            .collect();
        if prefixed.is_empty() {
            // `spin` for `work::Engine::spin`: the name without its path.
            prefixed = (sampled.iter())
                .filter(|f| unqualified(f.name).starts_with(symbol))
                .collect();
        }
        let chosen = match (exact.as_slice(), prefixed.as_slice()) {
            ([one], _) | ([], [one]) => one,
            ([], []) => {
                return Err(ReportError::NoFunction {
                    symbol: symbol.to_owned(),
                    hottest: self.listed(sampled.iter()),
                });
            }
            ([], several) | (several, _) => {
                return Err(ReportError::AmbiguousFunction {
                    symbol: symbol.to_owned(),
                    candidates: self.listed(several.iter().copied()),
                });
            }
        };
        Ok(AnnotateTarget {
            module: self.modules.get(chosen.module).clone(),
            module_id: chosen.module,
            address: chosen.hottest.0,
            name: Some(chosen.name.to_owned()),
        })
    }

    /// `MODULE:ADDRESS`, when `symbol` has that form: a module of the
    /// recording by file name or path, and a hexadecimal address.
    fn module_address(&self, symbol: &str) -> Result<Option<AnnotateTarget>, ReportError> {
        let Some((module, address)) = symbol.rsplit_once(':') else {
            return Ok(None);
        };
        let digits = address.trim_start_matches("0x");
        let Ok(address) = u64::from_str_radix(digits, 16) else {
            return Ok(None);
        };
        if module.is_empty() || digits.is_empty() || module.ends_with(':') {
            return Ok(None);
        }
        let found = self
            .modules
            .iter()
            .find(|(_, m)| m.has_file() && (m.path == module || m.name() == module));
        match found {
            Some((module_id, found)) => Ok(Some(AnnotateTarget {
                module: found.clone(),
                module_id,
                address: Svma(address),
                name: None,
            })),
            None => Err(ReportError::UnknownModule {
                requested: module.to_owned(),
                available: self.module_list(),
            }),
        }
    }

    /// Functions with samples of their own, most samples first.
    fn sampled_functions(&self) -> Vec<Sampled<'_>> {
        let mut by_function: FxHashMap<FunctionId, (u64, FxHashMap<Svma, u64>)> =
            FxHashMap::default();
        for stack in self.events.iter().flatten() {
            // The function holding the code, past any inlined frames.
            let holder = stack.frames.iter().find(|&&f| !self.is_inlined(f));
            let (Some(&function), Some(place)) = (holder, stack.place) else {
                continue;
            };
            let Some(svma) = self.places[place.index()].1.svma else {
                continue;
            };
            let (samples, addresses) = by_function.entry(function).or_default();
            *samples = samples.saturating_add(stack.weight.samples);
            let count = addresses.entry(svma).or_default();
            *count = count.saturating_add(stack.weight.samples);
        }
        let mut sampled: Vec<Sampled> = by_function
            .into_iter()
            .filter_map(|(function, (samples, addresses))| {
                let key = &self.functions[function.index()];
                let ModuleKey::Module(module) = key.module else {
                    return None;
                };
                let hottest = addresses
                    .into_iter()
                    .max_by_key(|&(svma, n)| (n, std::cmp::Reverse(svma)))?;
                Some(Sampled {
                    name: &key.name,
                    module,
                    samples,
                    hottest,
                })
            })
            .collect();
        sampled.sort_by(|a, b| (b.samples, a.name, a.module).cmp(&(a.samples, b.name, b.module)));
        sampled
    }

    /// `name (module, N samples), ...`, the first few.
    fn listed<'a>(&self, functions: impl Iterator<Item = &'a Sampled<'a>>) -> String {
        let mut listed: Vec<String> = functions
            .map(|f| {
                let module = self.modules.get(f.module).name();
                let samples = match f.samples {
                    1 => "1 sample".to_owned(),
                    n => format!("{n} samples"),
                };
                format!("{} ({module}, {samples})", f.name)
            })
            .collect();
        let more = listed.len().saturating_sub(LISTED);
        listed.truncate(LISTED);
        if more > 0 {
            listed.push(format!("and {more} more"));
        }
        match listed.is_empty() {
            true => "none".into(),
            false => listed.join(", "),
        }
    }

    fn module_list(&self) -> String {
        let mut names: Vec<&str> = self
            .modules
            .iter()
            .filter(|(_, m)| m.has_file())
            .map(|(_, m)| m.name())
            .collect();
        names.sort_unstable();
        names.dedup();
        names.join(", ")
    }
}

/// A function's name as views print it, less what they add: a flame
/// graph's or folded stack's ` (inlined)`, the `+0x1c` of a row by address
/// or of the histogram table.
pub(crate) fn plain_name(symbol: &str) -> &str {
    let symbol = symbol
        .strip_suffix(crate::views::folded::INLINED_SUFFIX)
        .unwrap_or(symbol);
    match symbol.rsplit_once("+0x") {
        Some((name, offset))
            if !name.is_empty() && offset.chars().all(|c| c.is_ascii_hexdigit()) =>
        {
            name
        }
        _ => symbol,
    }
}

/// A name without the path before it: `spin` of `work::Engine::spin`,
/// `crunch<a::b>` of `work::crunch<a::b>`.
fn unqualified(name: &str) -> &str {
    let mut depth = 0usize;
    let mut start = 0;
    let bytes = name.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'<' | b'(' => depth += 1,
            b'>' | b')' => depth = depth.saturating_sub(1),
            b':' if depth == 0 && bytes.get(i + 1) == Some(&b':') => start = i + 2,
            _ => {}
        }
    }
    name.get(start..).unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_as_views_print_them_are_functions() {
        assert_eq!(plain_name("burn (inlined)"), "burn");
        assert_eq!(plain_name("hot_a+0x1c"), "hot_a");
        assert_eq!(plain_name("operator+"), "operator+");
        assert_eq!(plain_name("main"), "main");
    }

    #[test]
    fn names_lose_their_path_but_not_their_template_arguments() {
        assert_eq!(unqualified("work::Engine::spin"), "spin");
        assert_eq!(unqualified("work::crunch<a::b>"), "crunch<a::b>");
        assert_eq!(unqualified("<rusthot::kernels::Mixer>::churn"), "churn");
        assert_eq!(unqualified("main"), "main");
    }
}
