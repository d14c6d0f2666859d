//! libprofiler from C and C++: fixture programs that call it, checked
//! against the truth of their work, against `profiler record --histogram`
//! on the same run, and against `profiler list`.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use profiler_histogram::Scale;
use serde_json::Value;

use crate::histogram::function_count;
use crate::util::*;

/// One sample per 100 µs of CPU time.
const THRESHOLD_NS: u64 = 100_000;
const SPLIT: [(&str, f64); 3] = [("burn_60", 0.6), ("burn_30", 0.3), ("burn_10", 0.1)];

/// What a fixture printed (see fixtures/programs/capi.h).
#[derive(Debug, Default)]
struct Printed {
    regions: Vec<PrintedRegion>,
    /// Where each function runs.
    functions: HashMap<String, u64>,
    /// samples, outside, saturated, lost.
    stats: [u64; 4],
}

#[derive(Debug)]
struct PrintedRegion {
    offset: u64,
    scale: u32,
    /// The nonzero buckets: (index, count).
    buckets: Vec<(u64, u64)>,
}

impl Printed {
    fn parse(output: &Output) -> Printed {
        let text = String::from_utf8_lossy(&output.stdout);
        let mut printed = Printed::default();
        let number = |field: &str| {
            field
                .strip_prefix("0x")
                .map_or_else(|| field.parse(), |hex| u64::from_str_radix(hex, 16))
                .unwrap_or_else(|_| panic!("'{field}' is no number in:\n{text}"))
        };
        for line in text.lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            match fields[..] {
                ["region", offset, scale, _bits] => printed.regions.push(PrintedRegion {
                    offset: number(offset),
                    scale: number(scale) as u32,
                    buckets: Vec::new(),
                }),
                ["function", name, address] => {
                    printed.functions.insert(name.to_owned(), number(address));
                }
                ["stats", a, b, c, d] => {
                    printed.stats = [number(a), number(b), number(c), number(d)];
                }
                ["bucket", index, count] => printed
                    .regions
                    .last_mut()
                    .expect("a bucket after its region")
                    .buckets
                    .push((number(index), number(count))),
                _ => {}
            }
        }
        printed
    }

    fn samples(&self) -> u64 {
        self.stats[0]
    }

    fn outside(&self) -> u64 {
        self.stats[1]
    }

    /// Region `index`'s counts, all together.
    fn total(&self, index: usize) -> u64 {
        self.regions[index]
            .buckets
            .iter()
            .map(|&(_, count)| count)
            .sum()
    }

    /// Region `index`'s counts in each of `functions`, by the exact first
    /// address of each bucket and the functions' extents in `binary`'s
    /// symbol table.
    fn per_function(&self, index: usize, binary: &Path, functions: &[&str]) -> Vec<u64> {
        let sizes = symbol_sizes(binary);
        let region = &self.regions[index];
        let scale = Scale::new(u64::from(region.scale)).unwrap();
        functions
            .iter()
            .map(|name| {
                let start = self.functions[*name];
                let extent = start..start + sizes[*name];
                region
                    .buckets
                    .iter()
                    .filter(|&&(i, _)| extent.contains(&(region.offset + scale.first_distance(i))))
                    .map(|&(_, count)| count)
                    .sum()
            })
            .collect()
    }
}

/// Each function's size, from `nm -S`.
pub(crate) fn symbol_sizes(binary: &Path) -> HashMap<String, u64> {
    let output = Command::new("nm")
        .args(["-S", "--defined-only"])
        .arg(binary)
        .output()
        .expect("nm (binutils) is needed");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(
            |line| match line.split_whitespace().collect::<Vec<_>>()[..] {
                [_, size, "T" | "t", name] => {
                    Some((name.to_owned(), u64::from_str_radix(size, 16).ok()?))
                }
                _ => None,
            },
        )
        .collect()
}

/// Runs a fixture, asserting success.
pub(crate) fn run_fixture(program: &Path, args: &[&str]) -> Output {
    let output = Command::new(program).args(args).output().unwrap();
    assert!(
        output.status.success(),
        "{} {args:?}: {}",
        program.display(),
        stderr(&output)
    );
    output
}

