//! Recording under MPI launchers: one recording per rank, named by the
//! launcher's variables (set here by hand for each launcher, and by a real
//! `mpirun` of Open MPI), notices from rank 0 alone, PROFILER_OPTIONS, and
//! a job's imbalance read back from its recordings.

use std::path::Path;
use std::process::{Command, Output};

use profiler_model::{JobInfo, Recording, Sampling};
use serde_json::Value;

use crate::util::*;

/// Every variable a launcher or batch system sets that the profiler reads:
/// cleared for each test, which sets its own.
const LAUNCHER_VARIABLES: &[&str] = &[
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE",
    "MV2_COMM_WORLD_RANK",
    "MV2_COMM_WORLD_SIZE",
    "PMI_RANK",
    "PMI_SIZE",
    "PMIX_RANK",
    "SLURM_PROCID",
    "SLURM_NTASKS",
    "SLURM_JOB_ID",
    "PBS_JOBID",
    "PROFILER_OPTIONS",
];

/// Environment variables a launcher sets, by name.
type Vars<'a> = &'a [(&'a str, &'a str)];

/// The profiler in `dir`, as a rank whose launcher set `vars`.
fn as_rank(dir: &Path, vars: &[(&str, &str)]) -> Command {
    let mut command = profiler();
    command.current_dir(dir);
    for name in LAUNCHER_VARIABLES {
        command.env_remove(name);
    }
    command.envs(vars.iter().copied());
    command
}

fn record_as(dir: &Path, vars: &[(&str, &str)], args: &[&str]) -> Output {
    let output = (as_rank(dir, vars).arg("record").args(args))
        .output()
        .unwrap();
    assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    output
}

fn job_of(path: &Path) -> Option<JobInfo> {
    Recording::open(path).unwrap().header.job
}

fn place(rank: u32, size: Option<u32>, job_id: Option<&str>, launcher: &str) -> JobInfo {
    JobInfo {
        rank: Some(rank),
        size,
        job_id: job_id.map(str::to_owned),
        launcher: Some(launcher.to_owned()),
    }
}

live_test!(
    each_launchers_variables_name_the_rank_and_its_recording,
    || {
        let dir = scratch("mpi-launchers");
        let cases: &[(Vars, &str, JobInfo)] = &[
            (
                &[("OMPI_COMM_WORLD_RANK", "2"), ("OMPI_COMM_WORLD_SIZE", "4")],
                "profiler.data.2",
                place(2, Some(4), None, "Open MPI"),
            ),
            (
                &[("PMI_RANK", "5"), ("PMI_SIZE", "12")],
                "profiler.data.05",
                place(5, Some(12), None, "MPICH/Hydra"),
            ),
            (
                &[("MV2_COMM_WORLD_RANK", "7"), ("MV2_COMM_WORLD_SIZE", "8")],
                "profiler.data.7",
                place(7, Some(8), None, "MVAPICH"),
            ),
            (
                &[("PMIX_RANK", "3")],
                "profiler.data.3",
                place(3, None, None, "PMIx"),
            ),
            (
                &[
                    ("SLURM_PROCID", "11"),
                    ("SLURM_NTASKS", "16"),
                    ("SLURM_JOB_ID", "81234"),
                ],
                "profiler.data.11",
                place(11, Some(16), Some("81234"), "Slurm"),
            ),
            (
                &[
                    ("PBS_JOBID", "4711.pbs"),
                    ("OMPI_COMM_WORLD_RANK", "0"),
                    ("OMPI_COMM_WORLD_SIZE", "2"),
                ],
                "profiler.data.0",
                place(0, Some(2), Some("4711.pbs"), "Open MPI"),
            ),
        ];
        for (vars, name, expected) in cases {
            record_as(&dir, vars, &["--", "true"]);
            let path = dir.join(name);
            assert!(path.exists(), "{vars:?} wrote no {name}");
            assert_eq!(job_of(&path).as_ref(), Some(expected), "{vars:?}");
        }
        // Outside any launcher: profiler.data, and no job in the header.
        record_as(&dir, &[], &["--", "true"]);
        assert_eq!(job_of(&dir.join("profiler.data")), None);
    }
);

