//! The house's module rules, read from the sources: no module of a crate
//! imports another that imports it back, directly or around a circle, so
//! that each crate's modules can be read from the bottom up; and in the
//! report crate, its stages depend on each other one way (read <- views <-
//! render, export).
//!
//! A module's imports are the paths it names with `crate::`, `super::` or
//! `self::`, and in `use` its child modules: each leads to the module that
//! defines the item (through re-exports), or to the module itself. `mod`
//! declarations are not imports, nor are a module's tests.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A crate's modules, each with its source and its child modules.
struct Crate {
    name: String,
    /// Module path (`read::samples`; the root is ``) -> its file.
    files: BTreeMap<String, PathBuf>,
    /// Module path -> its source, comments and tests left out.
    sources: BTreeMap<String, String>,
}

impl Crate {
    fn read(name: &str, root: &Path) -> Crate {
        let mut krate = Crate {
            name: name.to_string(),
            files: BTreeMap::new(),
            sources: BTreeMap::new(),
        };
        krate.add(String::new(), root, root.parent().unwrap_or(Path::new("")));
        krate
    }

    /// Adds the module `path` from `file`, whose child modules lie in `dir`,
    /// and its children.
    fn add(&mut self, path: String, file: &Path, dir: &Path) {
        let text = std::fs::read_to_string(file)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        let source = code_of(&text);
        for child in declared_modules(&source) {
            let flat = dir.join(format!("{child}.rs"));
            let nested = dir.join(&child).join("mod.rs");
            let (child_file, child_dir) = if flat.exists() {
                (flat, dir.join(&child))
            } else if nested.exists() {
                (nested, dir.join(&child))
            } else {
                // An inline module (`mod x { .. }`) is part of its file.
                continue;
            };
            self.add(join(&path, &child), &child_file, &child_dir);
        }
        self.files.insert(path.clone(), file.to_path_buf());
        self.sources.insert(path, source);
    }

    fn is_module(&self, path: &str) -> bool {
        self.files.contains_key(path)
    }

    /// The modules `module` imports, with a path that leads to each.
    fn imports(&self, module: &str) -> BTreeMap<String, String> {
        let source = &self.sources[module];
        let mut imports = BTreeMap::new();
        for (inline, path) in named_paths(source) {
            let Some(absolute) = self.absolute(module, inline, &path) else {
                continue;
            };
            let mut seen = BTreeSet::new();
            if let Some(target) = self.defining_module(&absolute, &mut seen)
                && target != module
            {
                imports.entry(target).or_insert(path.join("::"));
            }
        }
        imports
    }

    /// `path` as named in `module`, `inline` modules deep inside its file,
    /// from the crate's root; `None` for another crate's.
    fn absolute(&self, module: &str, inline: usize, path: &[String]) -> Option<Vec<String>> {
        let mut here: Vec<String> = segments(module);
        let mut rest = path;
        let mut inline = inline;
        match rest.first().map(String::as_str) {
            Some("crate") => {
                here.clear();
                rest = &rest[1..];
            }
            Some("self") => rest = &rest[1..],
            Some("super") => {
                while rest.first().map(String::as_str) == Some("super") {
                    // `super` in an inline module is still this file.
                    match inline {
                        0 => drop(here.pop()?),
                        _ => inline -= 1,
                    }
                    rest = &rest[1..];
                }
            }
            Some(first) if self.is_module(&join(module, first)) => {}
            _ => return None,
        }
        here.extend(rest.iter().cloned());
        Some(here)
    }

    /// The module that defines what `path` (from the root) names: the
    /// deepest module along it, or, for an item that module re-exports,
    /// the module the re-export leads to.
    fn defining_module(&self, path: &[String], seen: &mut BTreeSet<Vec<String>>) -> Option<String> {
        if !seen.insert(path.to_vec()) {
            return None;
        }
        let mut module = String::new();
        let mut depth = 0;
        while depth < path.len() && self.is_module(&join(&module, &path[depth])) {
            module = join(&module, &path[depth]);
            depth += 1;
        }
        let Some(item) = path.get(depth) else {
            return Some(module);
        };
        for (inline, used) in use_trees(&self.sources[&module]) {
            if used.last() == Some(item)
                && let Some(absolute) = self.absolute(&module, inline, &used)
                && absolute.as_slice() != path
            {
                return self.defining_module(&absolute, seen);
            }
        }
        Some(module)
    }
}

fn join(module: &str, child: &str) -> String {
    match module.is_empty() {
        true => child.to_string(),
        false => format!("{module}::{child}"),
    }
}

fn segments(module: &str) -> Vec<String> {
    module
        .split("::")
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The code of a file: without its comments, and without its tests (a
/// `#[cfg(test)]` item and everything after it, where the house keeps
/// them).
fn code_of(text: &str) -> String {
    let mut code = String::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]") {
            break;
        }
        let line = match line.find("//") {
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        };
        code.push_str(line);
        code.push('\n');
    }
    code
}

