//! The recordings a reading subcommand reads when given several: `-i`
//! more than once, a directory (its recordings), or a glob quoted against
//! the shell (`-i 'profiler.data.*'`), which a job of thousands of ranks
//! needs: expanded by the shell it would overflow the command line. They
//! are opened on every CPU and read as one job.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use profiler_model::{Recording, StackUnwinder, Symbolizer, open_regular};
use profiler_report::{Job, ReportError, StackOptions, StackProfile, read_job_stacks, read_stacks};

use crate::args::SymbolArgs;
use crate::messages::say;
use crate::symbols::with_symbolizer_for;

/// What `-i` named.
pub(crate) enum Inputs {
    /// One recording, named as itself: read as it always was.
    One(Recording),
    /// Several, or a directory or glob's: one job.
    Job(Job),
}

impl Inputs {
    /// The recording of `Inputs::One`, or the job's stand-in.
    pub(crate) fn recording(&self) -> &Recording {
        match self {
            Inputs::One(recording) => recording,
            Inputs::Job(job) => job.recording(),
        }
    }
}

impl Inputs {
    /// The recording of `rank` alone (`--rank R`), if one is asked for.
    pub(crate) fn only_rank(self, rank: Option<u32>) -> Result<Inputs> {
        let Some(rank) = rank else {
            return Ok(self);
        };
        match self {
            Inputs::Job(job) => Ok(Inputs::One(job.into_rank(rank)?)),
            Inputs::One(recording) => {
                let own = recording.header.job.as_ref().and_then(|job| job.rank);
                match own == Some(rank) || (own.is_none() && rank == 0) {
                    true => Ok(Inputs::One(recording)),
                    false => bail!(
                        "--rank {rank}: {} is the recording of {}; give the job's recordings                          with -i (a directory or a quoted glob)",
                        recording.path().display(),
                        own.map_or_else(
                            || "a run outside any job".to_owned(),
                            |r| format!("rank {r}")
                        )
                    ),
                }
            }
        }
    }

    /// The recordings, each with its archive, to name their code.
    pub(crate) fn recordings(&self) -> Vec<&Recording> {
        match self {
            Inputs::One(recording) => vec![recording],
            Inputs::Job(job) => job.ranks().map(|(_, recording)| recording).collect(),
        }
    }

    /// The samples that `options` selects, of one recording or of every
    /// rank of the job, named with the archives of all.
    pub(crate) fn read_stacks(
        &self,
        symbols: &SymbolArgs,
        options: &StackOptions,
    ) -> Result<StackProfile> {
        let recordings = self.recordings();
        let stacks = with_symbolizer_for(symbols, &recordings, |symbolizer, unwinder| {
            self.read_with(symbolizer, unwinder, options)
        })?;
        Ok(stacks)
    }

    /// [`Inputs::read_stacks`] with the given symbolizer and unwinder.
    pub(crate) fn read_with(
        &self,
        symbolizer: &dyn Symbolizer,
        unwinder: &dyn StackUnwinder,
        options: &StackOptions,
    ) -> Result<StackProfile, ReportError> {
        match self {
            Inputs::One(recording) => read_stacks(recording, symbolizer, unwinder, options),
            Inputs::Job(job) => read_job_stacks(job, symbolizer, unwinder, options),
        }
    }
}

/// Opens what `given` names; `as_job` reads even one recording as a job.
pub(crate) fn open_inputs(given: &[PathBuf], as_job: bool) -> Result<Inputs> {
    let mut paths = Vec::new();
    let mut several = given.len() > 1;
    for path in given {
        let expanded = expand(path)?;
        several |= expanded.len() != 1 || expanded.first() != Some(path);
        paths.extend(expanded);
    }
    if !several && !as_job {
        let path = paths
            .first()
            .map_or(Path::new("profiler.data"), PathBuf::as_path);
        return Ok(Inputs::One(crate::input::open(path)?));
    }
    paths.sort();
    paths.dedup();
    let recordings = Job::open_with(&paths, crate::input::open)?;
    let job = Job::new(recordings)?;
    let missing = job.missing_ranks();
    if !missing.is_empty() {
        say!(
            "profiler: warning: the job had {} ranks; {} of them have no recording here: {}",
            job.len() + missing.len(),
            missing.len(),
            list(&missing)
        );
    }
    Ok(Inputs::Job(job))
}

/// `1, 2, 5 and 3 more`.
fn list(ranks: &[u32]) -> String {
    const LISTED: usize = 8;
    let shown: Vec<String> = ranks.iter().take(LISTED).map(u32::to_string).collect();
    match ranks.len() > LISTED {
        true => format!("{} and {} more", shown.join(", "), ranks.len() - LISTED),
        false => shown.join(", "),
    }
}

/// The recordings `path` names: itself, a directory's, or a glob's.
fn expand(path: &Path) -> Result<Vec<PathBuf>> {
    // A directory that `perf record --threads` wrote is one recording,
    // which the reader refuses saying so.
    if path.is_dir() && !profiler_perfdata::is_perf_data(path) {
        return directory(path);
    }
    let text = path.to_string_lossy();
    if path.symlink_metadata().is_ok() || !text.contains(['*', '?', '[']) {
        return Ok(vec![path.to_owned()]);
    }
    let options = glob::MatchOptions {
        require_literal_leading_dot: true,
        ..glob::MatchOptions::new()
    };
    let matches = match glob::glob_with(&text, options) {
        Ok(matches) => matches,
        Err(error) => bail!("-i {text}: {error}; quote a glob such as 'profiler.data.*'"),
    };
    let found: Vec<PathBuf> = matches
        .filter_map(|entry| entry.ok())
        .filter(|path| !path.is_dir())
        .collect();
    if found.is_empty() {
        bail!("-i {text} matches no file; record with mpirun or srun first, or name the files");
    }
    Ok(found)
}

/// The recordings in directory `dir`: its regular files, not hidden, that
/// start with a recording's signature (others, such as a job's output
/// files, are left be).
fn directory(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) => bail!("cannot read the directory {}: {error}", dir.display()),
    };
    let mut found: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok())
        .filter(|entry| !entry.file_name().to_string_lossy().starts_with('.'))
        .filter(|entry| entry.file_type().is_ok_and(|t| t.is_file()))
        .map(|entry| entry.path())
        .filter(|path| is_recording(path))
        .collect();
    found.sort();
    if found.is_empty() {
        bail!(
            "{} holds no recording; name the recordings with -i FILE or a quoted glob",
            dir.display()
        );
    }
    Ok(found)
}

/// Whether the file at `path` starts with the profiler's signature. Opened
/// without waiting, and only if regular.
fn is_recording(path: &Path) -> bool {
    let mut magic = [0u8; 8];
    open_regular(path).is_ok_and(|mut file| file.read_exact(&mut magic).is_ok())
        && &magic == b"PROFILER"
}
