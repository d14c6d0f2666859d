//! Where a recording stands in a parallel job: its MPI rank, the job's
//! size and the batch system's job id, as the launchers tell each process
//! through its environment (`mpirun` of Open MPI, MPICH's Hydra, MVAPICH,
//! PMIx launchers, Slurm's `srun`; PBS's job id). The host is the header's
//! [`HostInfo::hostname`](crate::HostInfo::hostname).
//!
//! ```
//! use profiler_model::JobInfo;
//!
//! let env = [("OMPI_COMM_WORLD_RANK", "3"), ("OMPI_COMM_WORLD_SIZE", "16")];
//! let job = JobInfo::from_env(|name| {
//!     env.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string())
//! })
//! .unwrap();
//! assert_eq!((job.rank, job.size), (Some(3), Some(16)));
//! assert_eq!(job.padded_rank().as_deref(), Some("03"));
//! ```

use serde::{Deserialize, Serialize};

/// A recording's place in a job. Every field is optional: a serial run in a
/// batch job has a job id and no rank.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobInfo {
    /// The process's rank in the job (`MPI_COMM_WORLD`'s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
    /// How many ranks the job has, when the launcher says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u32>,
    /// The batch system's job id (Slurm's, PBS's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
    /// Whose variables told the rank: `Open MPI`, `Slurm`...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launcher: Option<String>,
}

/// A launcher's variables: its name, the rank's, the size's.
struct Launcher {
    name: &'static str,
    rank: &'static str,
    size: Option<&'static str>,
}

/// The launchers, the most specific first: an `mpirun` started inside a
/// Slurm allocation leaves the batch step's `SLURM_PROCID` (0) in every
/// rank's environment, beside its own variables, which must win.
const LAUNCHERS: &[Launcher] = &[
    Launcher {
        name: "Open MPI",
        rank: "OMPI_COMM_WORLD_RANK",
        size: Some("OMPI_COMM_WORLD_SIZE"),
    },
    Launcher {
        name: "MVAPICH",
        rank: "MV2_COMM_WORLD_RANK",
        size: Some("MV2_COMM_WORLD_SIZE"),
    },
    Launcher {
        name: "MPICH/Hydra",
        rank: "PMI_RANK",
        size: Some("PMI_SIZE"),
    },
    Launcher {
        name: "PMIx",
        rank: "PMIX_RANK",
        size: None,
    },
    Launcher {
        name: "Slurm",
        rank: "SLURM_PROCID",
        size: Some("SLURM_NTASKS"),
    },
];

/// The batch systems' job ids, in the order they are looked for.
const JOB_IDS: &[&str] = &["SLURM_JOB_ID", "PBS_JOBID"];

impl JobInfo {
    /// The job as the environment tells it (`var` looks a variable up);
    /// `None` outside any launcher and batch job.
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Option<JobInfo> {
        let number = |name: &str| var(name).and_then(|v| v.trim().parse::<u32>().ok());
        let mut job = JobInfo::default();
        for launcher in LAUNCHERS {
            let Some(rank) = number(launcher.rank) else {
                continue;
            };
            job.rank = Some(rank);
            job.launcher = Some(launcher.name.to_owned());
            job.size = match launcher.size {
                Some(size) => number(size),
                // `srun --mpi=pmix` says the size in Slurm's variables,
                // for the same rank.
                None if number("SLURM_PROCID") == Some(rank) => number("SLURM_NTASKS"),
                None => None,
            };
            break;
        }
        job.job_id = (JOB_IDS.iter())
            .filter_map(|name| var(name))
            .map(|id| id.trim().to_owned())
            .find(|id| !id.is_empty());
        (job != JobInfo::default()).then_some(job)
    }

