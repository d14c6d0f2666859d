//! The recordings of a parallel job, one per MPI rank, read as one
//! profile. Each recording's header says its rank (recordings without one
//! are ranked in the order given); the recordings must agree on what was
//! sampled and on the build of each program, and two may not claim one
//! rank: the odd one is named. A stand-in recording holds the job's
//! header and summed trailer, which every view reads as it reads a
//! recording's; the samples are read rank by rank
//! ([`read_job_stacks`](crate::read_job_stacks)).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use profiler_model::{
    BuildId, CallGraph, EventDescription, HistogramSettings, HistogramTotals, JobInfo,
    RecordSource, Recording, RecordingError, RecordingHeader, SourceRecords, Trailer,
};

use crate::error::ReportError;
use crate::read::stacks::RankInfo;

/// Several recordings of one job, by rank.
#[derive(Debug)]
pub struct Job {
    /// By rank.
    members: Vec<Member>,
    /// The job's header and trailer, as one recording's.
    stand_in: Recording,
}

#[derive(Debug)]
struct Member {
    rank: u32,
    recording: Recording,
}

/// What the recordings of a job must share.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Settings<'a> {
    events: &'a [EventDescription],
    histogram: &'a Option<HistogramSettings>,
    call_graph: &'a Option<CallGraph>,
}

impl Job {
    /// Opens `paths` with `open`, on every CPU; the first error in the
    /// order of `paths` is the one returned.
    pub fn open_with<E: Send>(
        paths: &[PathBuf],
        open: impl Fn(&Path) -> Result<Recording, E> + Sync,
    ) -> Result<Vec<Recording>, E> {
        in_parallel(paths, |path| open(path)).into_iter().collect()
    }

    /// The job of `recordings`: checked to be one job's, then ordered by
    /// rank.
    pub fn new(recordings: Vec<Recording>) -> Result<Job, ReportError> {
        if recordings.is_empty() {
            return Err(ReportError::Job("no recording to read".into()));
        }
        let ranked = recordings.iter().filter(|r| rank_of(r).is_some()).count();
        if ranked > 0 && ranked < recordings.len() {
            let (with, without) = (
                recordings.iter().find(|r| rank_of(r).is_some()),
                recordings.iter().find(|r| rank_of(r).is_none()),
            );
            return Err(ReportError::Job(format!(
                "{} has no rank (it was recorded outside mpirun or srun), {} has one: they are \
                 not one job; read them apart",
                shown(without),
                shown(with),
            )));
        }
        let mut members: Vec<Member> = (recordings.into_iter().enumerate())
            .map(|(position, recording)| Member {
                rank: rank_of(&recording).unwrap_or(position as u32),
                recording,
            })
            .collect();
        members.sort_by_key(|m| m.rank);
        check_ranks(&members)?;
        check_settings(&members)?;
        check_builds(&members)?;
        check_job_ids(&members)?;
        let stand_in = stand_in(&members);
        Ok(Job { members, stand_in })
    }

    /// The job as one recording: the lowest rank's header, saying how many
    /// ranks were read, and the trailers summed. Its records are not read:
    /// each rank's are.
    pub fn recording(&self) -> &Recording {
        &self.stand_in
    }

    /// The recordings, by rank.
    pub fn ranks(&self) -> impl Iterator<Item = (u32, &Recording)> {
        self.members.iter().map(|m| (m.rank, &m.recording))
    }

    /// The recording of `rank`.
    pub fn rank(&self, rank: u32) -> Option<&Recording> {
        self.ranks().find(|(r, _)| *r == rank).map(|(_, r)| r)
    }

    /// The recording of `rank` alone, or the ranks there are.
    pub fn into_rank(self, rank: u32) -> Result<Recording, ReportError> {
        let ranks: Vec<u32> = self.members.iter().map(|m| m.rank).collect();
        let member = self.members.into_iter().find(|m| m.rank == rank);
        member.map(|m| m.recording).ok_or_else(|| {
            ReportError::Job(format!(
                "the job has no recording of rank {rank}; it has {}",
                rank_list(&ranks)
            ))
        })
    }

