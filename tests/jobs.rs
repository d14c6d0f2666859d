//! The recordings of a job (one per MPI rank) read as one profile, on
//! recordings written by hand over the stable fixture: every view on the
//! job, `--sort rank`, `--ranks`, one rank alone, and the recordings that
//! are not one job's refused, naming the odd rank.

use std::path::Path;

use profiler_model::{BuildId, JobInfo, Sampling};
use serde_json::Value;

use crate::golden::{assert_expected, normalize};
use crate::pprof_text::pprof_text;
use crate::synthetic::{Synthetic, function_range};
use crate::util::*;

/// Rank `rank` of a job of `size` ranks: `hot_a` samples (twice as many on
/// rank 0), 20 `hot_c` samples on every rank.
fn rank(rank: u32, size: u32) -> Synthetic {
    let hot_a = if rank == 0 { 200 } else { 100 };
    built(rank, size, BuildId(vec![0xab, 0xcd]), hot_a)
}

/// Rank `rank` with `hot_a` samples in `hot_a`, of a build of the program
/// with build-id `build`.
fn built(rank: u32, size: u32, build: BuildId, hot_a: u32) -> Synthetic {
    let exe = fixture("stable");
    let mut recording = Synthetic::new();
    recording.job = Some(JobInfo {
        rank: Some(rank),
        size: Some(size),
        job_id: Some("4711".into()),
        launcher: Some("Open MPI".into()),
    });
    recording.host = Some(format!("node{}", rank / 2));
    recording.build_id = Some(build);
    recording.program = Some(exe.to_str().unwrap().to_owned());
    let pid = 100 + rank;
    recording.process(pid, 0, "stable", &exe);
    let hot_a_at = function_range(&exe, "hot_a").0;
    let hot_c_at = function_range(&exe, "hot_c").0;
    recording.samples(pid, hot_a_at + 4, &[], hot_a);
    recording.samples(pid, hot_c_at + 4, &[], 20);
    recording
}

/// Writes the four ranks into `dir` as `run.RANK.data`.
fn write_job(dir: &Path) {
    for r in 0..4 {
        rank(r, 4).write(&dir.join(format!("run.{r}.data")), &["stable"]);
    }
}

fn stdout(dir: &Path, args: &[&str]) -> String {
    String::from_utf8(run_ok(dir, args).stdout).unwrap()
}

fn function<'a>(rows: &'a Value, name: &str) -> &'a Value {
    (rows.as_array().unwrap().iter())
        .find(|row| row["function"] == name)
        .unwrap_or_else(|| panic!("no {name} in {rows:#}"))
}

#[test]
fn a_jobs_recordings_read_as_one_profile() {
    let dir = scratch("job-report");
    write_job(&dir);
    // A quoted glob, a directory, and each file named: the same job.
    let by_glob = stdout(&dir, &["report", "-i", "run.*.data"]);
    let by_dir = stdout(&dir, &["report", "-i", "."]);
    let by_name = stdout(
        &dir,
        &[
            "report",
            "-i",
            "run.2.data",
            "-i",
            "run.0.data",
            "-i",
            "run.3.data",
            "-i",
            "run.1.data",
        ],
    );
    assert_eq!(by_glob, by_dir);
    assert_eq!(by_glob, by_name);
    assert_expected("job/report.txt", normalize(&by_glob, &dir).as_bytes());
    let json = run_json(&dir, &["report", "-i", "run.*.data", "--format", "json"]);
    let hot_a = &json["functions"][0];
    assert_eq!(
        (&hot_a["name"], &hot_a["self"]),
        (&"hot_a".into(), &500.into())
    );
    assert_eq!(
        json["ranks"][3],
        serde_json::json!({"rank": 3, "host": "node1"})
    );
}

