//! Reads PROFILER_TESTS, where a machine declares what it cannot do, into
//! the cfg that chooses which `live_test!` the tests get.

fn main() {
    println!("cargo::rerun-if-env-changed=PROFILER_TESTS");
    println!("cargo::rustc-check-cfg=cfg(no_sampling)");
    let declared = std::env::var("PROFILER_TESTS").unwrap_or_default();
    for word in declared.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        match word {
            "no-sampling" => println!("cargo::rustc-cfg=no_sampling"),
            other => panic!(
                "PROFILER_TESTS={declared}: unknown '{other}'; the one declaration is no-sampling"
            ),
        }
    }
}