    /// How many recordings the job has.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The ranks the launcher said the job had that have no recording
    /// here.
    pub fn missing_ranks(&self) -> Vec<u32> {
        let size = (self.members.iter())
            .filter_map(|m| m.recording.header.job.as_ref()?.size)
            .max()
            .unwrap_or(0);
        let mut present = self.members.iter().map(|m| m.rank).peekable();
        let mut missing = Vec::new();
        for rank in 0..size {
            while present.next_if(|&p| p < rank).is_some() {}
            if present.next_if_eq(&rank).is_none() {
                missing.push(rank);
            }
        }
        missing
    }

    /// Each recording's rank and host.
    pub(crate) fn rank_infos(&self) -> Vec<RankInfo> {
        (self.members.iter())
            .map(|m| RankInfo {
                rank: m.rank,
                host: m.recording.header.host.hostname.clone(),
            })
            .collect()
    }
}

fn rank_of(recording: &Recording) -> Option<u32> {
    recording.header.job.as_ref()?.rank
}

fn shown(recording: Option<&Recording>) -> String {
    recording.map_or_else(String::new, |r| r.path().display().to_string())
}

/// `run.2.data (rank 2)`.
fn named(member: &Member) -> String {
    format!(
        "{} (rank {})",
        member.recording.path().display(),
        member.rank
    )
}

/// Two recordings of one rank are two runs, not one job.
fn check_ranks(members: &[Member]) -> Result<(), ReportError> {
    for pair in members.windows(2) {
        if pair[0].rank == pair[1].rank {
            return Err(ReportError::Job(format!(
                "{} and {} are both rank {}: they come of two runs; read one run's recordings \
                 at a time",
                pair[0].recording.path().display(),
                pair[1].recording.path().display(),
                pair[0].rank
            )));
        }
    }
    Ok(())
}

/// The members that differ from most in `key`, and one of the most: the
/// odd ones out (ties go to the lowest rank's).
fn odd_ones<'a, K: PartialEq>(
    members: &'a [Member],
    key: impl Fn(&'a Member) -> K,
) -> Option<(&'a Member, &'a Member)> {
    let keys: Vec<K> = members.iter().map(&key).collect();
    let count = |k: &K| keys.iter().filter(|other| *other == k).count();
    let most = (0..keys.len()).max_by_key(|&i| (count(&keys[i]), std::cmp::Reverse(i)))?;
    let odd = (0..keys.len()).find(|&i| keys[i] != keys[most])?;
    Some((&members[odd], &members[most]))
}

fn check_settings(members: &[Member]) -> Result<(), ReportError> {
    fn settings(m: &Member) -> Settings<'_> {
        let header = &m.recording.header;
        Settings {
            events: &header.events,
            histogram: &header.histogram,
            call_graph: &header.call_graph,
        }
    }
    let Some((odd, usual)) = odd_ones(members, settings) else {
        return Ok(());
    };
    let describe = |m: &Member| {
        let header = &m.recording.header;
        let events: Vec<String> = (header.events.iter())
            .map(|e| format!("{} {}", e.name, e.sampling))
            .collect();
        let mode = match (&header.histogram, header.call_graph) {
            (Some(_), _) => ", histograms",
            (None, Some(CallGraph::FramePointer)) => ", frame-pointer stacks",
            (None, Some(CallGraph::Dwarf { .. })) => ", dwarf stacks",
            (None, None) => "",
        };
        format!("{}{mode}", events.join(", "))
    };
    let (odd_text, usual_text) = (describe(odd), describe(usual));
    let (odd_text, usual_text) = match odd_text == usual_text {
        true => (
            "other event settings".to_owned(),
            "the others' (see their headers)".to_owned(),
        ),
        false => (odd_text, usual_text),
    };
    Err(ReportError::Job(format!(
        "{} was recorded with {odd_text}, {} with {usual_text}: a job's recordings must \
         sample alike; read rank {} alone with -i {}",
        named(odd),
        named(usual),
        odd.rank,
        odd.recording.path().display()
    )))
}

