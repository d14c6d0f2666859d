//! The symbolizer against GNU addr2line on every instruction (or thousands
//! of them) of real binaries: C at -O2 with deep inlining, C++ templates and
//! the STL, Rust with its standard library, a shared library, a non-PIE
//! binary, and debug info behind a debuglink, a build-id path, zlib and zstd.
//!
//! Where we differ from GNU, llvm-symbolizer decides: binutils 2.40 names
//! some inlined C++ frames after the enclosing symbol, and misnames a file
//! in one DWARF 5 case. Names are compared without whitespace and with the
//! two demanglers' spellings of integer template arguments made alike;
//! against llvm-symbolizer, whose demangler spells lambdas and `auto`
//! parameters its own way, without argument lists. Every disagreement left
//! is printed.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::util::*;

/// One frame: function, and file:line.
#[derive(Clone, Debug, PartialEq)]
struct Frame {
    function: Option<String>,
    location: Option<(String, u64)>,
}

/// At most this many addresses per binary.
const MAX_ADDRESSES: usize = 6000;

fn tools_present() -> bool {
    ["addr2line", "llvm-symbolizer", "objdump", "nm"]
        .iter()
        .all(|tool| profiler_testing::tool(tool))
}

fn output(command: &mut Command) -> String {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn output_with_input(command: &mut Command, input: &str) -> String {
    use std::io::Write;
    let mut child = command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_owned();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        output.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Instruction addresses inside sized text symbols (padding between
/// functions belongs to none, and the tools disagree about it), evenly
/// thinned to at most MAX_ADDRESSES.
fn addresses(binary: &Path) -> Vec<u64> {
    let mut functions: Vec<(u64, u64)> = output(
        Command::new("nm")
            .args(["-S", "--defined-only"])
            .arg(binary),
    )
    .lines()
    .filter_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [start, size, kind, _] = fields[..] else {
            return None;
        };
        let start = u64::from_str_radix(start, 16).ok()?;
        let size = u64::from_str_radix(size, 16).ok()?;
        ("tTwW".contains(kind)).then_some((start, start + size))
    })
    .collect();
    functions.sort_unstable();
    let all: Vec<u64> = output(
        Command::new("objdump")
            .args(["-d", "--no-show-raw-insn"])
            .arg(binary),
    )
    .lines()
    .filter_map(|line| {
        let (address, _) = line.trim_start().split_once(':')?;
        if !line.starts_with(' ') {
            return None;
        }
        let address = u64::from_str_radix(address, 16).ok()?;
        let i = functions
            .partition_point(|f| f.0 <= address)
            .checked_sub(1)?;
        (address < functions[i].1).then_some(address)
    })
    .collect();
    let step = all.len().div_ceil(MAX_ADDRESSES).max(1);
    all.into_iter().step_by(step).collect()
}

fn input(addresses: &[u64]) -> String {
    addresses.iter().map(|a| format!("{a:#x}\n")).collect()
}

fn ours(binary: &Path, addresses: &[u64], extra: &[&str]) -> Vec<Vec<Frame>> {
    let mut command = profiler();
    command
        .args([
            "symbolize",
            "--inlines",
            "--full-signatures",
            "--format",
            "json",
            "--exe",
        ])
        .arg(binary)
        .args(extra);
    let json: Value =
        serde_json::from_str(&output_with_input(&mut command, &input(addresses))).unwrap();
    json.as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            entry["frames"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| Frame {
                    function: f["function"].as_str().map(str::to_owned),
                    location: f["file"]
                        .as_str()
                        .zip(f["line"].as_u64())
                        .map(|(file, l)| (file.to_owned(), l)),
                })
                .collect()
        })
        .collect()
}

fn gnu(binary: &Path, addresses: &[u64]) -> Vec<Vec<Frame>> {
    let mut command = Command::new("addr2line");
    command.args(["-a", "-f", "-i", "-C", "-e"]).arg(binary);
    let text = output_with_input(&mut command, &input(addresses));
    let mut chains: Vec<Vec<Frame>> = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.starts_with("0x") && line.len() == 18 {
            chains.push(Vec::new());
            continue;
        }
        let location = lines.next().unwrap_or("??:0");
        let location = location.split(" (discriminator").next().unwrap_or(location);
        let location = location.rsplit_once(':').and_then(|(file, line)| {
            let line: u64 = line.parse().ok().filter(|&l| l > 0)?;
            (file != "??").then(|| (file.to_owned(), line))
        });
        let function = (line != "??").then(|| line.to_owned());
        chains
            .last_mut()
            .unwrap()
            .push(Frame { function, location });
    }
    chains
}

