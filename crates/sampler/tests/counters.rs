//! `Counters`: counting in process on this VM's software events
//! (task-clock, page-faults, context-switches), checked against what the
//! tests did (pages touched, CPU time spent) within a tolerance; overflow
//! handlers checked for their call counts, addresses, threads and bits.
//!
//! The live tests are declared with `live_test!`: where the kernel refuses
//! to count they skip outside CI, saying why, and fail under CI=true.

// A test fails by panicking: its helpers unwrap as its #[test]s do.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// Pages, the thread's CPU clock and its id come from libc.
#![allow(unsafe_code)]

use std::hint::black_box;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, mpsc};
use std::thread;
use std::time::Duration;

use object::{Object, ObjectSymbol};
use profiler_sampler::{Counters, OverflowMode, SamplerError, Scope};
use profiler_testing::live_test;

const PAGES: usize = 2_000;

/// Tests that count every thread of the process (or touch pages that such
/// a test would count) take turns.
fn process_wide() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Writes one byte to each of `pages` fresh pages: one page fault each.
#[inline(never)]
fn counters_touch_pages(pages: usize) {
    let page = 4096;
    // SAFETY: a private anonymous mapping, written within its bounds and
    // unmapped once.
    unsafe {
        let memory = libc::mmap(
            std::ptr::null_mut(),
            pages * page,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        assert_ne!(memory, libc::MAP_FAILED);
        libc::madvise(memory, pages * page, libc::MADV_NOHUGEPAGE);
        let bytes = memory.cast::<u8>();
        for i in 0..pages {
            bytes.add(i * page).write_volatile(1);
        }
        libc::munmap(memory, pages * page);
    }
}

/// Spins for `duration` of the thread's CPU time: shifts and xors, no
/// calls in the inner loop, so that its time is spent in this function.
#[inline(never)]
fn counters_spin(duration: Duration) -> u64 {
    let end = thread_cpu_ns() + duration.as_nanos() as u64;
    let mut x = black_box(0x9e37_79b9_7f4a_7c15_u64);
    while thread_cpu_ns() < end {
        // A while loop: a `for` over a range calls `next` unoptimized.
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

/// The addresses of the function at `start` in this test binary, from its
/// symbol table's size.
fn extent(start: usize, name: &str) -> Range<usize> {
    let exe = std::fs::read("/proc/self/exe").unwrap();
    let file = object::File::parse(&*exe).unwrap();
    let size = file
        .symbols()
        .find(|symbol| symbol.name().is_ok_and(|n| n.contains(name)) && symbol.size() > 0)
        .map(|symbol| symbol.size() as usize)
        .unwrap_or_else(|| panic!("no symbol {name}"));
    start..start + size
}

fn spin_extent() -> Range<usize> {
    extent(
        counters_spin as fn(Duration) -> u64 as usize,
        "counters_spin",
    )
}

fn touch_extent() -> Range<usize> {
    extent(
        counters_touch_pages as fn(usize) as usize,
        "counters_touch_pages",
    )
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

fn gettid() -> i32 {
    // SAFETY: no arguments, no failure.
    unsafe { libc::gettid() }
}

fn within(value: f64, expected: f64, tolerance: f64) -> bool {
    (value - expected).abs() <= expected * tolerance
}

live_test!(thread_scope_counts_this_threads_page_faults, || {
    let _turn = process_wide();
    let counters = Counters::new(&["page-faults", "task-clock"], Scope::Thread).unwrap();
    // Another thread faults in pages all the while: none of it counts.
    let stop = Arc::new(AtomicBool::new(false));
    let other = {
        let stop = Arc::clone(&stop);
        thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                counters_touch_pages(500);
            }
        })
    };
    counters.start().unwrap();
    counters_touch_pages(PAGES);
    counters.stop().unwrap();
    stop.store(true, Ordering::Relaxed);
    other.join().unwrap();
    let faults = counters.read().unwrap()[0] as f64;
    assert!(
        within(faults, PAGES as f64, 0.10),
        "{faults} faults for {PAGES} pages"
    );
});

live_test!(task_clock_agrees_with_the_threads_cpu_clock, || {
    let counters = Counters::new(&["task-clock"], Scope::Thread).unwrap();
    let before = thread_cpu_ns();
    counters.start().unwrap();
    counters_spin(Duration::from_millis(200));
    counters.stop().unwrap();
    let spent = (thread_cpu_ns() - before) as f64;
    let counted = counters.read().unwrap()[0] as f64;
    assert!(
        within(counted, spent, 0.05),
        "task-clock {counted} ns, CLOCK_THREAD_CPUTIME_ID {spent} ns"
    );
    let count = counters.read_counts().unwrap()[0];
    assert_eq!(count.raw, count.scaled, "{count:?}");
    assert!(count.enabled_ns > 0 && count.running_ns == count.enabled_ns);
});

live_test!(reset_accumulate_and_restart_as_papi_does, || {
    let _turn = process_wide();
    let counters = Counters::new(&["page-faults"], Scope::Thread).unwrap();
    counters.start().unwrap();
    counters_touch_pages(PAGES);
    // read_and_reset_into gives what was counted and starts again from 0.
    let mut taken = [0_u64];
    counters.read_and_reset_into(&mut taken).unwrap();
    assert!(within(taken[0] as f64, PAGES as f64, 0.10), "{taken:?}");
    let after_reset = counters.read().unwrap()[0];
    assert!(after_reset < 20, "{after_reset} right after the reset");
    counters_touch_pages(PAGES);
    counters.stop().unwrap();
    let stopped = counters.read().unwrap()[0];
    counters_touch_pages(PAGES);
    assert_eq!(
        counters.read().unwrap()[0],
        stopped,
        "counted while stopped"
    );
    // Started again: it goes on from where it stopped.
    counters.start().unwrap();
    counters_touch_pages(PAGES);
    counters.stop().unwrap();
    let both = counters.read().unwrap()[0] as f64;
    assert!(
        within(both, 2.0 * PAGES as f64, 0.10),
        "{both} after two runs"
    );
    counters.reset().unwrap();
    assert_eq!(counters.read().unwrap()[0], 0);
});

live_test!(state_errors_say_what_to_do, || {
    let counters = Counters::new(&["task-clock"], Scope::Thread).unwrap();
    let error = counters.stop().unwrap_err().to_string();
    assert!(error.contains("not running"), "{error}");
    counters.start().unwrap();
    let error = counters.start().unwrap_err().to_string();
    assert!(error.contains("running already"), "{error}");
    let error = counters
        .on_overflow(0, 1000, |_| {})
        .unwrap_err()
        .to_string();
    assert!(error.contains("stop it first"), "{error}");
    counters.stop().unwrap();
    let error = counters
        .on_overflow(1, 1000, |_| {})
        .unwrap_err()
        .to_string();
    assert!(error.contains("index 1 is no event"), "{error}");
    let mut short = [];
    let error = counters.read_into(&mut short).unwrap_err();
    assert!(
        matches!(error, SamplerError::CountersMisuse { .. }),
        "{error}"
    );
});

#[test]
fn bad_sets_are_refused_before_anything_is_opened() {
    let error = Counters::new(&[], Scope::Thread).unwrap_err().to_string();
    assert!(error.contains("give 1 to 32 events"), "{error}");
    let error = Counters::new(&["page-fault"], Scope::Thread)
        .unwrap_err()
        .to_string();
    assert!(error.contains("did you mean 'page-faults'"), "{error}");
    let error = Counters::new(&["task-clock"], Scope::Cpu(100_000))
        .unwrap_err()
        .to_string();
    assert!(error.contains("CPU 100000 is not online"), "{error}");
}

live_test!(inherit_adds_a_joined_threads_faults, || {
    let _turn = process_wide();
    let counters = Counters::new(&["page-faults"], Scope::Inherit).unwrap();
    counters.start().unwrap();
    thread::spawn(|| counters_touch_pages(PAGES))
        .join()
        .unwrap();
    counters.stop().unwrap();
    let faults = counters.read().unwrap()[0] as f64;
    // The thread's own start-up faults a few pages (its stack) too.
    assert!(
        within(faults, PAGES as f64, 0.10),
        "{faults} faults for {PAGES} pages in a created thread"
    );
});

live_test!(process_scope_counts_a_running_thread_live, || {
    let _turn = process_wide();
    let (ready_sender, ready) = mpsc::channel();
    let (go_sender, go) = mpsc::channel::<()>();
    let (done_sender, done) = mpsc::channel();
    let (finish_sender, finish) = mpsc::channel::<()>();
    let worker = thread::spawn(move || {
        ready_sender.send(()).unwrap();
        go.recv().unwrap();
        counters_touch_pages(PAGES);
        done_sender.send(()).unwrap();
        // Still running while the set is read.
        finish.recv().unwrap();
    });
    ready.recv().unwrap();
    let counters = Counters::new(&["page-faults"], Scope::Process).unwrap();
    counters.start().unwrap();
    go_sender.send(()).unwrap();
    done.recv().unwrap();
    let faults = counters.read().unwrap()[0] as f64;
    finish_sender.send(()).unwrap();
    worker.join().unwrap();
    counters.stop().unwrap();
    assert!(
        within(faults, PAGES as f64, 0.15),
        "{faults} faults read while the thread ran"
    );
});

/// One overflow handler call, as the tests keep them.
#[derive(Clone, Copy, Debug)]
struct Call {
    address: usize,
    vector: u64,
    tid: i32,
}

/// The calls a handler saw, kept without allocating in the handler.
struct Calls {
    calls: Vec<Mutex<Option<Call>>>,
    next: AtomicU64,
}

impl Calls {
    fn new() -> Arc<Calls> {
        Arc::new(Calls {
            calls: (0..100_000).map(|_| Mutex::new(None)).collect(),
            next: AtomicU64::new(0),
        })
    }

    fn push(&self, call: Call) {
        let index = self.next.fetch_add(1, Ordering::Relaxed) as usize;
        // Uncontended: each slot is written once, by one thread.
        if let Some(slot) = self.calls.get(index)
            && let Ok(mut slot) = slot.try_lock()
        {
            *slot = Some(call);
        }
    }

    fn all(&self) -> Vec<Call> {
        self.calls
            .iter()
            .filter_map(|slot| *slot.lock().unwrap())
            .collect()
    }
}

fn recording(calls: &Arc<Calls>) -> impl Fn(&profiler_sampler::Overflow<'_>) + Send + Sync + use<> {
    let calls = Arc::clone(calls);
    move |overflow| {
        calls.push(Call {
            address: overflow.address,
            vector: overflow.vector,
            tid: gettid(),
        })
    }
}

/// The share of `calls` with `bit` whose address is in `range`.
fn share_in(calls: &[Call], bit: u64, range: &Range<usize>) -> f64 {
    let with: Vec<&Call> = calls.iter().filter(|c| c.vector & bit != 0).collect();
    with.iter().filter(|c| range.contains(&c.address)).count() as f64 / with.len().max(1) as f64
}

live_test!(two_events_overflow_in_the_thread_that_did_the_work, || {
    let _turn = process_wide();
    let calls = Calls::new();
    let (clock, fault) = (recording(&calls), recording(&calls));
    let worker = thread::spawn(move || {
        let counters = Counters::new(&["task-clock", "page-faults"], Scope::Thread).unwrap();
        counters.on_overflow(0, 1_000_000, clock).unwrap();
        counters.on_overflow(1, 100, fault).unwrap();
        counters.start().unwrap();
        // Faulting in pages takes time in the kernel, which task-clock
        // counts (and samples there, where the kernel may be counted): the
        // spin is most of the work.
        counters_spin(Duration::from_millis(500));
        counters_touch_pages(5_000);
        counters.stop().unwrap();
        (counters.read().unwrap(), gettid())
    });
    // The main thread faults meanwhile: none of its faults may call.
    counters_touch_pages(PAGES);
    let (counts, worker_tid) = worker.join().unwrap();
    let calls = calls.all();
    let clock_calls = calls.iter().filter(|c| c.vector & 1 != 0).count() as f64;
    let fault_calls = calls.iter().filter(|c| c.vector & 2 != 0).count() as f64;
    let (nanoseconds, faults) = (counts[0] as f64, counts[1] as f64);
    assert!(
        within(clock_calls, nanoseconds / 1e6, 0.25),
        "{clock_calls} task-clock calls for {nanoseconds} ns"
    );
    assert!(
        within(fault_calls, faults / 100.0, 0.25),
        "{fault_calls} page-fault calls for {faults} faults"
    );
    assert!(calls.iter().all(|c| c.tid == worker_tid), "{calls:?}");
    assert!(calls.iter().all(|c| c.vector == 1 || c.vector == 2));
    let spinning = share_in(&calls, 1, &spin_extent());
    assert!(
        spinning >= 0.9,
        "{spinning:.2} of task-clock calls in the spin"
    );
    let touching = share_in(&calls, 2, &touch_extent());
    assert!(
        touching >= 0.9,
        "{touching:.2} of page-fault calls in the touch"
    );
});

live_test!(threshold_0_stops_the_calls, || {
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let counters = Counters::new(&["task-clock"], Scope::Thread).unwrap();
    let count = |_: &profiler_sampler::Overflow<'_>| {
        CALLS.fetch_add(1, Ordering::Relaxed);
    };
    counters.on_overflow(0, 1_000_000, count).unwrap();
    counters.start().unwrap();
    counters_spin(Duration::from_millis(50));
    counters.stop().unwrap();
    let before = CALLS.load(Ordering::Relaxed);
    assert!(before >= 40, "{before} calls in 50 ms of CPU at 1 kHz");
    counters.on_overflow(0, 0, count).unwrap();
    counters.start().unwrap();
    counters_spin(Duration::from_millis(50));
    counters.stop().unwrap();
    assert_eq!(CALLS.load(Ordering::Relaxed), before);
});

