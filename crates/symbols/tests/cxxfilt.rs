//! C++ names against c++filt: every C++ symbol of libstdc++ (and of
//! libLLVM, the biggest C++ libraries a machine with llvm and Chromium
//! has), demangled with and without argument lists, must read as
//! `c++filt -i` and `c++filt -i -p` print them (`-i`: `std::string` rather
//! than its full template, as perf and gdb print it), at least 99.9% of
//! them.
//!
//! The differences are written to `docs/demangling.md`,
//! which is compared with what the libraries give where they are the
//! builds it was written from; `PROFILER_BLESS=1` rewrites it.

// A test fails by panicking: its helpers unwrap as its #[test]s do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use object::{Object, ObjectSymbol};
use profiler_symbols::demangle;

const LIBRARIES: &[&str] = &[
    "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
    "/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1",
    "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
];

/// The least share of names on which a demangler must agree with c++filt.
const AGREEMENT: f64 = 99.9;

/// A library's distinct C++ symbol names, with what c++filt makes of them.
struct Library {
    path: &'static str,
    build_id: String,
    names: Vec<String>,
    /// `c++filt -i`, then `c++filt -i -p`, one line per name.
    cxxfilt: [Vec<String>; 2],
}

/// A name on which a demangler and c++filt differ.
struct Difference<'a> {
    name: &'a str,
    ours: String,
    theirs: &'a str,
}

fn read(path: &'static str) -> Library {
    let data = std::fs::read(path).unwrap();
    let file = object::File::parse(&*data).unwrap();
    let mut names: Vec<String> = (file.dynamic_symbols().chain(file.symbols()))
        .filter_map(|s| s.name().ok().map(str::to_owned))
        .filter(|n| n.starts_with("_Z"))
        .collect();
    names.sort_unstable();
    names.dedup();
    assert!(names.len() > 1000, "{path}: {} names", names.len());
    let build_id = file.build_id().unwrap().map_or_else(String::new, |id| {
        id.iter().map(|b| format!("{b:02x}")).collect()
    });
    let cxxfilt = [&["-i"][..], &["-i", "-p"]].map(|options| cxxfilt(&names, options));
    Library {
        path,
        build_id,
        names,
        cxxfilt,
    }
}

fn cxxfilt(names: &[String], options: &[&str]) -> Vec<String> {
    let mut child = Command::new("c++filt")
        .args(options)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("c++filt (binutils) is needed");
    let mut stdin = child.stdin.take().unwrap();
    let input: String = names.iter().map(|n| format!("{n}\n")).collect();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(output.status.success());
    let lines: Vec<String> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(lines.len(), names.len());
    lines
}

/// Where our names and c++filt's differ on `library`'s, with argument
/// lists and then without.
fn differences(library: &Library) -> [Vec<Difference<'_>>; 2] {
    [true, false].map(|full| {
        let theirs = &library.cxxfilt[usize::from(!full)];
        (library.names.iter().zip(theirs))
            .map(|(name, theirs)| Difference {
                name,
                ours: demangle(name, full),
                theirs,
            })
            .filter(|d| d.ours != d.theirs)
            .collect()
    })
}

fn agreement(differ: usize, names: usize) -> f64 {
    100.0 - differ as f64 * 100.0 / names as f64
}

/// Says on the terminal, past the harness's capture.
fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

#[test]
fn cpp_names_read_as_cxxfilt_prints_them() {
    if !profiler_testing::tool("c++filt") {
        return;
    }
    let libraries: Vec<Library> = (LIBRARIES.iter())
        .filter(|p| Path::new(p).exists())
        .map(|&p| read(p))
        .collect();
    assert!(
        libraries.iter().any(|l| l.path.ends_with("libstdc++.so.6")),
        "libstdc++ is missing"
    );
    let listed: Vec<[Vec<Difference>; 2]> = libraries.iter().map(differences).collect();
    let mut failures = Vec::new();
    for (library, lists) in libraries.iter().zip(&listed) {
        for (differ, options) in lists.iter().zip(["-i", "-i -p"]) {
            let agree = agreement(differ.len(), library.names.len());
            let line = format!(
                "{}: {} of {} names differ from c++filt {options}, {agree:.3}% agree",
                library.path,
                differ.len(),
                library.names.len()
            );
            say(&line);
            if agree < AGREEMENT {
                failures.push(line);
            }
        }
    }
    check_list(&libraries, &listed);
    assert!(
        failures.is_empty(),
        "below {AGREEMENT}%:\n{}",
        failures.join("\n")
    );
}

