//! `record` as one rank of a parallel job (under `mpirun`, `srun`, a batch
//! system): the name each rank writes, from `-o`'s patterns (`%r` the
//! rank, `%s` the job's size, `%h` the host, `%p` the pid, `%j` the job id,
//! `%%`), and who speaks: rank 0 says what every rank would, the others
//! only what is wrong with them.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use profiler_model::JobInfo;

use crate::messages::say;
use crate::output::is_stdout;

/// The job this `record` is a rank of, as its environment says.
#[derive(Debug, Default)]
pub(crate) struct RankedRecord {
    pub(crate) job: Option<JobInfo>,
}

impl RankedRecord {
    pub(crate) fn from_env() -> RankedRecord {
        RankedRecord {
            job: JobInfo::from_env(|name| std::env::var(name).ok()),
        }
    }

    /// The rank, when a launcher told one.
    pub(crate) fn rank(&self) -> Option<u32> {
        self.job.as_ref().and_then(|job| job.rank)
    }

    /// Whether this process says what every rank would say: rank 0, or a
    /// process outside any job.
    pub(crate) fn speaks_for_all(&self) -> bool {
        self.rank().is_none_or(|rank| rank == 0)
    }

    /// A notice every rank would give alike: said by rank 0 alone.
    pub(crate) fn notice(&self, line: &str) {
        if self.speaks_for_all() {
            say!("profiler: {line}");
        }
    }

    /// Something wrong with this rank's recording: said by every rank,
    /// naming itself.
    pub(crate) fn problem(&self, line: &str) {
        match self.rank().filter(|_| !self.speaks_for_all()) {
            Some(rank) => say!("profiler: rank {rank}: {line}"),
            None => say!("profiler: {line}"),
        }
    }

    /// Where this rank writes, given `-o` as `given` (`typed`: by the user,
    /// not the default), on `host`, as process `pid`; with the notice rank
    /// 0 gives when the name was made a rank's.
    pub(crate) fn output(
        &self,
        given: &Path,
        typed: bool,
        host: &str,
        pid: u32,
    ) -> Result<PathBuf> {
        if is_stdout(given) {
            return Ok(given.to_owned());
        }
        let values = Values {
            job: self.job.as_ref(),
            host,
            pid,
        };
        let (expanded, has_rank) = expand(given, &values)?;
        let Some(rank) = self.job.as_ref().and_then(JobInfo::padded_rank) else {
            return Ok(expanded);
        };
        if has_rank || !is_regular_name(&expanded) {
            return Ok(expanded);
        }
        let mut named = expanded.clone().into_os_string();
        named.push(format!(".{rank}"));
        let named = PathBuf::from(named);
        self.notice(&self.rank_notice(&expanded, typed));
        Ok(named)
    }

    /// What rank 0 says when each rank's name gets its rank.
    fn rank_notice(&self, base: &Path, typed: bool) -> String {
        let job = self.job.clone().unwrap_or_default();
        let launcher = job.launcher.as_deref().unwrap_or("the launcher");
        let base = base.display();
        let names = match job.size {
            Some(size) if size > 1 => {
                let last = JobInfo {
                    rank: Some(size - 1),
                    ..job.clone()
                };
                let last = last.padded_rank().unwrap_or_default();
                let first = "0".repeat(last.len());
                format!("{base}.{first} to {base}.{last}")
            }
            _ => format!("{base}.RANK"),
        };
        let why = match typed {
            true => format!("-o {base} has no %r"),
            false => format!("a job of {} ({launcher})", ranks(job.size)),
        };
        format!(
            "{why}: each rank writes its own recording, {names}; read them together with \
             `profiler report -i '{base}.*'`"
        )
    }
}

/// `4 ranks`, or `ranks` where the size is not known.
fn ranks(size: Option<u32>) -> String {
    match size {
        Some(1) => "1 rank".to_owned(),
        Some(n) => format!("{n} ranks"),
        None => "ranks".to_owned(),
    }
}

/// Whether `path` would be a file of its own, to which a rank can be
/// added: not a device, FIFO or socket there already, nor a descriptor's
/// name.
fn is_regular_name(path: &Path) -> bool {
    let bytes = path.as_os_str().as_bytes();
    if bytes.starts_with(b"/dev/") || bytes.starts_with(b"/proc/") {
        return false;
    }
    std::fs::metadata(path).map_or(true, |meta| meta.is_file())
}

/// What the patterns stand for.
struct Values<'a> {
    job: Option<&'a JobInfo>,
    host: &'a str,
    pid: u32,
}

