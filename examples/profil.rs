//! `PAPI_profil` from inside a Rust program: this example profiles its own
//! hot loop and prints the histogram the way PAPI's test programs do, with
//! the function each bucket lies in.
//!
//! ```text
//! cargo run --release --example profil
//! ```

use std::fs;
use std::hint::black_box;
use std::time::{Duration, Instant};

use anyhow::Context;
use profiler_histogram::{BucketWidth, Scale};
use profiler_model::{Detail, FileOffset, Module, Symbolizer};
use profiler_sampler::{Profil, ProfilConfig};
use profiler_symbols::ElfSymbolizer;

/// One sample per 100 µs of CPU time.
const THRESHOLD_NS: u64 = 100_000;

/// A chain of multiply-adds, each needing the last, for `duration`.
#[inline(never)]
fn hot_loop(duration: Duration) -> u64 {
    let start = Instant::now();
    let mut x = 1_u64;
    while start.elapsed() < duration {
        for _ in 0..100_000 {
            x = black_box(x)
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
        }
    }
    x
}

fn main() -> anyhow::Result<()> {
    let config = ProfilConfig {
        width: BucketWidth::Bits32,
        scale: Scale::FULL,
        ..ProfilConfig::new("cpu-clock", THRESHOLD_NS)
    };
    let profil = Profil::start(config)?;
    black_box(hot_loop(Duration::from_millis(500)));
    let outcome = profil.stop()?;

    let (region, buckets) = outcome.histogram.regions().next().context("no region")?;
    let stats = outcome.histogram.stats();
    println!("Bucket size: {} bits", buckets.width().bits());
    println!("Number of buckets: {}", buckets.len());
    println!(
        "Length of buffer: {} bytes",
        buckets.len() * buckets.width().bytes()
    );
    println!("Scale: {0} ({0:#x})", region.scale.value());
    println!("Threshold: {THRESHOLD_NS} (cpu-clock, ns)");
    println!(
        "Samples: {} ({} in the text, {} outside it, {} lost)",
        outcome.samples, stats.in_region, stats.outside, outcome.lost
    );
    println!(
        "hot_loop is at {:#x}",
        hot_loop as fn(Duration) -> u64 as usize
    );
    println!();
    println!("{:<18} {:>8}  function", "address", "count");
    let rows: Vec<(u64, u64)> = (0..buckets.len())
        .filter(|&index| buckets.get(index) > 0)
        .map(|index| (region.first_address(index), buckets.get(index)))
        .collect();
    let addresses: Vec<u64> = rows.iter().map(|&(address, _)| address).collect();
    for ((address, count), name) in rows.iter().zip(function_names(&addresses)) {
        println!("{address:#018x} {count:>8}  {name}");
    }
    Ok(())
}

/// `function+0xOFFSET` for each address (ascending) of this program's text,
/// `?` where none is known.
fn function_names(addresses: &[u64]) -> Vec<String> {
    let unknown = vec!["?".to_owned(); addresses.len()];
    let (Ok(exe), Ok(maps)) = (
        fs::read_link("/proc/self/exe"),
        fs::read_to_string("/proc/self/maps"),
    ) else {
        return unknown;
    };
    let exe = exe.to_string_lossy().into_owned();
    // A mapping of the file at `start` from `file_offset`: offset = address - start + file_offset.
    let mappings: Vec<(u64, u64, u64)> = maps
        .lines()
        .filter(|line| line.ends_with(exe.as_str()))
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let (start, end) = fields.next()?.split_once('-')?;
            let offset = fields.nth(1)?;
            let hex = |text| u64::from_str_radix(text, 16).ok();
            Some((hex(start)?, hex(end)?, hex(offset)?))
        })
        .collect();
    let Some(offsets) = addresses
        .iter()
        .map(|&address| {
            let &(start, _, file_offset) = mappings
                .iter()
                .find(|&&(start, end, _)| (start..end).contains(&address))?;
            Some(FileOffset(address - start + file_offset))
        })
        .collect::<Option<Vec<_>>>()
    else {
        return unknown;
    };
    let module = Module {
        path: exe,
        build_id: None,
        pid: None,
    };
    let symbols = ElfSymbolizer::default().symbolize(&module, &offsets, Detail::Functions);
    symbols
        .addresses
        .iter()
        .map(|symbol| match (&symbol.function, symbol.relative) {
            (Some(function), Some(relative)) => format!(
                "{}+{:#x}",
                function.name.as_deref().unwrap_or("?"),
                relative.0 - function.start.0
            ),
            _ => "?".to_owned(),
        })
        .collect()
}
