//! `PAPI_profil` for Rust programs: sample the calling process (all its
//! threads) on one event while it runs, and pour the program counters into a
//! histogram over its own text.
//!
//! ```no_run
//! use profiler_sampler::{Profil, ProfilConfig};
//!
//! // One sample per 100 µs of CPU time, over the whole text, one 16-bit
//! // bucket per 2 bytes.
//! let profil = Profil::start(ProfilConfig::new("cpu-clock", 100_000))?;
//! // ... the code to profile ...
//! let outcome = profil.stop()?;
//! let (region, buckets) = outcome.histogram.regions().next().unwrap();
//! for (index, count) in buckets.counts().enumerate().filter(|&(_, c)| c > 0) {
//!     println!("{:#x} {count}", region.first_address(index));
//! }
//! # Ok::<(), profiler_sampler::SamplerError>(())
//! ```
//!
//! [`Profil::start_into`] takes a histogram made by the caller instead:
//! several regions, an overflow bin, buckets that already hold counts (what
//! `PAPI_sprofil` and the C library need). [`Profil::read`] returns what has
//! been counted so far while the profile goes on.
//!
//! The counters are the recorder's: one per thread and CPU, inherited by
//! threads started later, all of a CPU's writing into one ring buffer. One
//! background thread per process drains every profile's rings into its
//! histogram as they fill; it is started before the first profile's threads
//! are listed, so that it neither is listed nor inherits a counter, and no
//! profile samples it.

#[allow(unsafe_code)]
mod drainer;
mod sink;

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use profiler_events::{CPU_CLOCK, EventSpec};
use profiler_histogram::{
    BucketWidth, Flags, Histogram, HistogramConfig, HistogramError, OnFull, Region, Scale,
};
use profiler_model::{Avma, Sampling};

use self::drainer::Drainer;
use self::sink::HistogramSink;
pub use self::sink::ProfilOutcome;
use crate::counters::{self, ResolvedEvent, RingPlan, Rings, Role};
use crate::error::SamplerError;
use crate::recorder::{DEFAULT_FREQUENCY, DEFAULT_RING_BYTES, resolve_sampling};
use crate::{own_process, refusal, sysinfo, target};

/// How many times the counters are opened before the list of threads is
/// taken as it is (see [`open_on_own_threads`]).
const OPEN_ATTEMPTS: usize = 4;

/// What to profile, and how to count it (`PAPI_profil`'s arguments).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfilConfig {
    /// The event, as `-e` takes it: `cpu-clock`, `task-clock`, `cycles:u`...
    pub event: String,
    /// One sample every `threshold` events (nanoseconds for the clocks):
    /// PAPI's threshold, the counter's preset. At least 1.
    pub threshold: u64,
    /// When the kernel will not sample `event`, sample cpu-clock instead
    /// (PAPI's `PAPI_PROFIL_FORCE_SW`); [`Profil::event`] says so, and why.
    pub software_fallback: bool,
    /// The addresses the buckets cover.
    pub region: ProfilRegion,
    pub width: BucketWidth,
    pub scale: Scale,
    pub on_full: OnFull,
    pub flags: Flags,
}

impl ProfilConfig {
    /// `event` every `threshold` events over the program's whole text, with
    /// PAPI's defaults: 16-bit buckets, one per 2 bytes, saturating, no flags.
    pub fn new(event: impl Into<String>, threshold: u64) -> ProfilConfig {
        ProfilConfig {
            event: event.into(),
            threshold,
            software_fallback: false,
            region: ProfilRegion::OwnText,
            width: BucketWidth::default(),
            scale: Scale::FULL,
            on_full: OnFull::default(),
            flags: Flags::default(),
        }
    }

    /// The empty histogram the configuration describes: one region, no
    /// overflow bin.
    pub fn histogram(&self) -> Result<Histogram, SamplerError> {
        let (start, end) = match self.region {
            ProfilRegion::OwnText => own_process::own_text()?,
            ProfilRegion::Range { start, end } => (start.0, end.0),
        };
        if end <= start {
            return Err(HistogramError::EmptyRegion { offset: start }.into());
        }
        let mut histogram = Histogram::new(HistogramConfig {
            width: self.width,
            on_full: self.on_full,
            flags: self.flags,
            overflow_bin: false,
        });
        histogram.add_region(Region::new(start, end - start, self.scale)?);
        Ok(histogram)
    }
}

/// The addresses a profile's buckets cover, in this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProfilRegion {
    /// The running program's text: its executable mappings, from the lowest
    /// to the highest (shared libraries not included).
    OwnText,
    /// `[start, end)`.
    Range { start: Avma, end: Avma },
}

/// An event checked for profiling this process: parsed, its threshold
/// checked, and accepted by the kernel (or, with the software fallback,
/// replaced by cpu-clock).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfilEvent {
    resolved: ResolvedEvent,
    threshold: u64,
    notice: Option<String>,
}