/// The file name of each program the members ran, with its build-id where
/// the recording knows it.
fn program_build(member: &Member) -> Option<(String, BuildId)> {
    let recording = &member.recording;
    let program = recording.header.program.as_deref()?;
    let module = (recording.trailer.modules.iter()).find(|m| m.path == program)?;
    let name = program.rsplit('/').next().unwrap_or(program).to_owned();
    Some((name, module.build_id.clone()?))
}

/// Ranks that ran one program (by file name) must have run one build of
/// it; ranks of other programs (an MPMD job) are left be.
fn check_builds(members: &[Member]) -> Result<(), ReportError> {
    let mut by_program: BTreeMap<String, Vec<(&Member, BuildId)>> = BTreeMap::new();
    for member in members {
        if let Some((name, build)) = program_build(member) {
            by_program.entry(name).or_default().push((member, build));
        }
    }
    for (program, builds) in by_program {
        let ids: Vec<&BuildId> = builds.iter().map(|(_, id)| id).collect();
        let count = |id: &BuildId| ids.iter().filter(|other| **other == id).count();
        let Some(most) = (0..ids.len()).max_by_key(|&i| (count(ids[i]), std::cmp::Reverse(i)))
        else {
            continue;
        };
        if let Some(odd) = (0..ids.len()).find(|&i| ids[i] != ids[most]) {
            return Err(ReportError::Job(format!(
                "{} ran another build of {program} (build-id {}) than {} (build-id {}): a job's \
                 recordings must be of one build; read rank {} alone with -i {}",
                named(builds[odd].0),
                ids[odd],
                named(builds[most].0),
                ids[most],
                builds[odd].0.rank,
                builds[odd].0.recording.path().display()
            )));
        }
    }
    Ok(())
}

fn check_job_ids(members: &[Member]) -> Result<(), ReportError> {
    let mut with_id = members.iter().filter_map(|m| Some((m, job_id(m)?)));
    let Some((first, id)) = with_id.next() else {
        return Ok(());
    };
    if let Some((odd, other)) = with_id.find(|(_, other)| other != &id) {
        return Err(ReportError::Job(format!(
            "{} belongs to job {other}, {} to job {id}: read one job's recordings at a time",
            named(odd),
            named(first),
        )));
    }
    Ok(())
}

fn job_id(member: &Member) -> Option<&str> {
    member.recording.header.job.as_ref()?.job_id.as_deref()
}

/// The job's header and trailer as one recording's.
fn stand_in(members: &[Member]) -> Recording {
    let first = &members[0].recording;
    let mut header: RecordingHeader = first.header.clone();
    let launched = (members.iter()).find_map(|m| m.recording.header.job.clone());
    header.job = Some(JobInfo {
        rank: None,
        size: Some(members.len() as u32),
        ..launched.unwrap_or_default()
    });
    let mut trailer = Trailer {
        outcome: outcome(members),
        ..Trailer::default()
    };
    for member in members {
        add_trailer(&mut trailer, &member.recording.trailer);
    }
    trailer.modules.sort();
    trailer.modules.dedup();
    let source = Box::new(RankByRank {
        path: first.path().to_owned(),
    });
    Recording::from_source(first.path(), header, trailer, source)
}

