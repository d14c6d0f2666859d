//! C++ names against c++filt: every C++ symbol of libstdc++ (and of
//! libLLVM, the biggest C++ library a machine with llvm has), demangled with
//! and without argument lists, must read as `c++filt -i` and `c++filt -i -p`
//! print them (`-i`: `std::string` rather than its full template, as perf
//! and gdb print it). At least 99.9% must agree; every difference is
//! printed.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use object::{Object, ObjectSymbol};

const LIBRARIES: &[&str] = &[
    "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
    "/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1",
    "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
];

/// The distinct C++ symbol names of a library, dynamic and static.
fn cpp_symbols(path: &Path) -> Vec<String> {
    let data = std::fs::read(path).unwrap();
    let file = object::File::parse(&*data).unwrap();
    let mut names: Vec<String> = (file.dynamic_symbols().chain(file.symbols()))
        .filter_map(|s| s.name().ok().map(str::to_owned))
        .filter(|n| n.starts_with("_Z"))
        .collect();
    names.sort_unstable();
    names.dedup();
    names
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
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn cpp_names_read_as_cxxfilt_prints_them() {
    if !profiler_testing::tool("c++filt") {
        return;
    }
    let present: Vec<&Path> = (LIBRARIES.iter().map(Path::new))
        .filter(|p| p.exists())
        .collect();
    assert!(
        present.iter().any(|p| p.ends_with("libstdc++.so.6")),
        "libstdc++ is missing"
    );
    for library in present {
        let names = cpp_symbols(library);
        assert!(
            names.len() > 1000,
            "{}: {} names",
            library.display(),
            names.len()
        );
        for (full, options) in [(true, &["-i"][..]), (false, &["-i", "-p"][..])] {
            let theirs = cxxfilt(&names, options);
            assert_eq!(theirs.len(), names.len());
            let differ: Vec<(&String, String, &String)> = (names.iter().zip(&theirs))
                .map(|(name, theirs)| (name, profiler_symbols::demangle(name, full), theirs))
                .filter(|(_, ours, theirs)| ours != *theirs)
                .collect();
            for (name, ours, theirs) in &differ {
                println!("{name}\n  ours:     {ours}\n  c++filt:  {theirs}");
            }
            let agree = 100.0 - differ.len() as f64 * 100.0 / names.len() as f64;
            println!(
                "{}, c++filt {}: {} of {} names differ, {agree:.3}% agree",
                library.display(),
                options.join(" "),
                differ.len(),
                names.len()
            );
            assert!(
                agree >= 99.9,
                "{}: only {agree:.3}% agree",
                library.display()
            );
        }
    }
}