impl ProfilEvent {
    /// Checks `event` sampled every `threshold` events, as `record` checks
    /// `-e` and `-c`, and opens it on this process for a moment. With
    /// `software_fallback`, an event the kernel refuses is replaced by
    /// cpu-clock at `record`'s default rate.
    pub fn new(
        event: &str,
        threshold: u64,
        software_fallback: bool,
    ) -> Result<ProfilEvent, SamplerError> {
        let spec = EventSpec::parse_with(event, sysinfo::pmus())?;
        let requested = Some(Sampling::Period(threshold));
        let max_rate = sysinfo::max_sample_rate();
        let sampling = resolve_sampling(&spec.base, requested, max_rate, &mut Vec::new())?;
        let resolved = ResolvedEvent {
            spec,
            sampling,
            leader: None,
            switch_out: None,
        };
        let refusal = match counters::probe(&resolved, Role::Alone, None) {
            Ok(()) => {
                return Ok(ProfilEvent {
                    resolved,
                    threshold,
                    notice: None,
                });
            }
            Err(refusal) if software_fallback && !resolved.spec.is_software() => refusal,
            Err(refusal) => return Err(refusal),
        };
        let hz = max_rate.map_or(DEFAULT_FREQUENCY, |max| max.clamp(1, DEFAULT_FREQUENCY));
        let period = 1_000_000_000 / hz;
        let fallback = ResolvedEvent {
            spec: EventSpec {
                user: resolved.spec.user,
                kernel: resolved.spec.kernel,
                hypervisor: resolved.spec.hypervisor,
                ..EventSpec::user_only(CPU_CLOCK)
            },
            sampling: Sampling::Period(period),
            leader: None,
            switch_out: None,
        };
        counters::probe(&fallback, Role::Alone, None)?;
        let notice = format!(
            "'{}' cannot be sampled: {}; sampling cpu-clock every {period} ns instead",
            resolved.spec.name(),
            refusal::reason(refusal)
        );
        Ok(ProfilEvent {
            resolved: fallback,
            threshold: period,
            notice: Some(notice),
        })
    }

    /// The event sampled, with its modifiers: `cpu-clock`, `cycles:k`.
    pub fn name(&self) -> String {
        self.resolved.spec.name()
    }

    /// Events per sample (nanoseconds for the clocks).
    pub fn threshold(&self) -> u64 {
        self.threshold
    }

    /// Why another event is sampled than the one asked for, if one is.
    pub fn notice(&self) -> Option<&str> {
        self.notice.as_deref()
    }
}

/// A running profile of the calling process. Stop it with [`Profil::stop`];
/// dropping it stops it too, and throws the counts away.
///
/// Every thread of the process is followed, including those started while
/// it runs, but the library's own: one thread drains every profile of the
/// process, and none counts it.
#[derive(Debug)]
pub struct Profil {
    event: ProfilEvent,
    running: Option<Running>,
}

#[derive(Debug)]
struct Running {
    drainer: Arc<Drainer>,
    id: u64,
}

impl Profil {
    /// Checks the configuration, then starts counting on every thread of
    /// the calling process at once.
    pub fn start(config: ProfilConfig) -> Result<Profil, SamplerError> {
        // The histogram is checked before the kernel is asked for anything.
        let histogram = config.histogram()?;
        let event = ProfilEvent::new(&config.event, config.threshold, config.software_fallback)?;
        Profil::start_into(&event, histogram)
    }

    /// Starts counting `event` on every thread of the calling process at
    /// once, into `histogram`: its regions, its flags, and the counts its
    /// buckets already hold.
    pub fn start_into(event: &ProfilEvent, histogram: Histogram) -> Result<Profil, SamplerError> {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        let cpus = target::online_cpus()?;
        // Started, and among the library's threads, before the threads to
        // count are listed.
        let drainer = Drainer::get()?;
        let rings = open_on_own_threads(&event.resolved, &cpus)?;
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        drainer.add(id, rings, HistogramSink::new(histogram))?;
        Ok(Profil {
            event: event.clone(),
            running: Some(Running { drainer, id }),
        })
    }

    /// The event sampled: the one asked for, or the software fallback.
    pub fn event(&self) -> &ProfilEvent {
        &self.event
    }

    /// What the profile has counted so far, every sample taken until now
    /// included; it goes on counting. On an error the profile has ended.
    pub fn read(&mut self) -> Result<ProfilOutcome, SamplerError> {
        let mut snapshot = None;
        if self.read_with(&mut |outcome| snapshot = Some(outcome.clone()))? {
            return snapshot.ok_or_else(drain_thread_lost);
        }
        // Ended on an error: the stop says which.
        let running = self.running.take().ok_or_else(drain_thread_lost)?;
        Err(running
            .drainer
            .stop(running.id)
            .err()
            .unwrap_or_else(drain_thread_lost))
    }