    /// The rank, zero-padded to as many digits as the job's last rank has
    /// (`07` of 16 ranks), so that the names of a job's files sort by rank.
    pub fn padded_rank(&self) -> Option<String> {
        let rank = self.rank?;
        let last = self
            .size
            .map_or(rank, |size| size.saturating_sub(1).max(rank));
        let width = last.to_string().len();
        Some(format!("{rank:0width$}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(vars: &[(&str, &str)]) -> Option<JobInfo> {
        JobInfo::from_env(|name| {
            (vars.iter())
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    fn place(rank: u32, size: Option<u32>, launcher: &str) -> JobInfo {
        JobInfo {
            rank: Some(rank),
            size,
            job_id: None,
            launcher: Some(launcher.to_owned()),
        }
    }

    #[test]
    fn each_launcher_is_told_by_its_variables() {
        let open_mpi = [("OMPI_COMM_WORLD_RANK", "2"), ("OMPI_COMM_WORLD_SIZE", "4")];
        assert_eq!(from(&open_mpi), Some(place(2, Some(4), "Open MPI")));
        let mvapich = [("MV2_COMM_WORLD_RANK", "5"), ("MV2_COMM_WORLD_SIZE", "8")];
        assert_eq!(from(&mvapich), Some(place(5, Some(8), "MVAPICH")));
        let hydra = [("PMI_RANK", "1"), ("PMI_SIZE", "3")];
        assert_eq!(from(&hydra), Some(place(1, Some(3), "MPICH/Hydra")));
        assert_eq!(from(&[("PMIX_RANK", "7")]), Some(place(7, None, "PMIx")));
        let slurm = [("SLURM_PROCID", "9"), ("SLURM_NTASKS", "10")];
        assert_eq!(from(&slurm), Some(place(9, Some(10), "Slurm")));
    }

    #[test]
    fn the_launchers_own_variables_win_over_a_slurm_allocations() {
        // mpirun inside an sbatch script: every rank sees the batch step's
        // SLURM_PROCID 0.
        let vars = [
            ("SLURM_PROCID", "0"),
            ("SLURM_NTASKS", "64"),
            ("SLURM_JOB_ID", "81234"),
            ("OMPI_COMM_WORLD_RANK", "17"),
            ("OMPI_COMM_WORLD_SIZE", "32"),
            ("PMIX_RANK", "17"),
        ];
        let job = from(&vars).unwrap();
        assert_eq!((job.rank, job.size), (Some(17), Some(32)));
        assert_eq!(job.launcher.as_deref(), Some("Open MPI"));
        assert_eq!(job.job_id.as_deref(), Some("81234"));
    }

    #[test]
    fn srun_with_pmix_takes_the_size_from_slurm() {
        let vars = [
            ("PMIX_RANK", "3"),
            ("SLURM_PROCID", "3"),
            ("SLURM_NTASKS", "4"),
        ];
        assert_eq!(from(&vars), Some(place(3, Some(4), "PMIx")));
        let other_step = [
            ("PMIX_RANK", "3"),
            ("SLURM_PROCID", "0"),
            ("SLURM_NTASKS", "4"),
        ];
        assert_eq!(from(&other_step), Some(place(3, None, "PMIx")));
    }

    #[test]
    fn a_batch_job_without_ranks_has_its_id_alone() {
        let job = from(&[("PBS_JOBID", " 4711.server ")]).unwrap();
        assert_eq!(job.rank, None);
        assert_eq!(job.job_id.as_deref(), Some("4711.server"));
        assert_eq!(from(&[]), None);
        assert_eq!(from(&[("OMPI_COMM_WORLD_RANK", "two")]), None);
    }

    #[test]
    fn ranks_are_padded_to_the_last_ranks_digits() {
        let padded = |rank, size| place(rank, size, "Slurm").padded_rank().unwrap();
        assert_eq!(padded(3, Some(4)), "3");
        assert_eq!(padded(3, Some(11)), "03");
        assert_eq!(padded(42, Some(10_000)), "0042");
        assert_eq!(padded(12, None), "12");
        // A rank past the size the launcher gave is not cut.
        assert_eq!(padded(120, Some(16)), "120");
        assert_eq!(JobInfo::default().padded_rank(), None);
    }

    #[test]
    fn a_header_without_a_job_reads_and_a_job_round_trips() {
        let old = r#"{"events":[],"command":["./app"],"host":{"hostname":"h","kernel":"6.1",
            "arch":"x86_64","cpus":2},"start_unix_ns":0,"profiler_version":"0.1.0"}"#;
        let header: crate::RecordingHeader = serde_json::from_str(old).unwrap();
        assert_eq!(header.job, None);
        let job: JobInfo = serde_json::from_str("{}").unwrap();
        assert_eq!(job, JobInfo::default());
        let written = place(1, Some(2), "Slurm");
        let text = serde_json::to_string(&written).unwrap();
        assert_eq!(serde_json::from_str::<JobInfo>(&text).unwrap(), written);
    }
}
