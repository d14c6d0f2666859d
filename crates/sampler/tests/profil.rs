//! `Profil`: the process profiles itself, live. Counts are statistical, so
//! the assertions are lower bounds and proportions, never exact counts.
//!
//! The live tests are declared with `live_test!`: where the kernel refuses
//! to sample they skip outside CI, saying why, and fail under CI=true.

// A test fails by panicking: its helpers unwrap as its #[test]s do.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// The thread's CPU clock comes from libc.
#![allow(unsafe_code)]

use std::hint::black_box;
use std::sync::{Mutex, MutexGuard, PoisonError, mpsc};
use std::thread;
use std::time::Duration;

use profiler_histogram::{BucketWidth, Buckets, Histogram, HistogramConfig, Region, Scale};
use profiler_model::Avma;
use profiler_sampler::{Profil, ProfilConfig, ProfilEvent, ProfilOutcome, ProfilRegion};
use profiler_testing::live_test;

/// One sample per 100 µs of CPU time: 10,000 per busy second.
const THRESHOLD_NS: u64 = 100_000;
/// How far past its first byte a sample still counts as in the hot loop.
const HOT_BYTES: u64 = 4096;

/// A profile counts every thread of the process, so live tests must not
/// overlap (the harness runs tests in parallel threads).
fn live() -> MutexGuard<'static, ()> {
    static LIVE: Mutex<()> = Mutex::new(());
    LIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A dependent chain of shifts and xors for `duration` of the thread's CPU
/// time (a busy machine stretches the wall time, not the samples). No
/// calls in the inner loop even unoptimized, so that its samples land in
/// this function.
#[inline(never)]
fn burn(duration: Duration) -> u64 {
    let end = thread_cpu_ns() + duration.as_nanos() as u64;
    let mut x = black_box(0x9e37_79b9_7f4a_7c15_u64);
    while thread_cpu_ns() < end {
        let mut i = 0;
        while i < 100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            i += 1;
        }
        x = black_box(x);
    }
    x
}

fn thread_cpu_ns() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out-pointer for the call.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64
}

fn burn_address() -> u64 {
    burn as fn(Duration) -> u64 as usize as u64
}

fn config() -> ProfilConfig {
    ProfilConfig {
        width: BucketWidth::Bits32,
        ..ProfilConfig::new("cpu-clock", THRESHOLD_NS)
    }
}

/// Starts a profile: the live tests run where the kernel samples.
fn start(config: ProfilConfig) -> Profil {
    Profil::start(config).unwrap()
}

/// In-region counts within `[from, from + HOT_BYTES)`, all in-region counts,
/// and the first address of the fullest bucket.
fn hot_share(outcome: &ProfilOutcome, from: u64) -> (u64, u64, u64) {
    let (region, buckets) = outcome.histogram.regions().next().expect("one region");
    let hot = from..from + HOT_BYTES;
    let (mut inside, mut total, mut fullest) = (0, 0, (0, 0));
    for (index, count) in buckets.counts().enumerate() {
        let address = region.first_address(index);
        total += count;
        if hot.contains(&address) {
            inside += count;
        }
        if count > fullest.0 {
            fullest = (count, address);
        }
    }
    (inside, total, fullest.1)
}

/// The library's drain threads: one per process, however many profiles.
fn profil_threads() -> usize {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("comm")).ok())
        .filter(|comm| comm.trim() == "profil-drain")
        .count()
}

/// The perf event descriptors this process holds open.
fn perf_fds() -> usize {
    let Ok(fds) = std::fs::read_dir("/proc/self/fd") else {
        return 0;
    };
    fds.flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .filter(|target| target.to_string_lossy() == "anon_inode:[perf_event]")
        .count()
}

