//! The documentation against the binary: every flag the README and the
//! pages under docs/ name for a subcommand is one its `--help` lists, and
//! every subcommand has a page that shows it in use.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn help(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_profiler"))
        .args(args)
        .arg("--help")
        .output()
        .unwrap();
    assert!(output.status.success(), "profiler {args:?} --help");
    String::from_utf8(output.stdout).unwrap()
}

/// The subcommands `profiler --help` lists (but `help`).
fn subcommands() -> Vec<String> {
    let top = help(&[]);
    let listed = top
        .split("Commands:")
        .nth(1)
        .and_then(|rest| rest.split("Options:").next())
        .expect("profiler --help lists its commands");
    listed
        .lines()
        .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// The flags (`-e`, `--call-graph`) named in `text`, without their values.
fn flags(text: &str) -> BTreeSet<String> {
    text.split(|c: char| c.is_whitespace() || "[]()|,`'\"".contains(c))
        .filter_map(|word| {
            let name = word.split('=').next().unwrap_or(word);
            let name = name.trim_end_matches(['.', ':', ';']);
            let bare = name.trim_start_matches('-');
            let dashes = name.len() - bare.len();
            let flag = (1..=2).contains(&dashes)
                && bare.starts_with(|c: char| c.is_ascii_alphabetic())
                && bare.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                && (dashes == 2 || bare.len() == 1);
            flag.then(|| name.to_owned())
        })
        .collect()
}

/// The code of a Markdown page: its inline code spans and the lines of its
/// code blocks.
fn code(page: &str) -> Vec<String> {
    let mut code = Vec::new();
    let mut in_block = false;
    for line in page.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
        } else if in_block {
            // Without a shell comment.
            let line = line.split(" #").next().unwrap_or(line);
            code.push(line.to_owned());
        } else {
            code.extend(line.split('`').skip(1).step_by(2).map(str::to_owned));
        }
    }
    code
}

/// The pages: the README and docs/*.md.
fn pages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ lists")
        .map(|entry| entry.expect("docs/ lists").path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// `profiler SUB ...` (or `target/release/profiler SUB ...`) in a piece of
/// code: the subcommand and the rest.
fn invocation(code: &str) -> Option<(&str, &str)> {
    let at = code.find("profiler ")?;
    let before = &code[..at];
    if !(before.is_empty() || before.ends_with('/') || before.ends_with(' ')) {
        return None;
    }
    let rest = code[at + "profiler ".len()..].trim_start();
    let sub = rest.split_whitespace().next()?;
    Some((sub, &rest[sub.len()..]))
}

#[test]
fn every_flag_the_docs_name_is_in_the_help_of_its_subcommand() {
    let subcommands = subcommands();
    assert!(subcommands.len() >= 14, "{subcommands:?}");
    let helps: BTreeMap<&str, BTreeSet<String>> = (subcommands.iter())
        .map(|sub| (sub.as_str(), flags(&help(&[sub]))))
        .collect();
    let everywhere: BTreeSet<&String> = helps.values().flatten().collect();
    let mut unknown = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let name = page.file_name().unwrap().to_string_lossy().into_owned();
        for piece in code(&text) {
            match invocation(&piece) {
                // Each line in a block may pipe into other tools: only the
                // profiler's part up to a pipe or `&&` is its own, and what
                // follows `--` is the command's.
                Some((sub, rest)) if helps.contains_key(sub) => {
                    let own = rest.split(['|', '&', '>', '<']).next().unwrap_or(rest);
                    let own = own.split(" -- ").next().unwrap_or(own);
                    for flag in flags(own) {
                        if !helps[sub].contains(&flag) && flag != "-h" {
                            unknown.push(format!("{name}: `profiler {sub}` has no {flag}"));
                        }
                    }
                }
                Some(("help", _)) => {}
                // A screen's title line (`profiler top: cpu-clock ...`).
                Some((sub, _)) if sub.ends_with(':') => {}
                Some((sub, _)) if sub.starts_with(|c: char| c.is_ascii_lowercase()) => {
                    unknown.push(format!("{name}: no subcommand {sub} in `{piece}`"));
                }
                _ => {
                    // A flag alone (`--inline`, `-e cpu-clock`): some
                    // subcommand's.
                    if piece.starts_with('-') {
                        for flag in flags(&piece) {
                            if !everywhere.contains(&flag) {
                                unknown.push(format!("{name}: no subcommand has {flag}"));
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(unknown.is_empty(), "{}", unknown.join("\n"));
}

#[test]
fn every_subcommand_has_a_page_that_shows_it() {
    let pages: Vec<String> = (pages().iter().skip(1))
        .map(|page| std::fs::read_to_string(page).unwrap())
        .collect();
    let mut missing = Vec::new();
    for sub in subcommands() {
        let shown = pages.iter().any(|page| {
            code(page)
                .iter()
                .any(|piece| invocation(piece).is_some_and(|(s, _)| s == sub))
        });
        if !shown {
            missing.push(sub);
        }
    }
    assert!(
        missing.is_empty(),
        "no page under docs/ shows profiler {missing:?}"
    );
}
