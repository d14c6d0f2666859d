//! include/profiler.h against the library: the functions it declares are
//! the ones libprofiler.so and libprofiler.a export, with the parameter
//! and return types of the Rust definitions; its structs have the Rust
//! structs' layout, as a C compiler lays them out; its constants have the
//! Rust constants' values. The Fortran module (include/profiler.f90)
//! binds the same functions and has the same constants.

// A test fails by panicking: its helpers unwrap as its #[test]s do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::mem::{align_of, offset_of, size_of};
use std::path::{Path, PathBuf};
use std::process::Command;

use profiler::*;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn header() -> String {
    std::fs::read_to_string(root().join("include/profiler.h")).unwrap()
}

/// Where cargo built libprofiler.so and .a for this test: beside it.
fn library(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let path = exe.parent().unwrap().join(name);
    assert!(path.exists(), "cargo built no {}", path.display());
    path
}

/// The header without its comments.
fn code(header: &str) -> String {
    let mut code = String::new();
    let mut rest = header;
    while let Some(start) = rest.find("/*") {
        code.push_str(&rest[..start]);
        let end = rest[start..].find("*/").expect("an unclosed comment") + start + 2;
        rest = &rest[end..];
    }
    code.push_str(rest);
    code
}

/// A C type as tokens, `*` apart, a leading `const` after the type it
/// qualifies: `char const *`, `prof_session * *`, `char const * const *`.
fn tokens(text: &str) -> String {
    let spaced = text.replace('*', " * ");
    let mut words: Vec<&str> = spaced.split_whitespace().collect();
    if words.len() >= 2 && words[0] == "const" {
        words.swap(0, 1);
    }
    words.join(" ")
}

/// Each function the header declares: return type and parameter types.
fn declared(header: &str) -> BTreeMap<String, (String, Vec<String>)> {
    code(header)
        .split(';')
        .filter(|statement| !statement.contains("typedef"))
        .filter_map(|statement| {
            let statement = statement
                .lines()
                .filter(|line| !line.trim_start().starts_with('#'))
                .collect::<Vec<_>>()
                .join(" ");
            let open = statement.find("prof_")?;
            let paren = open + statement[open..].find('(')?;
            let name = statement[open..paren].trim().to_owned();
            let close = statement.rfind(')')?;
            let parameters = statement[paren + 1..close]
                .split(',')
                .map(|parameter| {
                    // Drop the parameter's name: every one has a name here;
                    // `values[]` is a pointer.
                    let words = tokens(parameter);
                    let mut words: Vec<&str> = words.split(' ').collect();
                    if words.pop().is_some_and(|name| name.ends_with("[]")) {
                        words.push("*");
                    }
                    words.join(" ")
                })
                .collect();
            Some((name, (tokens(&statement[..open]), parameters)))
        })
        .collect()
}

/// The C spelling of a Rust type of the exported signatures.
fn c_type(rust: &str) -> String {
    let rust = rust.trim();
    if let Some(inner) = rust.strip_prefix("*mut ") {
        return format!("{} *", c_type(inner));
    }
    if let Some(inner) = rust.strip_prefix("*const ") {
        return format!("{} const *", c_type(inner));
    }
    match rust {
        "c_int" => "int",
        "c_uint" => "unsigned",
        "c_longlong" => "long long",
        "c_char" => "char",
        "c_void" => "void",
        "size_t" => "size_t",
        "uintptr_t" => "uintptr_t",
        "ProfSession" => "prof_session",
        "ProfRegion" => "prof_region",
        "ProfStats" => "prof_stats",
        "ProfEncoding" => "prof_encoding",
        "ProfCounters" => "prof_counters",
        "ProfCount" => "prof_count",
        "Option<OverflowHandler>" => "prof_overflow_handler",
        "Option<ErrorHandler>" => "prof_error_handler",
        other => panic!("no C spelling for the Rust type {other}"),
    }
    .to_owned()
}

/// Each `extern "C"` function of the crate's source, in C types.
fn defined() -> BTreeMap<String, (String, Vec<String>)> {
    let source: String = ["src/exports.rs", "src/counters.rs"]
        .iter()
        .map(|file| {
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap()
        })
        .collect();
    source
        .split("extern \"C\" fn ")
        .skip(1)
        .map(|rest| {
            let paren = rest.find('(').unwrap();
            let close = rest.find(')').unwrap();
            let brace = rest.find('{').unwrap();
            let parameters = rest[paren + 1..close]
                .split(',')
                .filter(|p| !p.trim().is_empty())
                .map(|p| tokens(&c_type(p.split_once(':').unwrap().1)))
                .collect();
            let returns = rest[close + 1..brace]
                .trim()
                .strip_prefix("->")
                .map_or("void".to_owned(), |r| tokens(&c_type(r)));
            (rest[..paren].trim().to_owned(), (returns, parameters))
        })
        .collect()
}