live_test!(
    the_hot_loop_holds_the_fullest_bucket_and_most_counts,
    || {
        let _live = live();
        let profil = start(config());
        black_box(burn(Duration::from_millis(400)));
        let outcome = profil.stop().unwrap();
        // 0.4 s at one sample per 100 µs is 4000; a busy VM loses some.
        assert!(outcome.samples >= 1000, "{} samples", outcome.samples);
        let from = burn_address();
        let (inside, total, fullest) = hot_share(&outcome, from);
        assert!(
            (from..from + HOT_BYTES).contains(&fullest),
            "fullest bucket at {fullest:#x}, burn at {from:#x}"
        );
        assert!(
            inside * 10 >= total * 8,
            "{inside} of {total} in-region counts in burn; {:?}",
            outcome.histogram.stats()
        );
        assert_eq!(outcome.lost, 0);
    }
);

live_test!(a_thread_started_before_the_profile_is_counted, || {
    let _live = live();
    let (go, ready) = mpsc::channel::<()>();
    // A closed channel (the start panicked) lets the worker end too.
    let worker = thread::spawn(move || {
        if ready.recv().is_ok() {
            black_box(burn(Duration::from_millis(300)));
        }
    });
    let profil = start(config());
    let _ = go.send(());
    // The main thread sleeps here: the samples are the worker's.
    worker.join().unwrap();
    let outcome = profil.stop().unwrap();
    assert!(outcome.samples >= 750, "{} samples", outcome.samples);
    let (inside, total, _) = hot_share(&outcome, burn_address());
    assert!(inside * 10 >= total * 8, "{inside} of {total} in burn");
});

live_test!(a_thread_started_during_the_profile_is_counted, || {
    let _live = live();
    let profil = start(config());
    let worker = thread::spawn(|| black_box(burn(Duration::from_millis(300))));
    let _ = worker.join();
    let outcome = profil.stop().unwrap();
    assert!(outcome.samples >= 750, "{} samples", outcome.samples);
});

live_test!(a_range_holds_only_its_own_addresses, || {
    let _live = live();
    let from = burn_address();
    let profil = start(ProfilConfig {
        region: ProfilRegion::Range {
            start: Avma(from),
            end: Avma(from + HOT_BYTES),
        },
        scale: Scale::BYTE,
        ..config()
    });
    black_box(burn(Duration::from_millis(200)));
    let outcome = profil.stop().unwrap();
    let (region, buckets) = outcome.histogram.regions().next().expect("one region");
    assert_eq!((region.offset, buckets.len() as u64), (from, HOT_BYTES));
    let stats = outcome.histogram.stats();
    assert_eq!(stats.in_region + stats.outside, outcome.samples);
    assert!(stats.in_region >= 500, "{stats:?}");
});

live_test!(a_profile_read_while_running_goes_on_counting, || {
    let _live = live();
    let mut profil = start(config());
    black_box(burn(Duration::from_millis(200)));
    let first = profil.read().unwrap();
    assert!(first.samples >= 500, "{} samples", first.samples);
    let (inside, total, _) = hot_share(&first, burn_address());
    assert!(inside * 10 >= total * 8, "{inside} of {total} in burn");
    black_box(burn(Duration::from_millis(200)));
    let last = profil.stop().unwrap();
    assert!(
        last.samples >= first.samples + 500,
        "{} then {}",
        first.samples,
        last.samples
    );
    let in_region = |outcome: &ProfilOutcome| outcome.histogram.stats().in_region;
    assert!(in_region(&last) > in_region(&first));
    assert_eq!(perf_fds(), 0);
});

live_test!(counts_already_in_the_buckets_are_added_to, || {
    let _live = live();
    let from = burn_address();
    let region = Region::new(from, HOT_BYTES, Scale::SINGLE).unwrap();
    let mut histogram = Histogram::new(HistogramConfig {
        width: BucketWidth::Bits64,
        ..HistogramConfig::default()
    });
    let start_count = 1_u64 << 40;
    let counts = Buckets::from_ne_bytes(BucketWidth::Bits64, &start_count.to_ne_bytes()).unwrap();
    histogram.add_region_with(region, counts).unwrap();
    let event = ProfilEvent::new("cpu-clock", THRESHOLD_NS, false).unwrap();
    let profil = Profil::start_into(&event, histogram).unwrap();
    assert_eq!(profil.event(), &event);
    black_box(burn(Duration::from_millis(200)));
    let outcome = profil.stop().unwrap();
    let (_, buckets) = outcome.histogram.regions().next().unwrap();
    let added = buckets.get(0) - start_count;
    assert_eq!(added, outcome.histogram.stats().in_region);
    assert!(added >= 500, "{added} samples in burn");
});