fn add_trailer(total: &mut Trailer, trailer: &Trailer) {
    let stats = &mut total.stats;
    if stats.events.len() < trailer.stats.events.len() {
        stats
            .events
            .resize(trailer.stats.events.len(), Default::default());
    }
    for (sum, event) in stats.events.iter_mut().zip(&trailer.stats.events) {
        sum.samples = sum.samples.saturating_add(event.samples);
        sum.period = sum.period.saturating_add(event.period);
        sum.lost = sum.lost.saturating_add(event.lost);
        sum.throttled = sum.throttled.saturating_add(event.throttled);
    }
    stats.processes = stats.processes.saturating_add(trailer.stats.processes);
    stats.threads = stats.threads.saturating_add(trailer.stats.threads);
    total.modules.extend(trailer.modules.iter().cloned());
    total.duration_ns = total.duration_ns.max(trailer.duration_ns);
    add_totals(&mut total.histogram_totals, &trailer.histogram_totals);
}

/// How the ranks' commands ended: `exited with status 0`, where every rank
/// says so, else each outcome with its ranks.
fn outcome(members: &[Member]) -> String {
    let mut by_outcome: Vec<(&str, Vec<u32>)> = Vec::new();
    for member in members {
        let outcome = member.recording.trailer.outcome.as_str();
        match by_outcome.iter_mut().find(|(o, _)| *o == outcome) {
            Some((_, ranks)) => ranks.push(member.rank),
            None => by_outcome.push((outcome, vec![member.rank])),
        }
    }
    if let [(outcome, _)] = &by_outcome[..] {
        return (*outcome).to_owned();
    }
    let parts: Vec<String> = (by_outcome.iter())
        .map(|(outcome, ranks)| format!("{outcome} on {}", rank_list(ranks)))
        .collect();
    parts.join(", ")
}

/// `rank 3`, `ranks 0, 1 and 5`, `ranks 0 to 9`: a few ranks, or a run.
pub(crate) fn rank_list(ranks: &[u32]) -> String {
    match ranks {
        [] => "no rank".to_owned(),
        [one] => format!("rank {one}"),
        [first, .., last] if (*last - *first) as usize + 1 == ranks.len() => {
            format!("ranks {first} to {last}")
        }
        _ => {
            const LISTED: usize = 6;
            let listed: Vec<String> = ranks.iter().take(LISTED).map(u32::to_string).collect();
            match ranks.len() > LISTED {
                true => format!(
                    "ranks {} and {} more",
                    listed.join(", "),
                    ranks.len() - LISTED
                ),
                false => {
                    let (last, rest) = listed.split_last().map_or(("", &[][..]), |(l, r)| (l, r));
                    format!("ranks {} and {last}", rest.join(", "))
                }
            }
        }
    }
}

/// The stand-in's records: none, read whole; each rank's are read instead.
#[derive(Debug)]
struct RankByRank {
    path: PathBuf,
}

impl RecordSource for RankByRank {
    fn records(&self) -> Result<SourceRecords, RecordingError> {
        Err(RecordingError::Unreadable {
            path: self.path.clone(),
            what: "a job's records are read one rank at a time".into(),
        })
    }
}

/// `work` on each of `items`, on as many threads as there are CPUs (at
/// most one per item); the results in the order of `items`.
pub(crate) fn in_parallel<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = threads.min(items.len()).max(1);
    let next = AtomicUsize::new(0);
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let index = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(index) else {
                            break done;
                        };
                        done.push((index, work(item)));
                    }
                })
            })
            .collect();
        (workers.into_iter())
            .flat_map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    done.sort_unstable_by_key(|(index, _)| *index);
    done.into_iter().map(|(_, result)| result).collect()
}

/// Adds histogram totals `more` to `sum`, event by event.
pub(crate) fn add_totals(sum: &mut Vec<HistogramTotals>, more: &[HistogramTotals]) {
    if sum.len() < more.len() {
        sum.resize(more.len(), HistogramTotals::default());
    }
    for (sum, each) in sum.iter_mut().zip(more) {
        sum.in_region = sum.in_region.saturating_add(each.in_region);
        sum.outside = sum.outside.saturating_add(each.outside);
        sum.saturated = sum.saturated.saturating_add(each.saturated);
        sum.dropped = sum.dropped.saturating_add(each.dropped);
    }
}