live_test!(
    emulated_overflow_calls_every_threshold_from_the_spin,
    || {
        let _turn = process_wide();
        let calls = Calls::new();
        let counters = Counters::new(&["task-clock"], Scope::Thread).unwrap();
        counters
            .on_overflow_with(0, 2_000_000, OverflowMode::Emulated, recording(&calls))
            .unwrap();
        counters.start().unwrap();
        counters_spin(Duration::from_millis(300));
        counters.stop().unwrap();
        let nanoseconds = counters.read().unwrap()[0] as f64;
        let calls = calls.all();
        assert!(
            within(calls.len() as f64, nanoseconds / 2e6, 0.40),
            "{} emulated calls for {nanoseconds} ns",
            calls.len()
        );
        let spinning = share_in(&calls, 1, &spin_extent());
        assert!(
            spinning >= 0.9,
            "{spinning:.2} of emulated calls in the spin"
        );
    }
);

live_test!(the_handler_reads_the_counters, || {
    let last = Arc::new(AtomicU64::new(0));
    let (reads, backwards) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let counters = Counters::new(&["task-clock", "page-faults"], Scope::Thread).unwrap();
    let handler = {
        let (last, reads, backwards) = (
            Arc::clone(&last),
            Arc::clone(&reads),
            Arc::clone(&backwards),
        );
        move |overflow: &profiler_sampler::Overflow<'_>| {
            let mut values = [0_u64; 2];
            if overflow.read_into(&mut values).is_ok() {
                reads.fetch_add(1, Ordering::Relaxed);
                if values[0] < last.swap(values[0], Ordering::Relaxed) {
                    backwards.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    };
    counters.on_overflow(0, 500_000, handler).unwrap();
    counters.start().unwrap();
    // Reads outside the handler too, which the handler interrupts, for
    // 200 ms of the thread's CPU time.
    let end = thread_cpu_ns() + 200_000_000;
    while thread_cpu_ns() < end {
        black_box(counters.read().unwrap());
    }
    counters.stop().unwrap();
    assert!(reads.load(Ordering::Relaxed) >= 100, "{reads:?} reads");
    assert_eq!(backwards.load(Ordering::Relaxed), 0);
    assert!(last.load(Ordering::Relaxed) <= counters.read().unwrap()[0]);
});

live_test!(context_switches_are_counted_with_the_kernels_side, || {
    // Switches happen in the kernel, which only root may count at
    // perf_event_paranoid 2.
    if !profiler_testing::root("counting the kernel's side of context switches") {
        return;
    }
    let counters = Counters::new(&["context-switches"], Scope::Thread).unwrap();
    counters.start().unwrap();
    for _ in 0..100 {
        thread::sleep(Duration::from_micros(100));
    }
    counters.stop().unwrap();
    let switches = counters.read().unwrap()[0];
    assert!(switches >= 90, "{switches} switches for 100 sleeps");
});