live_test!(the_software_fallback_samples_cpu_clock_and_says_why, || {
    let _live = live();
    let event = ProfilEvent::new("cycles", 1_000_000, true).unwrap();
    match event.notice() {
        // No PMU here: cpu-clock, at record's default rate or the kernel's
        // lower limit.
        Some(notice) => {
            assert_eq!(event.name(), "cpu-clock");
            assert!(event.threshold() >= 250_000, "{}", event.threshold());
            assert!(
                notice.starts_with("'cycles' cannot be sampled: "),
                "{notice}"
            );
            let instead = format!("sampling cpu-clock every {} ns instead", event.threshold());
            assert!(notice.ends_with(&instead), "{notice}");
        }
        None => assert_eq!(
            (event.name().as_str(), event.threshold()),
            ("cycles", 1_000_000)
        ),
    }
    // A software event is never replaced.
    let event = ProfilEvent::new("task-clock", 1_000_000, true).unwrap();
    assert_eq!(
        (event.name().as_str(), event.notice()),
        ("task-clock", None)
    );
});

live_test!(dropping_a_profile_closes_its_counters, || {
    let _live = live();
    let profil = start(config());
    assert!(perf_fds() > 0);
    drop(profil);
    assert_eq!(perf_fds(), 0);
    assert!(profil_threads() <= 1);
});

// Each profile costs its counters, one per CPU for a process of one
// thread, and no thread of its own: one drain thread serves them all, and
// no profile counts it.
live_test!(profiles_share_one_drain_thread_and_count_none, || {
    let _live = live();
    let cpus = thread::available_parallelism().unwrap().get();
    let before = std::fs::read_dir("/proc/self/task").unwrap().count();
    let profiles: Vec<Profil> = (0..20).map(|_| start(config())).collect();
    assert_eq!(profil_threads(), 1);
    let threads = std::fs::read_dir("/proc/self/task").unwrap().count();
    assert!(threads <= before + 1, "{before} threads, then {threads}");
    // The threads of the test harness are counted too: a few per CPU.
    assert!(
        perf_fds() <= 20 * cpus * threads,
        "{} perf fds for 20 profiles of {threads} threads on {cpus} CPUs",
        perf_fds()
    );
    black_box(burn(Duration::from_millis(100)));
    for profil in profiles {
        let outcome = profil.stop().unwrap();
        assert!(outcome.samples >= 100, "{} samples", outcome.samples);
    }
    assert_eq!(perf_fds(), 0);
});

#[test]
fn a_refused_event_leaves_no_counter_behind() {
    let _live = live();
    // Refused on a machine without a PMU; sampled where there is one.
    match Profil::start(ProfilConfig::new("cycles", 1_000_000)) {
        Ok(profil) => drop(profil.stop().unwrap()),
        Err(error) => assert!(error.to_string().contains("'cycles'"), "{error}"),
    }
    assert_eq!(perf_fds(), 0);
}

#[test]
fn bad_input_is_refused_with_the_reason() {
    let _live = live();
    let error = Profil::start(ProfilConfig::new("cpu-clock", 0))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("threshold") && error.contains("at least 1"),
        "{error}"
    );
    let error = Profil::start(ProfilConfig::new("cpu-clok", THRESHOLD_NS))
        .unwrap_err()
        .to_string();
    assert!(error.contains("unknown event 'cpu-clok'"), "{error}");
    assert!(error.contains("did you mean 'cpu-clock'"), "{error}");
    let error = Profil::start(ProfilConfig {
        region: ProfilRegion::Range {
            start: Avma(0x2000),
            end: Avma(0x1000),
        },
        ..config()
    })
    .unwrap_err()
    .to_string();
    assert!(error.contains("0x2000 is empty"), "{error}");
}