/// `pattern` with its `%` sequences replaced, and whether it held `%r`.
/// Outside a job `%r` is 0 and `%s` 1, as a program started without a
/// launcher is the only rank of its MPI job.
fn expand(pattern: &Path, values: &Values<'_>) -> Result<(PathBuf, bool)> {
    let refuse =
        |why: String| -> Result<(PathBuf, bool)> { bail!("-o {}: {why}", pattern.display()) };
    const KNOWN: &str = "use %r (rank), %s (job size), %h (host), %p (pid), %j (job id) or %%";
    let mut out: Vec<u8> = Vec::new();
    let mut has_rank = false;
    let mut bytes = pattern.as_os_str().as_bytes().iter();
    while let Some(&byte) = bytes.next() {
        if byte != b'%' {
            out.push(byte);
            continue;
        }
        let value = match bytes.next() {
            Some(b'%') => "%".to_owned(),
            Some(b'r') => {
                has_rank = true;
                match values.job {
                    Some(job) if job.rank.is_some() => job.padded_rank().unwrap_or_default(),
                    _ => "0".to_owned(),
                }
            }
            Some(b's') => match values.job {
                Some(job) if job.rank.is_some() => match job.size {
                    Some(size) => size.to_string(),
                    None => {
                        return refuse(format!(
                            "%s: {} does not say the job's size",
                            job.launcher.as_deref().unwrap_or("the launcher")
                        ));
                    }
                },
                _ => "1".to_owned(),
            },
            Some(b'h') => file_safe(values.host),
            Some(b'p') => values.pid.to_string(),
            Some(b'j') => match values.job.and_then(|job| job.job_id.as_deref()) {
                Some(id) => file_safe(id),
                None => {
                    return refuse(
                        "%j: no job id in the environment (SLURM_JOB_ID, PBS_JOBID); leave out %j"
                            .to_owned(),
                    );
                }
            },
            Some(&other) => {
                let other = String::from_utf8_lossy(&[other]).into_owned();
                return refuse(format!("unknown %{}; {KNOWN}", other.escape_debug()));
            }
            None => return refuse(format!("a % ends it; {KNOWN}, and %% for a %")),
        };
        out.extend_from_slice(value.as_bytes());
    }
    Ok((PathBuf::from(OsString::from_vec(out)), has_rank))
}

/// `text` as a part of a file name: no `/`, no control character, not `.`
/// or `..`, each such character an `_`. Host names and job ids come from
/// the environment, which another user's job script may set.
fn file_safe(text: &str) -> String {
    let safe: String = (text.chars())
        .map(|c| match c {
            '/' | '\\' => '_',
            c if c.is_control() => '_',
            c => c,
        })
        .collect();
    match safe.as_str() {
        "" | "." | ".." => "_".repeat(safe.len().max(1)),
        _ => safe,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(rank: Option<u32>, size: Option<u32>, job_id: Option<&str>) -> JobInfo {
        JobInfo {
            rank,
            size,
            job_id: job_id.map(str::to_owned),
            launcher: rank.map(|_| "Slurm".to_owned()),
        }
    }

    fn expanded(pattern: &str, job: Option<&JobInfo>) -> Result<String> {
        let values = Values {
            job,
            host: "node07",
            pid: 4242,
        };
        let (path, _) = expand(Path::new(pattern), &values)?;
        Ok(path.display().to_string())
    }

    #[test]
    fn every_pattern_is_replaced() {
        let j = job(Some(3), Some(16), Some("81234"));
        assert_eq!(
            expanded("out/%j/run.%r-of-%s.%h.%p.%%.data", Some(&j)).unwrap(),
            "out/81234/run.03-of-16.node07.4242.%.data"
        );
        assert_eq!(expanded("plain.data", Some(&j)).unwrap(), "plain.data");
    }

    #[test]
    fn outside_a_job_the_process_is_rank_0_of_1() {
        assert_eq!(expanded("run.%r.%s.data", None).unwrap(), "run.0.1.data");
        let batch = job(None, None, Some("4711.pbs"));
        assert_eq!(
            expanded("run.%j.%r.data", Some(&batch)).unwrap(),
            "run.4711.pbs.0.data"
        );
    }

    #[test]
    fn what_cannot_be_told_is_refused_in_one_line() {
        let error = |pattern, job| expanded(pattern, job).unwrap_err().to_string();
        let no_id = error("run.%j.data", None);
        assert!(
            no_id.starts_with("-o run.%j.data: %j: no job id"),
            "{no_id}"
        );
        assert!(error("run.%x", None).contains("unknown %x"));
        assert!(error("run.%", None).contains("a % ends it"));
        let pmix = JobInfo {
            launcher: Some("PMIx".into()),
            ..job(Some(1), None, None)
        };
        assert!(error("%s", Some(&pmix)).contains("PMIx does not say the job's size"));
        assert!(!error("run.%x", None).contains('\n'));
    }

    #[test]
    fn values_from_the_environment_stay_one_file_name() {
        let hostile = job(Some(0), Some(2), Some("../../etc/passwd"));
        assert_eq!(
            expanded("run.%j", Some(&hostile)).unwrap(),
            "run..._.._etc_passwd"
        );
        assert_eq!(file_safe(".."), "__");
        assert_eq!(file_safe("a\nb"), "a_b");
        assert_eq!(file_safe(""), "_");
    }

    #[test]
    fn a_rank_is_added_to_a_name_without_one() {
        let ranked = RankedRecord {
            job: Some(job(Some(2), Some(12), None)),
        };
        let output = |given: &str, typed| {
            (ranked.output(Path::new(given), typed, "h", 1).unwrap())
                .display()
                .to_string()
        };
        assert_eq!(output("profiler.data", false), "profiler.data.02");
        assert_eq!(output("run.data", true), "run.data.02");
        assert_eq!(output("run.%r.data", true), "run.02.data");
        assert_eq!(output("-", true), "-");
        assert_eq!(output("/dev/null", true), "/dev/null");
        let alone = RankedRecord::default();
        let path = alone.output(Path::new("profiler.data"), false, "h", 1);
        assert_eq!(path.unwrap(), Path::new("profiler.data"));
    }

    #[test]
    fn rank_0_names_the_files_every_rank_writes() {
        let ranked = RankedRecord {
            job: Some(job(Some(0), Some(12), None)),
        };
        let notice = ranked.rank_notice(Path::new("profiler.data"), false);
        assert_eq!(
            notice,
            "a job of 12 ranks (Slurm): each rank writes its own recording, profiler.data.00 \
             to profiler.data.11; read them together with `profiler report -i \
             'profiler.data.*'`"
        );
        let typed = ranked.rank_notice(Path::new("run.data"), true);
        assert!(typed.starts_with("-o run.data has no %r"), "{typed}");
    }
}
