//! A profiling session, as the C functions drive it: checked once when it
//! is made, then started, read and stopped any number of times, its counts
//! always in the caller's buffers.
//!
//! The buffers are touched only inside calls: read when a profile starts
//! (their counts are added to, as PAPI and glibc add to them), written when
//! it is read or stopped. In between the profile counts into a histogram of
//! its own, so that the caller may read its buffers at any time between
//! calls without racing the library. A read has the library's drain thread
//! write them while the caller waits, so that the caller's thread neither
//! allocates nor takes a lock: it may be in a signal handler.

use std::ffi::c_int;

use profiler_histogram::{BucketWidth, Buckets, Histogram, HistogramConfig, OnFull, Region, Scale};
use profiler_sampler::{Profil, ProfilEvent, ProfilOutcome};

use crate::caller_buffer::CallerBuffer;
use crate::errors::{CallError, Message};
use crate::flags::parse_flags;
use crate::types::{PROF_ENOSUPP, PROF_ESYS, ProfStats};

/// One region as the caller gave it.
#[derive(Debug)]
pub(crate) struct RegionRequest {
    /// How messages name it: `""` for `prof_profil`'s arguments,
    /// `"regions[2]: "` for `prof_sprofil`'s.
    pub(crate) name: String,
    /// `None` for a null pointer.
    pub(crate) buffer: Option<CallerBuffer>,
    pub(crate) offset: u64,
    pub(crate) scale: u32,
}

/// What to profile, as the caller asked for it.
#[derive(Debug)]
pub(crate) struct SessionRequest<'a> {
    pub(crate) event: &'a str,
    pub(crate) threshold: i64,
    pub(crate) flags: c_int,
    pub(crate) regions: Vec<RegionRequest>,
}

#[derive(Debug)]
pub(crate) struct Session {
    event: ProfilEvent,
    config: HistogramConfig,
    regions: Vec<(Region, CallerBuffer)>,
    /// glibc's overflow bin: the region with offset 0 and scale 2.
    bin: Option<CallerBuffer>,
    profil: Option<Profil>,
    /// What the profiles stopped so far counted.
    stopped: ProfStats,
    /// What the running profile had counted when last read.
    running: ProfStats,
}

/// Where a region's samples go.
enum Placed {
    Region(Region, CallerBuffer),
    Bin(CallerBuffer),
}

impl Session {
    /// Checks everything before anything runs: flags, threshold, regions,
    /// and the event (which the kernel is asked about).
    pub(crate) fn new(request: SessionRequest<'_>) -> Result<Session, CallError> {
        let flags = parse_flags(request.flags)?;
        let threshold = u64::try_from(request.threshold)
            .ok()
            .filter(|&t| t > 0)
            .ok_or_else(|| {
                CallError::invalid(format!(
                    "threshold {}: give the sample period, at least 1 (events per sample; \
                     nanoseconds for cpu-clock and task-clock)",
                    request.threshold
                ))
            })?;
        let mut regions = Vec::new();
        let mut bin = None;
        for region in request.regions {
            let name = region.name.clone();
            match place(region, flags.width)? {
                Placed::Region(region, buffer) => regions.push((region, buffer)),
                Placed::Bin(_) if bin.is_some() => {
                    return Err(CallError::invalid(format!(
                        "{name}a second overflow bin (offset 0, scale 2); give one at most"
                    )));
                }
                Placed::Bin(buffer) => bin = Some(buffer),
            }
        }
        let event = ProfilEvent::new(request.event, threshold, flags.software_fallback).map_err(
            |error| {
                let mut error = CallError::from(error);
                if error.code == PROF_ENOSUPP && !flags.software_fallback {
                    error.append("; or give PROF_FORCE_SW to sample cpu-clock instead");
                }
                error
            },
        )?;
        Ok(Session {
            event,
            config: HistogramConfig {
                width: flags.width,
                on_full: OnFull::Saturate,
                flags: flags.flags,
                overflow_bin: bin.is_some(),
            },
            regions,
            bin,
            profil: None,
            stopped: ProfStats::default(),
            running: ProfStats::default(),
        })
    }

    /// Why another event is sampled than the one asked for, if one is.
    pub(crate) fn notice(&self) -> Option<String> {
        self.event.notice().map(str::to_owned)
    }

    /// Starts counting from what the buffers hold now.
    pub(crate) fn start(&mut self) -> Result<(), CallError> {
        if self.profil.is_some() {
            return Err(CallError::state(
                "the session is running already; call prof_stop before starting it again",
            ));
        }
        let profil = Profil::start_into(&self.event, self.histogram()?)?;
        self.profil = Some(profil);
        self.running = ProfStats::default();
        Ok(())
    }