/// Shares of each count in the total, in percent.
fn shares(counts: &[u64]) -> Vec<f64> {
    let total: u64 = counts.iter().sum();
    assert!(total > 0, "no counts at all");
    counts
        .iter()
        .map(|&c| 100.0 * c as f64 / total as f64)
        .collect()
}

live_test!(
    prof_profil_agrees_with_record_and_the_truth_at_each_width,
    || {
        let dir = scratch("capi-split");
        let program = capi_fixture("capi-split");
        let names = SPLIT.map(|(name, _)| name);
        for (bits, scale) in [(16, 65536), (32, 32768), (64, 131072)] {
            let (bits, scale, threshold) = (
                bits.to_string(),
                scale.to_string(),
                THRESHOLD_NS.to_string(),
            );
            // The program profiles itself while record samples it: the two
            // histograms are of the same run.
            let data = format!("split-{bits}.data");
            let output = record(
                &dir,
                &data,
                &[
                    "--histogram",
                    "--bucket",
                    &bits,
                    "--scale",
                    &scale,
                    "-e",
                    "cpu-clock",
                    "-c",
                    &threshold,
                ],
                &[program.to_str().unwrap(), &bits, &scale, &threshold],
            );
            let printed = Printed::parse(&output);
            let own = printed.per_function(0, &program, &names);
            let [samples, outside, saturated, _] = printed.stats;
            assert!(samples >= 5000, "{bits} bits: {samples} samples");
            assert_eq!(saturated, 0, "{bits} bits");
            assert_eq!(printed.total(0), samples - outside, "{bits} bits");

            let table = run_json(
                &dir,
                &[
                    "hist",
                    "--format",
                    "json",
                    "-i",
                    &data,
                    "--module",
                    "capi-split",
                ],
            );
            assert_eq!(table["bucket_bits"].to_string(), bits);
            assert_eq!(table["scale"].to_string(), scale);
            let recorded: Vec<u64> = names.iter().map(|f| function_count(&table, f, 0)).collect();
            for (((name, truth), own), recorded) in
                SPLIT.iter().zip(shares(&own)).zip(shares(&recorded))
            {
                let context = format!(
                    "{bits} bits: {name}: {own:.1}% in the buffer, {recorded:.1}% recorded"
                );
                assert!((own - recorded).abs() <= 2.0, "{context}");
                assert!(
                    (own - truth * 100.0).abs() <= 4.0,
                    "{context}, {truth} true"
                );
            }
        }
    }
);

live_test!(prof_sprofil_fills_two_regions_and_the_overflow_bin, || {
    let program = capi_fixture("capi-regions");
    let sizes = symbol_sizes(&program);
    let (size60, size10) = (sizes["burn_60"].to_string(), sizes["burn_10"].to_string());
    let threshold = THRESHOLD_NS.to_string();
    let output = run_fixture(&program, &["regions", &threshold, "6", &size60, &size10]);
    let printed = Printed::parse(&output);
    // In the order given: burn_60, the bin, burn_10.
    assert_eq!(printed.regions.len(), 3, "{printed:?}");
    assert_eq!(
        (printed.regions[1].offset, printed.regions[1].scale),
        (0, 2)
    );
    let (r60, bin, r10) = (printed.total(0), printed.total(1), printed.total(2));
    assert_eq!(printed.outside(), bin, "{printed:?}");
    assert_eq!(r60 + bin + r10, printed.samples(), "{printed:?}");
    assert!(printed.samples() >= 3000, "{printed:?}");
    // burn_30 is in no region: its samples are the bin's.
    for (share, truth) in shares(&[r60, bin, r10]).into_iter().zip([60.0, 30.0, 10.0]) {
        assert!(
            (share - truth).abs() <= 4.0,
            "{share:.1}% where {truth}% belong: {printed:?}"
        );
    }
    // One bucket per byte: each index is a byte of its function.
    let last = |index: usize| printed.regions[index].buckets.iter().map(|&(i, _)| i).max();
    assert!(last(0) < Some(sizes["burn_60"]), "{printed:?}");
    assert!(last(2) < Some(sizes["burn_10"]), "{printed:?}");
});

