//! Text views fitted to a width (80 and 200 columns, and whole with
//! `--wide`): long C++ and Rust names lose their template arguments first,
//! then their middle, keeping their base name; rows never pass the width.
//! No kernel needed: the recordings are made by hand, their JIT code named
//! by a jitdump file beside them.

use std::path::Path;

use crate::golden::{assert_expected, normalize};
use crate::synthetic::*;
use crate::util::*;

const PID: u32 = 4242;
/// Where the JIT code lies in the process.
const JIT: u64 = 0x7f00_0000_0000;

const HASHTABLE_FIND: &str = "std::_Hashtable<std::__cxx11::basic_string<char, \
    std::char_traits<char>, std::allocator<char> >, std::pair<std::__cxx11::basic_string<char, \
    std::char_traits<char>, std::allocator<char> > const, std::vector<int, std::allocator<int> \
    > >, std::allocator<std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, \
    std::allocator<char> > const, std::vector<int, std::allocator<int> > > >, \
    std::__detail::_Select1st, std::equal_to<std::__cxx11::basic_string<char, \
    std::char_traits<char>, std::allocator<char> > >, std::hash<std::__cxx11::basic_string<char, \
    std::char_traits<char>, std::allocator<char> > >, std::__detail::_Mod_range_hashing, \
    std::__detail::_Default_ranged_hash, std::__detail::_Prime_rehash_policy, \
    std::__detail::_Hashtable_traits<true, false, true> >::find";
const INTROSORT: &str = "std::__introsort_loop<__gnu_cxx::__normal_iterator<Record*, \
    std::vector<Record, std::allocator<Record> > >, long, \
    __gnu_cxx::__ops::_Iter_comp_iter<main::{lambda(Record const&, Record const&)#1}> >";
const LONG_C: &str = "compute_the_weighted_moving_average_of_every_sensor_reading_in_the_buffer";
const RUST: &str = "<alloc::vec::Vec<T,A> as core::iter::traits::collect::Extend<&T>>::extend";

/// The JIT's functions: (offset from [`JIT`], name).
const FUNCTIONS: [(u64, &str); 5] = [
    (0x000, HASHTABLE_FIND),
    (0x100, INTROSORT),
    (0x200, LONG_C),
    (0x300, RUST),
    (0x400, "run_queries"),
];

/// A recording of process [`PID`] whose JIT code is named by a jitdump in
/// `dir`: run_queries calling each of the others, `scale` multiplying the
/// hash table's samples.
fn write_jit_recording(dir: &Path, name: &str, scale: u32) {
    let mut recording = Synthetic::with_stacks();
    recording.process(PID, 0, "query", &fixture("stable"));
    recording.jit(PID, dir, JIT, &FUNCTIONS);
    let caller = JIT + 0x480;
    for (offset, count) in [
        (0x000, 400 * scale),
        (0x100, 250),
        (0x200, 150),
        (0x300, 100),
    ] {
        let at = At {
            pid: PID,
            user: vec![JIT + offset + 0x10, caller],
            ..At::default()
        };
        recording.take(&at, count);
    }
    let own = At {
        pid: PID,
        user: vec![caller],
        ..At::default()
    };
    recording.take(&own, 50);
    recording.write(&dir.join(name), &["query"]);
}

/// What `args` print in `dir`, compared with `tests/expected/widths/NAME`;
/// with a width, no row of the table is wider.
fn check(dir: &Path, name: &str, args: &[&str], width: Option<usize>) {
    let output = run_ok(dir, args);
    let text = normalize(&String::from_utf8(output.stdout).unwrap(), dir);
    if let Some(width) = width {
        for line in text.lines().filter(|line| !line.starts_with('#')) {
            assert!(line.chars().count() <= width, "{args:?}: {line}");
        }
    }
    assert_expected(&format!("widths/{name}"), text.as_bytes());
}

#[test]
fn text_views_fit_80_and_200_columns_or_keep_names_whole() {
    let dir = scratch("widths");
    write_jit_recording(&dir, "base.data", 1);
    write_jit_recording(&dir, "new.data", 3);
    for width in [80, 200] {
        let columns = width.to_string();
        let fit = |args: &[&'static str]| -> Vec<String> {
            (args.iter().map(|a| a.to_string()))
                .chain(["--width".to_owned(), columns.clone()])
                .collect()
        };
        let views: [(&str, Vec<String>); 4] = [
            ("report", fit(&["report", "-i", "new.data"])),
            (
                "caller",
                fit(&["report", "-i", "new.data", "--call-graph", "caller"]),
            ),
            ("hist", fit(&["hist", "-i", "new.data"])),
            ("diff", fit(&["diff", "base.data", "new.data"])),
        ];
        for (view, args) in views {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            check(&dir, &format!("{view}-{width}.txt"), &args, Some(width));
        }
    }
    check(
        &dir,
        "report-wide.txt",
        &["report", "-i", "new.data", "-w"],
        None,
    );
}
