//! Which module of one recording is which of another, for `diff`: two
//! builds of a program need not keep its file name (`app-v1`, `app-v2`),
//! nor a library its version (`libfoo.so.1`, `libfoo.so.2`). Modules pair
//! by file name; those left, by build-id, then by file name without its
//! version digits (where that names one module on each side), then the
//! main executable with the main executable. Each pair says how it was made.

use std::collections::BTreeMap;

use profiler_model::{BuildId, Module, Recording};

/// How two modules were found to be one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PairedBy {
    /// The same file name.
    Name,
    /// The same build-id under different names.
    BuildId,
    /// The same name once version digits are left out.
    VersionlessName,
    /// Both are their recording's main executable.
    MainExecutable,
}

impl PairedBy {
    /// How the pair was made, in words.
    pub fn phrase(self) -> &'static str {
        match self {
            PairedBy::Name => "the same name",
            PairedBy::BuildId => "the same build-id",
            PairedBy::VersionlessName => "the same name but for version digits",
            PairedBy::MainExecutable => "the main executables",
        }
    }
}

/// A module of the base recording and the one of the new recording it is,
/// by their short names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModulePair {
    pub base: String,
    pub new: String,
    pub by: PairedBy,
}

/// A recording's modules as pairing sees them: short name, build-id, and
/// whether it is the main executable.
struct Side {
    modules: BTreeMap<String, Option<BuildId>>,
    main: Option<String>,
}

impl Side {
    fn of(recording: &Recording) -> Side {
        let short = |path: &str| {
            let module = Module {
                path: path.to_owned(),
                build_id: None,
                pid: None,
            };
            module.name().to_owned()
        };
        let mut modules = BTreeMap::new();
        for entry in &recording.trailer.modules {
            let id = modules.entry(short(&entry.path)).or_insert(None);
            if id.is_none() {
                *id = entry.build_id.clone();
            }
        }
        Side {
            modules,
            main: recording.header.program.as_deref().map(short),
        }
    }
}

/// The modules of `base` paired with those of `new`, by name first.
pub fn pair_modules(base: &Recording, new: &Recording) -> Vec<ModulePair> {
    pair(&Side::of(base), &Side::of(new))
}

fn pair(base: &Side, new: &Side) -> Vec<ModulePair> {
    let mut pairs: Vec<ModulePair> = (base.modules.keys())
        .filter(|name| new.modules.contains_key(*name))
        .map(|name| ModulePair {
            base: name.clone(),
            new: name.clone(),
            by: PairedBy::Name,
        })
        .collect();
    let unpaired = |side: &Side, pairs: &[ModulePair], is_base: bool| -> Vec<String> {
        (side.modules.keys())
            .filter(|name| !is_paired(pairs, name, is_base))
            .cloned()
            .collect()
    };
    // The same build-id.
    for name in unpaired(base, &pairs, true) {
        let Some(Some(id)) = base.modules.get(&name) else {
            continue;
        };
        let open = unpaired(new, &pairs, false);
        let same: Vec<&String> = (open.iter())
            .filter(|other| {
                new.modules
                    .get(*other)
                    .is_some_and(|i| i.as_ref() == Some(id))
            })
            .collect();
        if let [other] = same[..] {
            pairs.push(ModulePair {
                base: name,
                new: other.clone(),
                by: PairedBy::BuildId,
            });
        }
    }
    // The same name without version digits, where it names one on each side.
    let by_key = |names: Vec<String>| {
        let mut keys: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for name in names {
            keys.entry(versionless(&name)).or_default().push(name);
        }
        keys
    };
    let (base_keys, new_keys) = (
        by_key(unpaired(base, &pairs, true)),
        by_key(unpaired(new, &pairs, false)),
    );
    for (key, names) in &base_keys {
        if let (Some([other]), [name]) = (new_keys.get(key).map(Vec::as_slice), &names[..]) {
            pairs.push(ModulePair {
                base: name.clone(),
                new: other.clone(),
                by: PairedBy::VersionlessName,
            });
        }
    }
    // The main executables, where each is among its side's modules.
    if let (Some(base_main), Some(new_main)) = (&base.main, &new.main)
        && base.modules.contains_key(base_main)
        && new.modules.contains_key(new_main)
        && !is_paired(&pairs, base_main, true)
        && !is_paired(&pairs, new_main, false)
    {
        pairs.push(ModulePair {
            base: base_main.clone(),
            new: new_main.clone(),
            by: PairedBy::MainExecutable,
        });
    }
    pairs
}

/// Whether module `name` of the base (or, not `is_base`, of the new
/// recording) is in one of `pairs`.
fn is_paired(pairs: &[ModulePair], name: &str, is_base: bool) -> bool {
    (pairs.iter()).any(|pair| match is_base {
        true => pair.base == name,
        false => pair.new == name,
    })
}

/// `name` without version digits: its parts between `.`, `-` and `_` that
/// are numbers or `v` and a number left out, and digits ending a part too
/// (`app-v2` and `app-v10` are `app`, `libfoo.so.1.2` is `libfoo.so`,
/// `python3.11` is `python`).
fn versionless(name: &str) -> String {
    let parts: Vec<&str> = (name.split(['.', '-', '_']))
        .map(|part| part.trim_end_matches(|c: char| c.is_ascii_digit()))
        .filter(|part| !part.is_empty() && *part != "v")
        .collect();
    parts.join(".")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(modules: &[(&str, Option<u8>)], main: &str) -> Side {
        Side {
            modules: (modules.iter())
                .map(|(name, id)| (name.to_string(), id.map(|b| BuildId(vec![b; 20]))))
                .collect(),
            main: Some(main.to_owned()),
        }
    }

    #[test]
    fn versions_are_left_out_of_names() {
        assert_eq!(versionless("app-v1"), "app");
        assert_eq!(versionless("app-v2"), versionless("app-v10"));
        assert_eq!(versionless("libfoo.so.1.2.3"), "libfoo.so");
        assert_eq!(versionless("python3.11"), versionless("python3.12"));
        assert_ne!(versionless("libfoo.so.1"), versionless("libbar.so.1"));
    }

    #[test]
    fn modules_pair_by_name_build_id_versionless_name_then_main_executable() {
        let base = side(
            &[
                ("libc.so.6", Some(1)),
                ("renamed.so", Some(7)),
                ("libfoo.so.1", None),
                ("app-v1", Some(3)),
            ],
            "app-v1",
        );
        let new = side(
            &[
                ("libc.so.6", Some(2)),
                ("other-name.so", Some(7)),
                ("libfoo.so.2", None),
                ("server", Some(4)),
            ],
            "server",
        );
        let pairs = pair(&base, &new);
        let found = |name: &str| {
            pairs
                .iter()
                .find(|p| p.base == name)
                .map(|p| (p.new.as_str(), p.by))
        };
        assert_eq!(found("libc.so.6"), Some(("libc.so.6", PairedBy::Name)));
        assert_eq!(
            found("renamed.so"),
            Some(("other-name.so", PairedBy::BuildId))
        );
        assert_eq!(
            found("libfoo.so.1"),
            Some(("libfoo.so.2", PairedBy::VersionlessName))
        );
        assert_eq!(found("app-v1"), Some(("server", PairedBy::MainExecutable)));
    }

    #[test]
    fn an_ambiguous_versionless_name_pairs_nothing() {
        let base = side(&[("libx.so.1", None), ("libx.so.2", None)], "a");
        let new = side(&[("libx.so.3", None)], "b");
        assert!(pair(&base, &new).is_empty());
    }
}