live_test!(
    a_full_16_bit_bucket_saturates_and_counts_what_it_lost,
    || {
        let program = capi_fixture("capi-regions");
        let output = run_fixture(&program, &["saturate", &THRESHOLD_NS.to_string(), "3"]);
        let printed = Printed::parse(&output);
        let [samples, outside, saturated, _] = printed.stats;
        // The bucket started 100 below 65535: every sample in it after the
        // hundredth saturated it.
        assert_eq!(printed.regions[0].buckets, [(0, 65_535)], "{printed:?}");
        assert!(saturated > 0, "{printed:?}");
        assert_eq!(saturated + 100, samples - outside, "{printed:?}");
    }
);

live_test!(weighted_adds_each_samples_period, || {
    let program = capi_fixture("capi-regions");
    let output = run_fixture(&program, &["weighted", &THRESHOLD_NS.to_string(), "3"]);
    let printed = Printed::parse(&output);
    let [samples, outside, saturated, _] = printed.stats;
    assert!(samples >= 1000, "{printed:?}");
    assert_eq!(saturated, 0);
    assert_eq!(printed.total(0), THRESHOLD_NS * (samples - outside));
    assert!(
        printed.regions[0]
            .buckets
            .iter()
            .all(|&(_, count)| count % THRESHOLD_NS == 0),
        "{printed:?}"
    );
});

// PAPI's RANDOM drops a quarter of the samples; COMPRESS drops a sample
// with the chance its bucket is full, so a bucket from half full keeps
// fewer than half of its samples.
live_test!(random_and_compress_drop_samples_as_papi_does, || {
    let program = capi_fixture("capi-regions");
    let kept = |mode: &str| {
        let output = run_fixture(&program, &[mode, &THRESHOLD_NS.to_string(), "3"]);
        let printed = Printed::parse(&output);
        let [samples, outside, _, _] = printed.stats;
        assert!(samples - outside >= 1000, "{printed:?}");
        let base = if mode == "compress" { 32_768 } else { 0 };
        (printed.total(0) - base) as f64 / (samples - outside) as f64
    };
    let random = kept("random");
    assert!((random - 0.75).abs() <= 0.05, "RANDOM kept {random:.3}");
    let compress = kept("compress");
    assert!(
        (0.3..0.6).contains(&compress),
        "COMPRESS kept {compress:.3}"
    );
});

live_test!(workers_started_after_prof_start_are_counted, || {
    let program = capi_fixture("capi-threads");
    let output = run_fixture(&program, &[&THRESHOLD_NS.to_string()]);
    let printed = Printed::parse(&output);
    let workers = printed.per_function(0, &program, &["worker_a_work", "worker_b_work"]);
    let total = printed.total(0);
    // 450 units of about 1.3 ms: some 5000 samples, all the workers'.
    assert!(printed.samples() >= 2500, "{printed:?}");
    assert!(
        (workers[0] + workers[1]) * 10 >= total * 9,
        "{workers:?} of {total}"
    );
    let a = shares(&workers)[0];
    assert!(
        (a - 66.7).abs() <= 6.0,
        "worker a has {a:.1}% of {workers:?}"
    );
});

/// The `case NAME CODE MESSAGE` lines capi-errors printed, by name.
pub(crate) fn error_cases(text: &str) -> HashMap<&str, (i32, &str)> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.strip_prefix("case ")?.splitn(3, ' ');
            let name = fields.next()?;
            let code = fields.next()?.parse().ok()?;
            Some((name, (code, fields.next().unwrap_or(""))))
        })
        .collect()
}