    /// Calls `visit` with what the profile has counted so far, every sample
    /// taken until now included, while the profile goes on; `Ok(false)`
    /// if the profile has ended on an error (which [`Profil::stop`]
    /// returns). `visit` runs on the library's drain thread while the
    /// caller waits. This call allocates nothing and takes no lock: it
    /// may be made from a signal handler.
    pub fn read_with(
        &self,
        visit: &mut (dyn FnMut(&ProfilOutcome) + Send),
    ) -> Result<bool, SamplerError> {
        let running = self.running.as_ref().ok_or_else(drain_thread_lost)?;
        running.drainer.read(running.id, visit)
    }

    /// Stops counting and returns what the profile counted, every sample
    /// taken until now included.
    pub fn stop(mut self) -> Result<ProfilOutcome, SamplerError> {
        let running = self.running.take().ok_or_else(drain_thread_lost)?;
        running.drainer.stop(running.id)
    }
}

impl Drop for Profil {
    fn drop(&mut self) {
        if let Some(running) = self.running.take() {
            // Nobody asked for the counts; what matters is that the
            // counters are gone.
            let _ = running.drainer.stop(running.id);
        }
    }
}

fn drain_thread_lost() -> SamplerError {
    SamplerError::System {
        what: "the profile's drain thread",
        error: io::Error::from_raw_os_error(libc::ESRCH),
    }
}

/// Opens the counters on every thread but the library's own.
///
/// A thread started while they are being opened may start before its
/// creator's counter exists, and then inherits none; a listed thread may
/// exit before its own is opened. Either way the threads are listed and the
/// counters opened again (the old ones, with what they passed on, closed),
/// until the list holds still, at most [`OPEN_ATTEMPTS`] times. No thread
/// is counted twice: a listed thread existed before any counter of its
/// attempt, so it inherited none.
fn open_on_own_threads(event: &ResolvedEvent, cpus: &[usize]) -> Result<Rings, SamplerError> {
    let mut attempt = 1;
    loop {
        let last = attempt == OPEN_ATTEMPTS;
        let tasks = own_process::threads_except(0)?;
        let plan = RingPlan {
            events: std::slice::from_ref(event),
            call_graph: None,
            tasks: &tasks,
            cpus,
            bytes: DEFAULT_RING_BYTES,
            enable_on_exec: false,
            side_band: false,
            switches: false,
        };
        match counters::open_rings(&plan) {
            Err(SamplerError::OpenFailed { error, .. })
                if !last && error.raw_os_error() == Some(libc::ESRCH) => {}
            Err(error) => return Err(error),
            Ok(rings) => {
                let now = own_process::threads_except(0)?;
                if last || now.iter().all(|tid| tasks.binary_search(tid).is_ok()) {
                    return Ok(rings);
                }
            }
        }
        attempt += 1;
    }
}

#[cfg(test)]
mod tests {
    use profiler_model::{CpuMode, Lost, Record, RecordSink, Sample};

    use super::*;

    fn sink(start: u64, end: u64) -> Result<HistogramSink, SamplerError> {
        let mut config = ProfilConfig::new("cpu-clock", 1000);
        config.region = ProfilRegion::Range {
            start: Avma(start),
            end: Avma(end),
        };
        config.histogram().map(HistogramSink::new)
    }

    fn sample(pid: u32, ip: u64) -> Record {
        Record::Sample(Sample {
            time: 1,
            pid,
            tid: pid,
            cpu: 0,
            event: 0,
            mode: CpuMode::User,
            ip: Avma(ip),
            period: 1000,
            callchain: Vec::new(),
            user_stack: None,
            read: Vec::new(),
        })
    }

    #[test]
    fn the_sink_counts_this_process_only() {
        let mut sink = sink(0x1000, 0x2000).unwrap();
        let me = std::process::id();
        for record in [
            sample(me, 0x1010),
            sample(me, 0x1011),
            sample(me, 0x3000),
            sample(me + 1, 0x1010),
            Record::Lost(Lost {
                time: 2,
                event: 0,
                count: 7,
            }),
        ] {
            sink.push(&record).unwrap();
        }
        let outcome = sink.into_outcome();
        assert_eq!((outcome.samples, outcome.lost), (3, 7));
        let stats = outcome.histogram.stats();
        assert_eq!((stats.in_region, stats.outside), (2, 1));
        let (region, buckets) = outcome.histogram.regions().next().unwrap();
        assert_eq!(buckets.get(region.index_of(0x1010).unwrap()), 2);
    }

    #[test]
    fn an_empty_or_reversed_range_is_refused() {
        for (start, end) in [(0x2000, 0x2000), (0x2000, 0x1000)] {
            let error = sink(start, end).err().unwrap().to_string();
            assert!(error.contains("0x2000 is empty"), "{error}");
        }
    }
}