#[test]
fn sort_rank_tells_the_ranks_apart() {
    let dir = scratch("job-sort-rank");
    write_job(&dir);
    let text = stdout(&dir, &["report", "-i", "run.*.data", "--sort", "rank,sym"]);
    assert_expected("job/sort-rank-sym.txt", normalize(&text, &dir).as_bytes());
    let json = run_json(
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
    let hot_a = |rank: u64| rank_function(&json, "hot_a", rank).unwrap()["self"].as_u64();
    assert_eq!(
        (hot_a(0), hot_a(1), hot_a(3)),
        (Some(200), Some(100), Some(100))
    );
    // One recording, sorted by rank: its own rank.
    let one = run_json(
        &dir,
        &[
            "report",
            "-i",
            "run.2.data",
            "--sort",
            "rank",
            "--format",
            "json",
        ],
    );
    assert_eq!(one["tasks"][0]["rank"], 2, "{one:#}");
}

#[test]
fn ranks_shows_the_imbalance_of_each_function() {
    let dir = scratch("job-ranks");
    write_job(&dir);
    let text = stdout(&dir, &["report", "-i", "run.*.data", "--ranks"]);
    assert_expected("job/ranks.txt", normalize(&text, &dir).as_bytes());
    let json = run_json(
        &dir,
        &["report", "-i", "run.*.data", "--ranks", "--format", "json"],
    );
    assert_expected(
        "job/ranks.json",
        serde_json::to_string_pretty(&json).unwrap().as_bytes(),
    );
    let rows = &json["events"][0]["functions"];
    let hot_a = function(rows, "hot_a");
    assert_eq!(hot_a["max_rank"], 0);
    assert_eq!(hot_a["imbalance"], 1.6);
    let hot_c = function(rows, "hot_c");
    assert_eq!(
        (&hot_c["imbalance"], &hot_c["lost"]),
        (&1.0.into(), &0.0.into())
    );
    // The costliest imbalance first.
    assert_eq!(rows[0]["function"], "hot_a");
}

#[test]
fn every_view_reads_the_job_and_one_rank_alone() {
    let dir = scratch("job-views");
    write_job(&dir);
    let folded = |extra: &[&str]| {
        let mut args = vec!["export", "--format", "folded", "-i", "run.*.data"];
        args.extend_from_slice(extra);
        stdout(&dir, &args)
    };
    assert!(
        folded(&[]).contains("hot_a;burn (inlined) 500\n"),
        "{}",
        folded(&[])
    );
    assert!(folded(&["--rank", "2"]).contains("hot_a;burn (inlined) 100\n"));
    assert!(folded(&["--rank", "0", "--no-inline"]).contains("hot_a 200\n"));
    let missing = run(
        &dir,
        &[
            "export",
            "--format",
            "folded",
            "-i",
            "run.*.data",
            "--rank",
            "9",
        ],
    );
    assert!(!missing.status.success());
    assert_eq!(
        stderr(&missing),
        "profiler: the job has no recording of rank 9; it has ranks 0 to 3\n"
    );
    run_ok(&dir, &["flamegraph", "-i", "run.*.data", "-o", "job.svg"]);
    let svg = std::fs::read_to_string(dir.join("job.svg")).unwrap();
    assert!(svg.contains("4 ranks"), "the subtitle says the job");
    run_ok(
        &dir,
        &[
            "flamegraph",
            "-i",
            "run.*.data",
            "--rank",
            "1",
            "-o",
            "one.svg",
        ],
    );
    let svg = std::fs::read_to_string(dir.join("one.svg")).unwrap();
    assert!(svg.contains("rank 1"), "the subtitle says the rank");
    // pprof: each sample with its rank and host.
    run_ok(
        &dir,
        &[
            "export",
            "--format",
            "pprof",
            "-i",
            "run.*.data",
            "-o",
            "job.pb.gz",
        ],
    );
    let pprof = pprof_text(&std::fs::read(dir.join("job.pb.gz")).unwrap());
    for label in [
        "\"rank\"=\"0\"",
        "\"rank\"=\"3\"",
        "\"host\"=\"node0\"",
        "\"host\"=\"node1\"",
    ] {
        assert!(pprof.contains(label), "no {label} in\n{pprof}");
    }
    // hist sums the ranks' buckets.
    let hist = run_json(&dir, &["hist", "-i", "run.*.data", "--format", "json"]);
    let counted: u64 = (hist["rows"].as_array().unwrap().iter())
        .filter(|row| row["symbol"].as_str().unwrap().starts_with("hot_a"))
        .map(|row| row["counts"][0].as_u64().unwrap())
        .sum();
    assert_eq!(counted, 500, "{hist:#}");
    // A diff of two jobs: the second with rank 0's extra work gone.
    let new = dir.join("new");
    std::fs::create_dir(&new).unwrap();
    for r in 0..4 {
        let recording = built(r, 4, BuildId(vec![0xab, 0xcd]), 100);
        recording.write(&new.join(format!("run.{r}.data")), &["stable"]);
    }
    let diff = run_json(&dir, &["diff", "run.*.data", "new", "--format", "json"]);
    let row = (diff["functions"].as_array().unwrap().iter())
        .find(|row| row["name"] == "hot_a")
        .unwrap();
    assert!(row["self_delta"].as_f64().unwrap() < 0.0, "{diff:#}");
}

/// The job's recordings in `dir`, rank `odd` made by `make` instead.
fn job_with(dir: &Path, odd: u32, make: impl Fn() -> Synthetic) {
    for r in 0..4 {
        let recording = match r == odd {
            true => make(),
            false => rank(r, 4),
        };
        recording.write(&dir.join(format!("run.{r}.data")), &["stable"]);
    }
}

fn refusal(dir: &Path) -> String {
    let output = run(dir, &["report", "-i", "run.*.data"]);
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert_eq!(message.lines().count(), 1, "{message}");
    message
}

#[test]
fn recordings_that_are_not_one_jobs_are_refused_naming_the_odd_rank() {
    let dir = scratch("job-refusals");
    job_with(&dir, 2, || {
        let mut odd = rank(2, 4);
        odd.add_event("cpu-clock", Sampling::Frequency(1000), None);
        odd
    });
    let events = refusal(&dir);
    assert!(
        events.starts_with("profiler: run.2.data (rank 2) was recorded with cpu-clock 1000 Hz"),
        "{events}"
    );
    assert!(
        events.contains("read rank 2 alone with -i run.2.data"),
        "{events}"
    );

    job_with(&dir, 1, || built(1, 4, BuildId(vec![0xee]), 100));
    let build = refusal(&dir);
    assert!(
        build.contains("run.1.data (rank 1) ran another build of stable"),
        "{build}"
    );
    assert!(build.contains("(build-id ee)"), "{build}");

    job_with(&dir, 3, || rank(1, 4));
    let twice = refusal(&dir);
    assert!(
        twice.contains("run.1.data and run.3.data are both rank 1"),
        "{twice}"
    );

    job_with(&dir, 0, || {
        let mut odd = rank(0, 4);
        odd.job = odd.job.map(|job| JobInfo {
            job_id: Some("5000".into()),
            ..job
        });
        odd
    });
    let jobs = refusal(&dir);
    assert!(jobs.contains("belongs to job"), "{jobs}");

    job_with(&dir, 0, || {
        let mut odd = rank(0, 4);
        odd.job = None;
        odd
    });
    let unranked = refusal(&dir);
    assert!(unranked.contains("run.0.data has no rank"), "{unranked}");
}

#[test]
fn a_missing_rank_is_said_and_recordings_without_ranks_are_ranked_in_order() {
    let dir = scratch("job-missing");
    for r in [0, 1, 3] {
        rank(r, 6).write(&dir.join(format!("run.{r}.data")), &["stable"]);
    }
    let output = run_ok(&dir, &["report", "-i", "run.*.data", "--ranks"]);
    assert_eq!(
        stderr(&output),
        "profiler: warning: the job had 6 ranks; 3 of them have no recording here: 2, 4, 5\n"
    );
    // Recordings made outside any launcher, read together: ranked in the
    // order of their names.
    let old = dir.join("old");
    std::fs::create_dir(&old).unwrap();
    for (name, r) in [("b.data", 1), ("a.data", 0)] {
        let mut recording = rank(r, 2);
        recording.job = None;
        recording.write(&old.join(name), &["stable"]);
    }
    std::fs::write(old.join("notes.txt"), "not a recording").unwrap();
    std::fs::write(old.join(".hidden.data"), "PROFILERbut hidden").unwrap();
    let json = run_json(&old, &["report", "-i", ".", "--ranks", "--format", "json"]);
    let hot_a = function(&json["events"][0]["functions"], "hot_a");
    assert_eq!(
        (&hot_a["max"], &hot_a["max_rank"]),
        (&50_000_000.into(), &0.into())
    );
    let none = run(&old, &["report", "-i", "nothing.*.data"]);
    assert_eq!(
        stderr(&none),
        "profiler: -i nothing.*.data matches no file; record with mpirun or srun first, or name \
         the files\n"
    );
}