live_test!(every_bad_argument_returns_its_code_with_a_message, || {
    let output = run_fixture(&capi_fixture("capi-errors"), &[]);
    let text = String::from_utf8_lossy(&output.stdout);
    let cases = error_cases(&text);
    let (einval, enoevnt, estate, ok) = (-1, -7, -10, 0);
    let expected = [
        ("bufsiz-0", einval, "bufsiz 0 holds no 16-bit bucket"),
        ("bufsiz-1", einval, "give at least 2 bytes"),
        ("scale-0", einval, "scale 0 is not valid"),
        ("scale-1", einval, "scale 1 is not valid: use 131072"),
        ("scale-65537", einval, "scale 65537 is not valid"),
        ("unknown-event", enoevnt, "did you mean 'cpu-clock'"),
        ("bad-modifier", einval, "modifier 'z' is not supported"),
        ("null-event", einval, "event is NULL"),
        ("threshold-0", einval, "threshold 0: give the sample period"),
        ("threshold-negative", einval, "threshold -5"),
        ("two-widths", einval, "PROF_BUCKET_16 and PROF_BUCKET_64"),
        ("unknown-flag", einval, "0x80 is no flag"),
        ("null-buffer", einval, "buf is NULL"),
        ("null-out", einval, "out is NULL"),
        ("sprofil-count-0", einval, "count 0"),
        ("sprofil-null-regions", einval, "regions is NULL"),
        (
            "sprofil-two-bins",
            einval,
            "regions[1]: a second overflow bin",
        ),
        ("sprofil-null-buffer", einval, "regions[1]: buf is NULL"),
        ("null-session-start", einval, "the session is NULL"),
        ("null-session-stop", einval, "the session is NULL"),
        ("null-session-read", einval, "the session is NULL"),
        ("stop-without-start", estate, "not running; call prof_start"),
        ("read-before-start", ok, "no error"),
        ("null-stats", einval, "out is NULL"),
        ("start", ok, "no error"),
        ("start-twice", estate, "running already; call prof_stop"),
        ("read", ok, "no error"),
        ("stop", ok, "no error"),
        ("stop-twice", estate, "not running"),
        (
            "strerror-unknown-code",
            12345,
            "not a libprofiler error code",
        ),
    ];
    for (name, code, message) in expected {
        let Some(&(got, said)) = cases.get(name) else {
            panic!("case {name} missing from:\n{text}");
        };
        assert_eq!(got, code, "{name}: {said}");
        assert!(said.contains(message), "{name}: '{said}' lacks '{message}'");
    }
    assert!(!cases.contains_key("out-not-cleared"), "{text}");
    // No PMU here: refused, or with PROF_FORCE_SW replaced by cpu-clock.
    let (hardware, said) = cases["hardware-event"];
    if hardware != ok {
        assert_eq!(hardware, -18, "{said}");
        assert!(said.contains("PROF_FORCE_SW"), "{said}");
        let (forced, notice) = cases["hardware-event-force-sw"];
        assert_eq!(forced, ok, "{notice}");
        assert!(notice.contains("sampling cpu-clock every"), "{notice}");
    }
    let carried_on = text
        .lines()
        .find_map(|line| line.strip_prefix("carried on "))
        .and_then(|samples| samples.parse::<u64>().ok());
    assert!(carried_on.is_some_and(|samples| samples > 0), "{text}");
});

// The kernel's refusal reaches the caller as PROF_EPERM, and its message
// names the program to grant CAP_PERFMON to: the one linking the library.
live_test!(a_refusal_by_the_kernel_names_the_calling_program, || {
    if !profiler_testing::root("running a program as another user with setpriv")
        || !profiler_testing::tool("setpriv")
    {
        return;
    }
    let program = capi_fixture("capi-errors");
    let output = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&program)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    let (code, said) = error_cases(&text)["kernel-event"];
    match perf_event_paranoid() {
        Some(level) if level >= 2 => {
            assert_eq!(code, -15, "{said}");
            let grant = format!("setcap cap_perfmon+ep {}", program.display());
            assert!(said.contains("paranoid") && said.contains(&grant), "{said}");
        }
        _ => assert_eq!(code, 0, "{said}"),
    }
});