    /// Brings the buffers up to date; a stopped session's are already.
    /// Allocates nothing and takes no lock: the drain thread writes the
    /// buffers while this thread waits, so a signal handler may call it.
    pub(crate) fn read(&mut self) -> Result<(), CallError> {
        let Some(profil) = &self.profil else {
            return Ok(());
        };
        let (regions, bin, running) = (&mut self.regions, &mut self.bin, &mut self.running);
        let width = self.config.width;
        let mut write = |outcome: &ProfilOutcome| {
            *running = stats_of(outcome);
            write_back(&outcome.histogram, width, regions, bin);
        };
        match profil.read_with(&mut write) {
            Ok(true) => Ok(()),
            Ok(false) => Err(CallError {
                code: PROF_ESYS,
                message: Message::Static(
                    "the session has stopped on an error; prof_stop returns it",
                ),
            }),
            Err(error) => Err(CallError::signal_safe(error)),
        }
    }

    /// Stops counting, then brings the buffers up to date.
    pub(crate) fn stop(&mut self) -> Result<(), CallError> {
        let profil = self
            .profil
            .take()
            .ok_or_else(|| CallError::state("the session is not running; call prof_start first"))?;
        self.running = ProfStats::default();
        let outcome = profil.stop()?;
        self.stopped.add(stats_of(&outcome));
        write_back(
            &outcome.histogram,
            self.config.width,
            &mut self.regions,
            &mut self.bin,
        );
        Ok(())
    }

    /// The counts of every profile of the session, as of the last read or
    /// stop: the moment the buffers show.
    pub(crate) fn stats(&self) -> ProfStats {
        let mut stats = self.stopped;
        stats.add(self.running);
        stats
    }

    /// What is sampled.
    pub(crate) fn event(&self) -> &ProfilEvent {
        &self.event
    }

    /// Each region with the counts its buffer holds.
    pub(crate) fn counts(&self) -> Vec<(Region, Buckets)> {
        let width = self.config.width;
        (self.regions.iter())
            .map(|(region, buffer)| {
                let bytes = &buffer.bytes()[..region.bucket_count() * width.bytes()];
                let counts =
                    Buckets::from_ne_bytes(width, bytes).unwrap_or_else(|| Buckets::new(width, 0));
                (*region, counts)
            })
            .collect()
    }

    /// A histogram over the regions, starting from the buffers' counts.
    fn histogram(&self) -> Result<Histogram, CallError> {
        let width = self.config.width;
        let mut histogram = Histogram::new(self.config);
        for (region, buffer) in &self.regions {
            let bytes = &buffer.bytes()[..region.bucket_count() * width.bytes()];
            // Whole buckets by construction; were they not, the empty
            // counts would be refused as not matching the region.
            let counts =
                Buckets::from_ne_bytes(width, bytes).unwrap_or_else(|| Buckets::new(width, 0));
            histogram
                .add_region_with(*region, counts)
                .map_err(|error| CallError::invalid(error.to_string()))?;
        }
        if let Some(bin) = &self.bin {
            let count = Buckets::from_ne_bytes(width, &bin.bytes()[..width.bytes()])
                .map_or(0, |counts| counts.get(0));
            histogram.preset_overflow_bin(count);
        }
        Ok(histogram)
    }
}

/// Copies the histogram's counts into the caller's buffers.
fn write_back(
    histogram: &Histogram,
    width: BucketWidth,
    regions: &mut [(Region, CallerBuffer)],
    bin: &mut Option<CallerBuffer>,
) {
    for ((_, buckets), (_, buffer)) in histogram.regions().zip(regions) {
        buckets.write_ne_bytes(buffer.bytes_mut());
    }
    if let (Some(count), Some(bin)) = (histogram.overflow_bin(), bin) {
        let mut one = Buckets::new(width, 1);
        one.add(0, count, OnFull::Saturate);
        one.write_ne_bytes(bin.bytes_mut());
    }
}

/// Checks a region: a buffer with room for a bucket, a valid scale, and
/// no more buckets than a histogram may have. Offset 0 with scale 2 is
/// glibc's overflow bin.
fn place(request: RegionRequest, width: BucketWidth) -> Result<Placed, CallError> {
    let RegionRequest {
        name,
        buffer,
        offset,
        scale,
    } = request;
    let buffer = buffer.ok_or_else(|| {
        CallError::invalid(format!(
            "{name}buf is NULL; give a buffer of bufsiz bytes for the buckets"
        ))
    })?;
    let scale = Scale::new(u64::from(scale))
        .map_err(|error| CallError::invalid(format!("{name}{error}")))?;
    let buckets = buffer.len() / width.bytes();
    if buckets == 0 {
        return Err(CallError::invalid(format!(
            "{name}bufsiz {} holds no {}-bit bucket; give at least {} bytes",
            buffer.len(),
            width.bits(),
            width.bytes()
        )));
    }
    if offset == 0 && scale == Scale::SINGLE {
        return Ok(Placed::Bin(buffer));
    }
    let region = Region::with_buckets(offset, buckets as u64, scale)
        .map_err(|error| CallError::invalid(format!("{name}{error}")))?;
    Ok(Placed::Region(region, buffer))
}

fn stats_of(outcome: &ProfilOutcome) -> ProfStats {
    let histogram = outcome.histogram.stats();
    ProfStats {
        samples: outcome.samples,
        outside: histogram.outside,
        saturated: histogram.saturated,
        lost: outcome.lost,
    }
}
