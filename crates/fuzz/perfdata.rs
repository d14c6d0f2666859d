//! The perf.data target: perf's recordings read as the profiler's, then
//! every view of them. Seeds are the perf.data files of a corpus (the
//! tests' `perf record` runs leave them in target/test-scratch).

use crate::target::{Scratch, Target};
use crate::views;

pub(crate) const TARGET: Target = Target {
    name: "perfdata",
    accepts: profiler_perfdata::has_signature,
    seeds: Vec::new,
    dictionary: &[
        b"PERFILE2",
        b"GNU\0",
        &[0; 8],
        &[0xff; 8],
        // Record types: MMAP, COMM, EXIT, FORK, SAMPLE, MMAP2, and the
        // user types perf writes (FINISHED_ROUND, HEADER_ATTR, ID_INDEX,
        // COMPRESSED).
        &[1, 0, 0, 0],
        &[3, 0, 0, 0],
        &[4, 0, 0, 0],
        &[7, 0, 0, 0],
        &[9, 0, 0, 0],
        &[10, 0, 0, 0],
        &[68, 0],
        &[69, 0],
        &[70, 0],
        &[81, 0],
    ],
    mend: None,
    restructure: None,
    run,
};

fn run(input: &[u8], scratch: &Scratch) {
    let path = scratch.write("perf.data", input);
    if !profiler_perfdata::is_perf_data(&path) {
        return;
    }
    if let Ok(perf_data) = profiler_perfdata::open(&path) {
        views::exercise(&perf_data.recording);
    }
}
