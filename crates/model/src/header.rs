//! The metadata that frames a recording's event stream: the header written
//! first (what was recorded, where, how) and the trailer written last (what
//! came of it). Both are JSON, so fields can be added without a new format
//! version.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::event::EventDescription;
use crate::job::JobInfo;
use crate::printable::make_printable;
use crate::record::BuildId;
use crate::stats::RecordingStats;

/// Written at the start of every recording.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordingHeader {
    /// The events sampled, indexed by [`EventIndex`](crate::EventIndex).
    pub events: Vec<EventDescription>,
    /// The profiled command and its arguments.
    pub command: Vec<String>,
    /// The command's executable, resolved (canonical path), when known.
    #[serde(default)]
    pub program: Option<String>,
    /// The user id the profiled processes ran as, when they ran as one:
    /// whose files (a JIT's `/tmp/perf-PID.map`) speak for them. `None`
    /// for whole CPUs, and in recordings made before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<u32>,
    /// Set when the recording keeps histograms instead of samples.
    #[serde(default)]
    pub histogram: Option<HistogramSettings>,
    /// How samples' call stacks were collected, when they were.
    #[serde(default)]
    pub call_graph: Option<CallGraph>,
    pub host: HostInfo,
    /// The recording's place in a parallel job (MPI rank, job size, job
    /// id), when a launcher said; absent in recordings made before ranks
    /// were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<JobInfo>,
    /// Wall-clock start of the recording, nanoseconds since the Unix epoch.
    pub start_unix_ns: u64,
    /// The version of the profiler that wrote the recording.
    pub profiler_version: String,
}

impl RecordingHeader {
    /// Escapes the control characters of the text it holds, read from a
    /// file anyone may have made: the command, the events' names, the
    /// host's.
    pub fn make_printable(&mut self) {
        let host = &mut self.host;
        let texts = (self.command.iter_mut())
            .chain(self.program.as_mut())
            .chain(
                self.events
                    .iter_mut()
                    .flat_map(|e| [&mut e.name, &mut e.unit]),
            )
            .chain([&mut host.hostname, &mut host.kernel, &mut host.arch])
            .chain(self.histogram.iter_mut().flat_map(|h| h.regions.iter_mut()));
        texts.for_each(make_printable);
    }
}

/// How call stacks are collected (`record --call-graph`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallGraph {
    /// The kernel follows the frame-pointer chain.
    FramePointer,
    /// The kernel copies `stack_bytes` of the user stack and the registers
    /// the unwinder starts from; the report unwinds with the modules'
    /// unwind tables.
    Dwarf { stack_bytes: u32 },
}

/// How a histogram-mode recording bucketed its samples (PAPI_profil's
/// parameters).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistogramSettings {
    /// 16, 32 or 64.
    pub bucket_bits: u8,
    /// PAPI's scale for the regions over whole modules.
    pub scale: u32,
    /// Full buckets wrap (PAPI) instead of saturating (glibc).
    pub wrap: bool,
    pub random: bool,
    pub compress: bool,
    pub weighted: bool,
    /// The regions given by the user, as given (`START:END[:SCALE]`); empty
    /// when every module's text was covered.
    pub regions: Vec<String>,
}

/// What became of the samples of one event in histogram mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistogramTotals {
    /// Samples counted in a bucket.
    pub in_region: u64,
    /// Samples in no region (another module, the kernel, no mapping).
    pub outside: u64,
    /// Increments a full bucket could not hold.
    pub saturated: u64,
    /// Samples dropped by the RANDOM or COMPRESS flags.
    pub dropped: u64,
}

/// The machine a recording was made on.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostInfo {
    pub hostname: String,
    /// The kernel release (`uname -r`).
    pub kernel: String,
    pub arch: String,
    pub cpus: u32,
}

/// Written at the end of every finished recording.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trailer {
    pub stats: RecordingStats,
    /// Every file mapped executable during the recording.
    pub modules: Vec<ModuleEntry>,
    /// Wall-clock duration of the recording in nanoseconds.
    pub duration_ns: u64,
    /// How the profiled command ended, e.g. `exited with status 0`.
    pub outcome: String,
    /// In histogram mode, per event (indexed like the header's events).
    #[serde(default)]
    pub histogram_totals: Vec<HistogramTotals>,
    /// How many chunks of records were written (numbered 1 to this), so
    /// that the last ones lost are seen; 0 in recordings made before.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub record_chunks: u64,
    /// Where the chunks of the recording's archive start, once `profiler
    /// archive` added one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub archive: Vec<u64>,
}

impl Trailer {
    /// Escapes the control characters of the text it holds.
    pub fn make_printable(&mut self) {
        make_printable(&mut self.outcome);
        (self.modules.iter_mut()).for_each(|m| make_printable(&mut m.path));
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A file mapped executable into a profiled process.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ModuleEntry {
    pub path: String,
    #[serde(default, with = "build_id_hex")]
    pub build_id: Option<BuildId>,
}

mod build_id_hex {
    use super::*;

    pub(super) fn serialize<S: Serializer>(id: &Option<BuildId>, s: S) -> Result<S::Ok, S::Error> {
        match id {
            Some(id) => s.serialize_some(&id.to_string()),
            None => s.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<BuildId>, D::Error> {
        let text: Option<String> = Option::deserialize(d)?;
        text.map(|t| BuildId::from_hex(&t).ok_or_else(|| serde::de::Error::custom("bad build-id")))
            .transpose()
    }
}