live_test!(o_patterns_name_each_ranks_file_as_srun_tells_it, || {
    let dir = scratch("mpi-patterns");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let slurm = [
        ("SLURM_PROCID", "3"),
        ("SLURM_NTASKS", "10"),
        ("SLURM_JOB_ID", "555"),
    ];
    std::fs::create_dir(dir.join("job555")).unwrap();
    record_as(
        &dir,
        &slurm,
        &["-o", "job%j/rank%r-of-%s.%h.%%.data", "--", "true"],
    );
    let name = format!("job555/rank3-of-10.{}.%.data", host.trim());
    assert!(dir.join(&name).exists(), "no {name}");
    // A name without %r gets the rank, whatever was typed.
    record_as(&dir, &slurm, &["-o", "mine.data", "--", "true"]);
    assert!(dir.join("mine.data.3").exists());
    // %j without a job id is refused before the command runs.
    let output = (as_rank(&dir, &[]).args(["record", "-o", "run.%j", "--", "touch", "ran"]))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(125));
    assert_eq!(
        stderr(&output),
        "profiler: -o run.%j: %j: no job id in the environment (SLURM_JOB_ID, PBS_JOBID); leave \
         out %j\n"
    );
    assert!(!dir.join("ran").exists());
});

live_test!(rank_0_speaks_for_all_and_the_others_only_of_trouble, || {
    let dir = scratch("mpi-voices");
    fn rank(r: &str) -> [(&str, &str); 2] {
        [("OMPI_COMM_WORLD_RANK", r), ("OMPI_COMM_WORLD_SIZE", "2")]
    }
    let zero = record_as(&dir, &rank("0"), &["--", "true"]);
    let said = stderr(&zero);
    assert!(
        said.contains(
            "profiler: a job of 2 ranks (Open MPI): each rank writes its own recording, \
             profiler.data.0 to profiler.data.1; read them together with `profiler report -i \
             'profiler.data.*'`"
        ),
        "{said}"
    );
    assert!(said.contains("wrote profiler.data.0"), "{said}");
    let one = record_as(&dir, &rank("1"), &["--", "true"]);
    assert_eq!(stderr(&one), "");
    assert!(dir.join("profiler.data.1").exists());
    // A rank whose command fails says so, naming itself.
    let failing = (as_rank(&dir, &rank("1")).args(["record", "--", "false"]))
        .output()
        .unwrap();
    assert_eq!(failing.status.code(), Some(1));
    let said = stderr(&failing);
    assert!(said.starts_with("profiler: rank 1: "), "{said}");
    assert!(said.contains("command exited with status 1"), "{said}");
    assert_eq!(said.lines().count(), 1, "{said}");
});

live_test!(profiler_options_set_every_ranks_options, || {
    let dir = scratch("mpi-options");
    let vars = [
        ("OMPI_COMM_WORLD_RANK", "1"),
        ("OMPI_COMM_WORLD_SIZE", "2"),
        ("PROFILER_OPTIONS", "-F 999 -o 'opt %r.data'"),
    ];
    record_as(&dir, &vars, &["--", "true"]);
    let sampling = |name: &str| {
        let recording = Recording::open(&dir.join(name)).unwrap();
        recording.header.events[0].sampling
    };
    assert_eq!(sampling("opt 1.data"), Sampling::Frequency(999));
    // The command line's own options win.
    record_as(&dir, &vars, &["-F", "500", "--", "true"]);
    assert_eq!(sampling("opt 1.data"), Sampling::Frequency(500));
    let bad = [("PROFILER_OPTIONS", "--no-such-option")];
    let output = (as_rank(&dir, &bad).args(["record", "--", "true"]))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let said = stderr(&output);
    assert!(
        said.starts_with("profiler: PROFILER_OPTIONS='--no-such-option': "),
        "{said}"
    );
    assert_eq!(said.lines().count(), 1, "{said}");
});

/// `mpirun -np 4` of Open MPI, as root too, more ranks than CPUs. The
/// fixtures find libprofiler by their rpath, not by the LD_LIBRARY_PATH
/// cargo sets, which may name an older build of it first.
fn mpirun(dir: &Path, args: &[&str]) -> Output {
    let output = Command::new("mpirun")
        .current_dir(dir)
        .args(["--allow-run-as-root", "--oversubscribe", "-np", "4"])
        .args(args)
        .env_remove("PROFILER_OPTIONS")
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "mpirun {args:?}: {}",
        stderr(&output)
    );
    output
}

fn row<'a>(rows: &'a Value, name: &str) -> &'a Value {
    (rows.as_array().unwrap().iter())
        .find(|row| row["function"] == name)
        .unwrap_or_else(|| panic!("no {name} in {rows:#}"))
}