/// The modules a source declares from files (`mod x;`).
fn declared_modules(source: &str) -> Vec<String> {
    let mut modules = Vec::new();
    for statement in source.split(';') {
        let words: Vec<&str> = statement.split_whitespace().collect();
        if let [.., "mod", name] = words.as_slice()
            && !statement.contains('{')
            && !statement.contains('}')
        {
            modules.push(name.to_string());
        }
    }
    modules
}

/// A path as a source names it, with how many inline modules (`mod x {
/// .. }`) deep inside its file it is named.
type NamedPath = (usize, Vec<String>);

/// Each path a `use` item of `source` brings in, its braces expanded.
fn use_trees(source: &str) -> Vec<NamedPath> {
    let (tokens, depths) = tokens(source);
    let mut paths = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        // `use` starts an item after the end of another, or after a
        // visibility (`pub`, `pub(crate)`).
        let item = i == 0
            || [";", "}", "{", "]"].contains(&tokens[i - 1].as_str())
            || tokens[i - 1] == "pub"
            || (tokens[i - 1] == ")" && i >= 4 && tokens[i - 4] == "pub");
        if token == "use" && item {
            let mut found = Vec::new();
            expand(&tokens, &mut (i + 1), Vec::new(), &mut found);
            paths.extend(found.into_iter().map(|path| (depths[i], path)));
        }
    }
    paths
}

/// Every path `source` names: those its `use` items bring in, and those
/// named in its code (`crate::a::f()`, `child::g()`).
fn named_paths(source: &str) -> Vec<NamedPath> {
    let (tokens, depths) = tokens(source);
    let mut paths = use_trees(source);
    for (i, token) in tokens.iter().enumerate() {
        let starts = is_identifier(token)
            && tokens.get(i + 1).map(String::as_str) == Some("::")
            && (i == 0 || tokens[i - 1] != "::");
        if starts {
            let mut found = Vec::new();
            expand(&tokens, &mut i.clone(), Vec::new(), &mut found);
            paths.extend(found.into_iter().map(|path| (depths[i], path)));
        }
    }
    paths
}

/// Reads a use tree at `tokens[*at]` (`a::b::{c, d::*}`), adding each path
/// it names (a glob names its module) to `paths`.
fn expand(
    tokens: &[String],
    at: &mut usize,
    mut prefix: Vec<String>,
    paths: &mut Vec<Vec<String>>,
) {
    while let Some(token) = tokens.get(*at) {
        match token.as_str() {
            "{" => {
                *at += 1;
                loop {
                    match tokens.get(*at).map(String::as_str) {
                        None => return,
                        Some("}") => {
                            *at += 1;
                            return;
                        }
                        Some(",") => *at += 1,
                        Some(_) => {
                            let before = *at;
                            expand(tokens, at, prefix.clone(), paths);
                            // Past what is not a path, to the next comma.
                            *at = (*at).max(before + 1);
                        }
                    }
                }
            }
            "*" => {
                *at += 1;
                paths.push(prefix);
                return;
            }
            word if is_identifier(word) => {
                *at += 1;
                if word == "self" && !prefix.is_empty() {
                    // `a::{self, b}` names `a`.
                    paths.push(prefix);
                    return;
                }
                prefix.push(word.to_string());
                if tokens.get(*at).map(String::as_str) == Some("::") {
                    *at += 1;
                    continue;
                }
                if tokens.get(*at).map(String::as_str) == Some("as") {
                    *at += 2;
                }
                paths.push(prefix);
                return;
            }
            _ => return,
        }
    }
}

fn is_identifier(word: &str) -> bool {
    word.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && word.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// The source as identifiers, `::` and single punctuation (string
/// literals left out), each with how many inline modules deep it lies.
fn tokens(source: &str) -> (Vec<String>, Vec<usize>) {
    let mut tokens: Vec<String> = Vec::new();
    let mut depths = Vec::new();
    // For each open brace, whether it opened an inline module.
    let mut braces: Vec<bool> = Vec::new();
    let chars: Vec<char> = source.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let token = if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            chars[start..i].iter().collect()
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            continue;
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            i += 2;
            "::".to_string()
        } else {
            i += 1;
            if c.is_whitespace() {
                continue;
            }
            c.to_string()
        };
        match token.as_str() {
            "{" => braces.push(tokens.len() >= 2 && tokens[tokens.len() - 2] == "mod"),
            "}" => drop(braces.pop()),
            _ => {}
        }
        depths.push(braces.iter().filter(|&&inline| inline).count());
        tokens.push(token);
    }
    (tokens, depths)
}

/// Every crate of the workspace, by its root file.
fn crates() -> Vec<Crate> {
    let root = repository();
    let mut crates = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .expect("crates/ lists")
        .map(|entry| entry.expect("crates/ lists").path())
        .collect();
    dirs.sort();
    for dir in dirs {
        let name = dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        for candidate in ["src/lib.rs", "src/main.rs", "lib.rs", "main.rs"] {
            let file = dir.join(candidate);
            if file.exists() {
                crates.push(Crate::read(&format!("{name} ({candidate})"), &file));
            }
        }
    }
    crates
}