/// The global functions `nm` finds defined in `library`.
fn exported(library: &Path, dynamic: bool) -> BTreeSet<String> {
    let mut nm = Command::new("nm");
    if dynamic {
        nm.arg("-D");
    }
    let output = nm
        .arg("--defined-only")
        .arg(library)
        .output()
        .expect("nm (binutils) is needed");
    assert!(output.status.success(), "nm {}", library.display());
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(
            |line| match line.split_whitespace().collect::<Vec<_>>()[..] {
                [_, "T", name] if name.starts_with("prof_") => Some(name.to_owned()),
                _ => None,
            },
        )
        .collect()
}

#[test]
fn the_header_declares_what_the_libraries_export_with_the_rust_types() {
    let declared = declared(&header());
    assert_eq!(declared.len(), 22, "{declared:#?}");
    assert_eq!(declared, defined());
    let names: BTreeSet<String> = declared.into_keys().collect();
    assert_eq!(exported(&library("libprofiler.so"), true), names);
    assert_eq!(exported(&library("libprofiler.a"), false), names);
}

/// The library's constants, by name.
fn constants() -> BTreeMap<&'static str, i32> {
    BTreeMap::from([
        ("PROF_POSIX", PROF_POSIX),
        ("PROF_RANDOM", PROF_RANDOM),
        ("PROF_WEIGHTED", PROF_WEIGHTED),
        ("PROF_COMPRESS", PROF_COMPRESS),
        ("PROF_BUCKET_16", PROF_BUCKET_16),
        ("PROF_BUCKET_32", PROF_BUCKET_32),
        ("PROF_BUCKET_64", PROF_BUCKET_64),
        ("PROF_FORCE_SW", PROF_FORCE_SW),
        ("PROF_OVERFLOW_FORCE_SW", PROF_OVERFLOW_FORCE_SW),
        ("PROF_SCOPE_THREAD", PROF_SCOPE_THREAD),
        ("PROF_SCOPE_INHERIT", PROF_SCOPE_INHERIT),
        ("PROF_SCOPE_PROCESS", PROF_SCOPE_PROCESS),
        ("PROF_OK", PROF_OK),
        ("PROF_EINVAL", PROF_EINVAL),
        ("PROF_ESYS", PROF_ESYS),
        ("PROF_EBUG", PROF_EBUG),
        ("PROF_ENOEVNT", PROF_ENOEVNT),
        ("PROF_ESTATE", PROF_ESTATE),
        ("PROF_EPERM", PROF_EPERM),
        ("PROF_ENOSUPP", PROF_ENOSUPP),
    ])
}

#[test]
fn the_headers_constants_are_the_librarys() {
    let code = code(&header());
    let defined: BTreeMap<&str, i32> = code
        .lines()
        .filter_map(|line| {
            let mut words = line.strip_prefix("#define ")?.split_whitespace();
            let name = words.next().filter(|name| name.starts_with("PROF_"))?;
            let value = words.next()?;
            let value = match value.strip_prefix("0x") {
                Some(hex) => i32::from_str_radix(hex, 16),
                None => value.parse(),
            };
            Some((name, value.unwrap()))
        })
        .collect();
    assert_eq!(defined, constants());
}

#[test]
fn the_fortran_module_binds_the_same_functions_and_constants() {
    let module = std::fs::read_to_string(root().join("include/profiler.f90")).unwrap();
    let parameters: BTreeMap<&str, i32> = module
        .lines()
        .filter_map(|line| {
            let (_, assignment) = line.split_once("parameter :: ")?;
            let (name, value) = assignment.split_once(" = ")?;
            Some((name, value.trim().parse().ok()?))
        })
        .collect();
    assert_eq!(parameters, constants());
    let bound: BTreeSet<String> = module
        .split("bind(c, name=\"")
        .skip(1)
        .filter_map(|rest| Some(rest.split_once('"')?.0.to_owned()))
        .filter(|name| name.starts_with("prof_"))
        .collect();
    let names: BTreeSet<String> = declared(&header()).into_keys().collect();
    assert_eq!(bound, names);
}