fn llvm(binary: &Path, addresses: &[u64]) -> Vec<Vec<Frame>> {
    let mut command = Command::new("llvm-symbolizer");
    command
        .arg("--output-style=JSON")
        .arg(format!("--obj={}", binary.display()));
    output_with_input(&mut command, &input(addresses))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let entry: Value = serde_json::from_str(line).unwrap();
            entry["Symbol"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|f| Frame {
                    function: f["FunctionName"]
                        .as_str()
                        .filter(|n| !n.is_empty())
                        .map(str::to_owned),
                    location: f["FileName"]
                        .as_str()
                        .filter(|n| !n.is_empty())
                        .zip(f["Line"].as_u64().filter(|&l| l > 0))
                        .map(|(file, l)| (file.to_owned(), l)),
                })
                .collect()
        })
        .collect()
}

/// A name without whitespace, with integer template arguments spelled as
/// libiberty spells them (`2ul`, where other demanglers write `(unsigned
/// long)2`).
fn spelled_alike(name: &str) -> String {
    let mut name: String = name.split_whitespace().collect();
    for (cast, suffix) in [
        ("(unsignedlong)", "ul"),
        ("(long)", "l"),
        ("(unsignedint)", "u"),
        ("(int)", ""),
    ] {
        while let Some(at) = name.find(cast) {
            let digits: String = name[at + cast.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if digits.is_empty() {
                break;
            }
            name.replace_range(
                at..at + cast.len() + digits.len(),
                &format!("{digits}{suffix}"),
            );
        }
    }
    name
}

/// The qualified name alone: no return type, template arguments, parameters
/// or clone suffix.
fn bare(name: &str) -> String {
    let name = name.replace("(.cold)", "");
    let mut out = String::new();
    let mut depth = 0i32;
    let mut clone = false;
    for ch in name.chars() {
        match ch {
            '[' => clone = true,
            ']' => clone = false,
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            _ if depth == 0 && !clone => out.push(ch),
            _ => {}
        }
    }
    let out: String = out.split_whitespace().collect::<Vec<_>>().join(" ");
    out.rsplit(' ').next().unwrap_or(&out).to_owned()
}

struct Agreement {
    addresses: usize,
    functions: usize,
    lines: usize,
    chains: usize,
    settled_by_llvm: usize,
    /// Examples of what llvm-symbolizer settled, to show what GNU does.
    settled_examples: Vec<String>,
    disagreements: Vec<String>,
}

fn compare(
    ours: &[Vec<Frame>],
    gnu: &[Vec<Frame>],
    llvm: &[Vec<Frame>],
    addresses: &[u64],
) -> Agreement {
    assert_eq!(
        (ours.len(), gnu.len(), llvm.len()),
        (addresses.len(), addresses.len(), addresses.len())
    );
    let mut result = Agreement {
        addresses: addresses.len(),
        functions: 0,
        lines: 0,
        chains: 0,
        settled_by_llvm: 0,
        settled_examples: Vec::new(),
        disagreements: Vec::new(),
    };
    for (((o, g), l), address) in ours.iter().zip(gnu).zip(llvm).zip(addresses) {
        let innermost = |chain: &[Frame]| {
            chain.first().cloned().unwrap_or(Frame {
                function: None,
                location: None,
            })
        };
        let (o0, g0, l0) = (innermost(o), innermost(g), innermost(l));
        let exact = |a: &Frame, b: &Frame| {
            a.function.as_deref().map(spelled_alike) == b.function.as_deref().map(spelled_alike)
        };
        let loose = |a: &Frame, b: &Frame| {
            a.function.as_deref().map(bare) == b.function.as_deref().map(bare)
        };
        if exact(&o0, &g0) {
            result.functions += 1;
        } else if loose(&o0, &l0) {
            result.functions += 1;
            result.settled_by_llvm += 1;
            if result.settled_examples.len() < 2 {
                result.settled_examples.push(format!(
                    "{address:#x} function: GNU {:?}, llvm and ours {:?}",
                    g0.function, o0.function
                ));
            }
        } else {
            result.disagreements.push(format!(
                "{address:#x} function: ours {:?}, GNU {:?}, llvm {:?}",
                o0.function, g0.function, l0.function
            ));
        }
        if o0.location == g0.location {
            result.lines += 1;
        } else if o0.location == l0.location {
            result.lines += 1;
            if result.settled_examples.len() < 4 {
                result.settled_examples.push(format!(
                    "{address:#x} line: GNU {:?}, llvm and ours {:?}",
                    g0.location, o0.location
                ));
            }
        } else {
            result.disagreements.push(format!(
                "{address:#x} line: ours {:?}, GNU {:?}, llvm {:?}",
                o0.location, g0.location, l0.location
            ));
        }
        let locations =
            |chain: &[Frame]| chain.iter().map(|f| f.location.clone()).collect::<Vec<_>>();
        if locations(o) == locations(g) || locations(o) == locations(l) {
            result.chains += 1;
        }
    }
    result
}

/// (what it is, our binary, the binary the oracles read, our extra flags)
fn cases(debug_dir: &str) -> Vec<(&'static str, &'static str, &'static str, Vec<String>)> {
    vec![
        (
            "C, -O2 -g, deep inlining, PIE",
            "inlining",
            "inlining",
            vec![],
        ),
        ("C, non-PIE", "inlining-nopie", "inlining-nopie", vec![]),
        (
            "C++ templates and the STL",
            "templates",
            "templates",
            vec![],
        ),
        (
            "C++ shared library",
            "libtemplates.so",
            "libtemplates.so",
            vec![],
        ),
        (
            "Rust with its standard library",
            "rusthot",
            "rusthot",
            vec![],
        ),
        (
            "debug info behind .gnu_debuglink",
            "inlining-debuglink",
            "inlining",
            vec![],
        ),
        (
            "debug info at a build-id path",
            "inlining-buildid",
            "inlining",
            vec!["--debug-dir".into(), debug_dir.into()],
        ),
        (
            "zlib-compressed debug sections",
            "inlining-zlib",
            "inlining",
            vec![],
        ),
        (
            "zstd-compressed debug sections",
            "inlining-zstd",
            "inlining",
            vec![],
        ),
    ]
}

#[test]
fn symbolization_agrees_with_addr2line() {
    if !tools_present() {
        return;
    }
    let debug_dir = fixture("debug");
    let mut failures = Vec::new();
    for (what, ours_binary, oracle_binary, extra) in cases(debug_dir.to_str().unwrap()) {
        let oracle = fixture(oracle_binary);
        let addresses = addresses(&oracle);
        assert!(
            addresses.len() >= 1000,
            "{what}: only {} addresses",
            addresses.len()
        );
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let ours = ours(&fixture(ours_binary), &addresses, &extra);
        let result = compare(
            &ours,
            &gnu(&oracle, &addresses),
            &llvm(&oracle, &addresses),
            &addresses,
        );
        let percent = |n: usize| 100.0 * n as f64 / result.addresses as f64;
        eprintln!(
            "{ours_binary:18} {what}: {} addresses; function {:.2}%, line {:.2}%, whole inline chain {:.2}% \
             ({} function names settled by llvm-symbolizer where GNU differs)",
            result.addresses,
            percent(result.functions),
            percent(result.lines),
            percent(result.chains),
            result.settled_by_llvm
        );
        for example in &result.settled_examples {
            eprintln!("    settled, e.g. {example}");
        }
        for disagreement in &result.disagreements {
            eprintln!("    DISAGREE {disagreement}");
        }
        if percent(result.functions) < 99.5 || percent(result.lines) < 99.0 {
            failures.push(format!(
                "{what}: function {:.2}%, line {:.2}%",
                percent(result.functions),
                percent(result.lines)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "below 99.5% of functions or 99% of lines: {failures:?}"
    );
}

#[test]
fn without_its_debug_directory_a_build_id_binary_has_no_lines() {
    if !tools_present() {
        return;
    }
    // The control for the build-id case: the lines above come from the
    // debug directory, not from somewhere else.
    let addresses: Vec<u64> = addresses(&fixture("inlining"))
        .into_iter()
        .take(200)
        .collect();
    let ours = ours(&fixture("inlining-buildid"), &addresses, &[]);
    assert!(
        ours.iter()
            .all(|chain| chain.iter().all(|f| f.location.is_none()))
    );
}

#[test]
fn names_are_compared_by_spelling_and_bare_name() {
    assert_eq!(
        spelled_alike("Vec<double, (unsigned long)2>"),
        "Vec<double,2ul>"
    );
    assert_eq!(spelled_alike("f<(int)-1>"), "f<(int)-1>");
    assert_eq!(
        bare("void std::__adjust_heap<It, long>(It, long) [clone .cold]"),
        "std::__adjust_heap"
    );
    assert_eq!(
        bare("run_shapes(workload::Rng&, unsigned long)::'lambda'(auto const&)"),
        "run_shapes::'lambda'"
    );
}