live_test!(the_header_serves_cpp, || {
    let output = run_fixture(&capi_fixture("capi-cxx"), &[]);
    let text = String::from_utf8_lossy(&output.stdout);
    // task-clock:u: PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, user only.
    assert!(text.contains("encoding 1 1 0 1\n"), "{text}");
    let counts: Vec<u64> = text
        .lines()
        .find_map(|line| line.strip_prefix("samples "))
        .map(|line| {
            line.split_whitespace()
                .filter_map(|field| field.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    let [samples, counted, outside] = counts[..] else {
        panic!("{text}");
    };
    assert!(samples >= 1000, "{text}");
    assert_eq!(counted + outside, samples, "{text}");
    // A set of counters with a lambda for its overflow handler.
    let counters: Vec<f64> = text
        .lines()
        .find_map(|line| line.strip_prefix("counters "))
        .map(|line| {
            line.split_whitespace()
                .filter_map(|field| field.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    let [nanoseconds, calls] = counters[..] else {
        panic!("{text}");
    };
    assert!(nanoseconds >= 20e6, "{text}");
    assert!(
        (calls - nanoseconds / 1e6).abs() <= 0.25 * nanoseconds / 1e6,
        "{text}"
    );
});

#[test]
fn prof_event_encode_agrees_with_list_for_every_event() {
    let dir = scratch("capi-encode");
    let listed = run_json(&dir, &["list", "--json"]);
    let events: Vec<&Value> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter(|event| !event["encoding"].is_null())
        .collect();
    assert!(events.len() >= 19, "{} events listed", events.len());
    let names: String = events
        .iter()
        .map(|event| format!("{}\n", event["name"].as_str().unwrap()))
        .collect();
    let mut child = Command::new(capi_fixture("capi-encode"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(names.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), events.len(), "{text}");
    for (event, line) in events.iter().zip(lines) {
        let encoding = &event["encoding"];
        let expected = format!(
            "{} 0 {} {} {} {} 0 1 1 0",
            event["name"].as_str().unwrap(),
            encoding["type"],
            encoding["config"],
            encoding["config1"],
            encoding["config2"]
        );
        assert_eq!(line, expected);
    }
}

live_test!(the_example_prints_papis_table_with_function_names, || {
    let output = run_fixture(&capi_fixture("capi-example"), &[]);
    let text = String::from_utf8_lossy(&output.stdout);
    for part in [
        "PAPI_profil() hash table, Bucket size: 16 bits.",
        "Scale: 65536 (0x10000).",
        "address\t\t\tflat\tfunction",
        "0 saturated",
    ] {
        assert!(text.contains(part), "'{part}' missing from:\n{text}");
    }
    let rows: Vec<(u64, &str)> = text
        .lines()
        .filter(|line| line.starts_with("0x"))
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            Some((fields.get(1)?.parse().ok()?, *fields.get(2)?))
        })
        .collect();
    let in_function = |name: &str| -> u64 {
        rows.iter()
            .filter(|(_, function)| function.starts_with(&format!("{name}+0x")))
            .map(|&(count, _)| count)
            .sum()
    };
    let (flops, sums) = (in_function("do_flops"), in_function("do_sums"));
    let total: u64 = rows.iter().map(|&(count, _)| count).sum();
    assert!(total >= 2000, "{text}");
    assert!((flops + sums) * 10 >= total * 9, "{text}");
    assert!(flops > sums, "{text}");
});

live_test!(the_module_serves_fortran, || {
    if !profiler_testing::tool("gfortran") {
        return;
    }
    let output = run_fixture(&capi_fixture("capi-fortran"), &[]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("encoding 1 1 0 1\n"), "{text}");
    assert!(
        text.contains("case scale-1 -1 scale 1 is not valid: use 131072"),
        "{text}"
    );
    let number = |prefix: &str, field: usize| -> u64 {
        text.lines()
            .find_map(|line| line.strip_prefix(prefix))
            .and_then(|rest| rest.split_whitespace().nth(field)?.parse().ok())
            .unwrap_or_else(|| panic!("no '{prefix}' in:\n{text}"))
    };
    let (samples, outside, counted) = (
        number("stats ", 0),
        number("stats ", 1),
        number("counted ", 0),
    );
    assert!(samples >= 1000, "{text}");
    assert_eq!(counted + outside, samples, "{text}");
    // The region holds burn and little else.
    assert!(counted * 10 >= samples * 9, "{text}");
});