/// The circles among `imports`: its strongly connected components of more
/// than one module (Tarjan's algorithm).
fn circles(imports: &BTreeMap<String, BTreeMap<String, String>>) -> Vec<Vec<String>> {
    struct Search<'a> {
        imports: &'a BTreeMap<String, BTreeMap<String, String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        circles: Vec<Vec<String>>,
    }
    impl<'a> Search<'a> {
        fn visit(&mut self, module: &'a str) {
            let index = self.index.len();
            self.index.insert(module, index);
            self.low.insert(module, index);
            self.stack.push(module);
            for target in self.imports[module].keys() {
                let target = target.as_str();
                if !self.index.contains_key(target) {
                    self.visit(target);
                    let low = self.low[module].min(self.low[target]);
                    self.low.insert(module, low);
                } else if self.stack.contains(&target) {
                    let low = self.low[module].min(self.index[target]);
                    self.low.insert(module, low);
                }
            }
            if self.low[module] == index {
                let mut circle = Vec::new();
                while let Some(top) = self.stack.pop() {
                    circle.push(top.to_string());
                    if top == module {
                        break;
                    }
                }
                if circle.len() > 1 {
                    circle.sort();
                    self.circles.push(circle);
                }
            }
        }
    }
    let mut search = Search {
        imports,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        circles: Vec::new(),
    };
    for module in imports.keys() {
        if !search.index.contains_key(module.as_str()) {
            search.visit(module);
        }
    }
    search.circles
}

fn name(module: &str) -> &str {
    if module.is_empty() {
        "the crate root"
    } else {
        module
    }
}

#[test]
fn no_module_imports_another_that_imports_it_back() {
    let mut found = Vec::new();
    let crates = crates();
    assert!(crates.len() >= 10, "the workspace's crates are found");
    for krate in &crates {
        let imports: BTreeMap<String, BTreeMap<String, String>> = krate
            .files
            .keys()
            .map(|module| (module.clone(), krate.imports(module)))
            .collect();
        for circle in circles(&imports) {
            let mut edges = Vec::new();
            for from in &circle {
                for (to, path) in &imports[from] {
                    if circle.contains(to) {
                        edges.push(format!("  {} -> {} ({path})", name(from), name(to)));
                    }
                }
            }
            found.push(format!(
                "{}: {}\n{}",
                krate.name,
                circle.join(", "),
                edges.join("\n")
            ));
        }
    }
    assert!(
        found.is_empty(),
        "module import circles:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_report_crates_stages_depend_one_way() {
    // Each stage and the stages it may import.
    let allowed: &[(&str, &[&str])] = &[
        ("read", &["read", "error"]),
        ("views", &["read", "views", "wording", "error"]),
        ("render", &["views", "render", "wording", "error"]),
        ("export", &["read", "views", "export", "error"]),
    ];
    let report = crates()
        .into_iter()
        .find(|c| c.name.starts_with("report "))
        .expect("the report crate is found");
    let mut wrong = Vec::new();
    for module in report.files.keys() {
        let stage = module.split("::").next().unwrap_or_default();
        let Some((_, may)) = allowed.iter().find(|(s, _)| *s == stage) else {
            continue;
        };
        for (target, path) in report.imports(module) {
            let target_stage = target.split("::").next().unwrap_or_default();
            if !target.is_empty() && !may.contains(&target_stage) {
                wrong.push(format!("{module} -> {target} ({path})"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the stages' order:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn paths_are_read_as_rust_names_them() {
    let source = "use crate::{a::{self, B}, c::*};\npub(crate) use d::E as F;\nfn f() { crate::g::h(); super::i::J; }\n";
    let uses: Vec<Vec<String>> = use_trees(source).into_iter().map(|(_, p)| p).collect();
    let expected: Vec<Vec<String>> = [
        &["crate", "a"][..],
        &["crate", "a", "B"],
        &["crate", "c"],
        &["d", "E"],
    ]
    .iter()
    .map(|p| p.iter().map(|s| s.to_string()).collect())
    .collect();
    assert_eq!(uses, expected);
    let named: Vec<Vec<String>> = named_paths(source).into_iter().map(|(_, p)| p).collect();
    assert!(named.contains(&vec!["crate".into(), "g".into(), "h".into()]));
    assert!(named.contains(&vec!["super".into(), "i".into(), "J".into()]));
    let imports = BTreeMap::from([
        (
            "a".to_string(),
            BTreeMap::from([("b".to_string(), String::new())]),
        ),
        (
            "b".to_string(),
            BTreeMap::from([("c".to_string(), String::new())]),
        ),
        (
            "c".to_string(),
            BTreeMap::from([("a".to_string(), String::new())]),
        ),
        (
            "d".to_string(),
            BTreeMap::from([("a".to_string(), String::new())]),
        ),
    ]);
    assert_eq!(
        circles(&imports),
        [["a", "b", "c"].map(str::to_string).to_vec()]
    );
}