/// Compares `docs/demangling.md` with our names' differences from c++filt's
/// where it was written from these builds of these libraries; writes it
/// with `PROFILER_BLESS=1`.
fn check_list(libraries: &[Library], listed: &[[Vec<Difference>; 2]]) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/demangling.md");
    let page = differences_page(libraries, listed);
    let bless = std::env::var_os("PROFILER_BLESS").is_some_and(|v| v == "1");
    assert!(
        !(bless && profiler_testing::ci()),
        "PROFILER_BLESS=1 under CI=true: the list is blessed by hand, never by CI"
    );
    if bless {
        std::fs::write(&path, &page).unwrap();
        return;
    }
    let written = std::fs::read_to_string(&path).unwrap_or_default();
    let table = |text: &str| text.split("\n## ").next().unwrap_or_default().to_owned();
    if table(&written) != table(&page) {
        say(&format!(
            "{} was written from other builds of the libraries (or none): not compared",
            path.display()
        ));
        return;
    }
    assert!(
        written == page,
        "{} differs from what the demangler gives now; \
         PROFILER_BLESS=1 rewrites it: review the diff",
        path.display()
    );
}

/// The differences page up to its table of libraries.
const PAGE_HEAD: &str = r"# C++ names against c++filt

C++ names are demangled by the cpp_demangle crate, whose spelling is then made
that of c++filt (GNU libiberty's demangler, which perf and gdb use too). This
page lists every C++ symbol of libstdc++ and libLLVM on which that reading
still differs from `c++filt -i` (names with their argument lists, as
`--full-signatures` prints them) or `c++filt -i -p` (without, as reports print
functions). The differences are of four kinds, each cpp_demangle's reading of
the mangled name:

- a lambda of a function template, in a template argument: cpp_demangle gives
  the enclosing function its return type (`void llvm::cfg::LegalizeUpdates<..>(..)::{lambda..}`);
- a lambda of a `const` member function, in a template argument: cpp_demangle
  misplaces the function's name and its `const`;
- a pack of forwarding references after a substitution (`std::make_unique`):
  only the pack's first element keeps its `&&`;
- one parenthesized negation in a template argument (`!(x)` for `!x`).

`crates/symbols/tests/cxxfilt.rs` checks this page on the builds of the
libraries below, and writes it anew with:

```sh
PROFILER_BLESS=1 cargo test -p profiler-symbols --test cxxfilt
```

| library | build-id | names | differ from `-i` | differ from `-i -p` |
| --- | --- | ---: | ---: | ---: |
";

/// The page listing every name on which our demangling and c++filt
/// differ.
fn differences_page(libraries: &[Library], listed: &[[Vec<Difference>; 2]]) -> String {
    let mut page = String::from(PAGE_HEAD);
    let mut totals = [0; 3];
    for (library, [full, short]) in libraries.iter().zip(listed) {
        let names = library.names.len();
        let share = |differ: &Vec<Difference>| {
            format!(
                "{} ({:.3}% agree)",
                differ.len(),
                agreement(differ.len(), names)
            )
        };
        let _ = writeln!(
            page,
            "| {} | {} | {names} | {} | {} |",
            library.path,
            library.build_id,
            share(full),
            share(short)
        );
        for (total, n) in totals.iter_mut().zip([names, full.len(), short.len()]) {
            *total += n;
        }
    }
    let [names, full, short] = totals;
    let _ = writeln!(
        page,
        "| all | | {names} | {full} ({:.3}% agree) | {short} ({:.3}% agree) |",
        agreement(full, names),
        agreement(short, names)
    );
    for (library, lists) in libraries.iter().zip(listed) {
        for (differ, options) in lists.iter().zip(["-i", "-i -p"]) {
            if differ.is_empty() {
                continue;
            }
            let _ = write!(
                page,
                "\n## {}, against `c++filt {options}`\n\n",
                library.path
            );
            for d in differ {
                let _ = write!(
                    page,
                    "- `{}`\n  - cpp_demangle: `{}`\n  - c++filt: `{}`\n",
                    d.name, d.ours, d.theirs
                );
            }
        }
    }
    page
}