#[test]
fn the_headers_structs_have_the_rust_layout() {
    let dir = std::env::temp_dir().join(format!("profiler-capi-layout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("layout.c");
    let fields = [
        ("prof_region", "buf"),
        ("prof_region", "bufsiz"),
        ("prof_region", "offset"),
        ("prof_region", "scale"),
        ("prof_stats", "samples"),
        ("prof_stats", "outside"),
        ("prof_stats", "saturated"),
        ("prof_stats", "lost"),
        ("prof_encoding", "type"),
        ("prof_encoding", "config"),
        ("prof_encoding", "config1"),
        ("prof_encoding", "config2"),
        ("prof_encoding", "exclude_user"),
        ("prof_encoding", "exclude_kernel"),
        ("prof_encoding", "exclude_hv"),
        ("prof_encoding", "precise_ip"),
        ("prof_count", "value"),
        ("prof_count", "raw"),
        ("prof_count", "time_enabled"),
        ("prof_count", "time_running"),
    ];
    let mut program = String::from(
        "#include <stddef.h>\n#include <stdio.h>\n#include <profiler.h>\nint main(void) {\n",
    );
    for name in ["prof_region", "prof_stats", "prof_encoding", "prof_count"] {
        program.push_str(&format!(
            "    printf(\"{name} %zu %zu\\n\", sizeof({name}), _Alignof({name}));\n"
        ));
    }
    for (name, field) in fields {
        program.push_str(&format!(
            "    printf(\"{name}.{field} %zu\\n\", offsetof({name}, {field}));\n"
        ));
    }
    program.push_str("    return 0;\n}\n");
    std::fs::write(&source, program).unwrap();
    let binary = dir.join("layout");
    let status = Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-pedantic", "-Werror", "-I"])
        .arg(root().join("include"))
        .arg("-o")
        .arg(&binary)
        .arg(&source)
        .status()
        .expect("a C compiler (cc) is needed");
    assert!(status.success(), "compiling {}", source.display());
    let output = Command::new(&binary).output().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let printed = String::from_utf8(output.stdout).unwrap();

    let expected = [
        format!(
            "prof_region {} {}",
            size_of::<ProfRegion>(),
            align_of::<ProfRegion>()
        ),
        format!(
            "prof_stats {} {}",
            size_of::<ProfStats>(),
            align_of::<ProfStats>()
        ),
        format!(
            "prof_encoding {} {}",
            size_of::<ProfEncoding>(),
            align_of::<ProfEncoding>()
        ),
        format!(
            "prof_count {} {}",
            size_of::<ProfCount>(),
            align_of::<ProfCount>()
        ),
        format!("prof_count.value {}", offset_of!(ProfCount, value)),
        format!("prof_count.raw {}", offset_of!(ProfCount, raw)),
        format!(
            "prof_count.time_enabled {}",
            offset_of!(ProfCount, time_enabled)
        ),
        format!(
            "prof_count.time_running {}",
            offset_of!(ProfCount, time_running)
        ),
        format!("prof_region.buf {}", offset_of!(ProfRegion, buf)),
        format!("prof_region.bufsiz {}", offset_of!(ProfRegion, bufsiz)),
        format!("prof_region.offset {}", offset_of!(ProfRegion, offset)),
        format!("prof_region.scale {}", offset_of!(ProfRegion, scale)),
        format!("prof_stats.samples {}", offset_of!(ProfStats, samples)),
        format!("prof_stats.outside {}", offset_of!(ProfStats, outside)),
        format!("prof_stats.saturated {}", offset_of!(ProfStats, saturated)),
        format!("prof_stats.lost {}", offset_of!(ProfStats, lost)),
        format!("prof_encoding.type {}", offset_of!(ProfEncoding, type_)),
        format!("prof_encoding.config {}", offset_of!(ProfEncoding, config)),
        format!(
            "prof_encoding.config1 {}",
            offset_of!(ProfEncoding, config1)
        ),
        format!(
            "prof_encoding.config2 {}",
            offset_of!(ProfEncoding, config2)
        ),
        format!(
            "prof_encoding.exclude_user {}",
            offset_of!(ProfEncoding, exclude_user)
        ),
        format!(
            "prof_encoding.exclude_kernel {}",
            offset_of!(ProfEncoding, exclude_kernel)
        ),
        format!(
            "prof_encoding.exclude_hv {}",
            offset_of!(ProfEncoding, exclude_hv)
        ),
        format!(
            "prof_encoding.precise_ip {}",
            offset_of!(ProfEncoding, precise_ip)
        ),
    ];
    let mut printed: Vec<&str> = printed.lines().collect();
    let mut expected: Vec<&str> = expected.iter().map(String::as_str).collect();
    printed.sort_unstable();
    expected.sort_unstable();
    assert_eq!(printed, expected);
}