live_test!(
    mpirun_gives_one_recording_per_rank_and_the_imbalance_reads_back,
    || {
        if !profiler_testing::tool("mpirun") {
            return;
        }
        let dir = scratch("mpi-imbalance");
        let imbalance = mpi_fixture("imbalance");
        let profiler = env!("CARGO_BIN_EXE_profiler");
        let recorded = mpirun(
            &dir,
            &[
                profiler,
                "record",
                "-o",
                "run.%r.data",
                "--",
                imbalance.to_str().unwrap(),
            ],
        );
        // One summary, rank 0's.
        let said = stderr(&recorded);
        assert_eq!(said.matches("wrote run.").count(), 1, "{said}");
        for rank in 0..4 {
            let job = job_of(&dir.join(format!("run.{rank}.data"))).unwrap();
            assert_eq!((job.rank, job.size), (Some(rank), Some(4)), "{job:?}");
            assert_eq!(job.launcher.as_deref(), Some("Open MPI"));
        }
        let ranks = run_json(
            &dir,
            &["report", "-i", "run.*.data", "--ranks", "--format", "json"],
        );
        let compute = row(&ranks["events"][0]["functions"], "compute");
        assert_eq!(compute["max_rank"], 0, "{ranks:#}");
        let imbalance_factor = compute["imbalance"].as_f64().unwrap();
        assert!(
            (imbalance_factor - 1.6).abs() <= 0.16,
            "compute's imbalance {imbalance_factor}, not 1.6 within 10%: {ranks:#}"
        );
        let by_rank = run_json(
            &dir,
            &[
                "report",
                "-i",
                "run.*.data",
                "--sort",
                "rank,sym",
                "--format",
                "json",
            ],
        );
        let compute_on = |rank: u64| {
            rank_function(&by_rank, "compute", rank)
                .and_then(|row| row["period"].as_f64())
                .unwrap_or_else(|| panic!("no compute of rank {rank}: {by_rank:#}"))
        };
        let zero = compute_on(0);
        for rank in 1..4 {
            let ratio = zero / compute_on(rank);
            assert!(
                (1.6..=2.4).contains(&ratio),
                "rank 0's compute is {ratio:.2}x rank {rank}'s, not near 2"
            );
        }
        // Without -o, the four default names.
        let plain = dir.join("plain");
        std::fs::create_dir(&plain).unwrap();
        mpirun(
            &plain,
            &[
                profiler,
                "record",
                "--",
                imbalance.to_str().unwrap(),
                "1",
                "2",
            ],
        );
        for rank in 0..4 {
            let job = job_of(&plain.join(format!("profiler.data.{rank}"))).unwrap();
            assert_eq!(job.rank, Some(rank));
        }
        assert!(!plain.join("profiler.data").exists());
    }
);

/// `compute`'s self seconds in gprof's flat profile of `gmon`.
fn gprof_compute_seconds(program: &Path, gmon: &Path) -> f64 {
    let output = Command::new("gprof")
        .args(["-p", "-b"])
        .arg(program)
        .arg(gmon)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "gprof {}: {}",
        gmon.display(),
        stderr(&output)
    );
    let flat = String::from_utf8(output.stdout).unwrap();
    (flat.lines())
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .find(|fields| fields.last() == Some(&"compute"))
        .and_then(|fields| fields.get(2)?.parse().ok())
        .unwrap_or_else(|| {
            panic!(
                "no compute in gprof's profile of {}:\n{flat}",
                gmon.display()
            )
        })
}

live_test!(the_c_library_saves_each_ranks_histogram_for_gprof, || {
    if !profiler_testing::tool("mpirun") || !profiler_testing::tool("gprof") {
        return;
    }
    let dir = scratch("mpi-capi");
    let program = capi_fixture("capi-mpi");
    mpirun(&dir, &[program.to_str().unwrap()]);
    assert!(!dir.join("gmon.out").exists());
    let seconds: Vec<f64> = (0..4)
        .map(|rank| gprof_compute_seconds(&program, &dir.join(format!("gmon.out.{rank}"))))
        .collect();
    for rank in 1..4 {
        let ratio = seconds[0] / seconds[rank];
        assert!(
            (1.6..=2.4).contains(&ratio),
            "rank 0's compute is {ratio:.2}x rank {rank}'s, not near 2: {seconds:?}"
        );
    }
});
