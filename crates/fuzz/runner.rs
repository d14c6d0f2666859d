//! The fuzzing loop: seeds first as they are, then mutations of them, each
//! run by a worker process under a watchdog. A worker that dies or stops
//! answering is a finding: its input is saved, it is replaced, and the
//! loop goes on until time is up.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result, bail};

use crate::args::Args;
use crate::corpus;
use crate::mutate::mutate;
use crate::rng::Rng;
use crate::worker::scratch_dir;

/// Findings of one kind beyond this many are counted, not saved.
const SAVED_PER_KIND: usize = 3;

/// Fuzzes `args.target` for `args.seconds`; returns how many inputs failed.
pub(crate) fn fuzz(args: &Args) -> Result<usize> {
    let target = args.target;
    let (seeds, built_in) = corpus::seeds(target, &args.corpus)?;
    if seeds.is_empty() {
        bail!(
            "no seeds for {}: give --corpus a directory holding its files (target/test-scratch \
             after cargo test, target/fixtures after building the fixtures)",
            target.name
        );
    }
    let seed = args.seed.unwrap_or_else(|| {
        let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH);
        now.map_or(0, |d| d.as_nanos() as u64)
    });
    println!(
        "fuzz {}: {} seeds ({built_in} built in), --seed {seed}, {} s",
        target.name,
        seeds.len(),
        args.seconds
    );
    let mut rng = Rng::new(seed);
    let started = Instant::now();
    let deadline = started + Duration::from_secs(args.seconds);
    let mut worker = Worker::start(args)?;
    let mut ran = 0usize;
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    while Instant::now() < deadline {
        // Every input a mutation: the tests read the seeds as they are.
        // The smaller of two seeds: small ones run faster, and mutations
        // of them reach as much.
        let (a, b) = (rng.below(seeds.len()), rng.below(seeds.len()));
        let base = match seeds[a].len() <= seeds[b].len() {
            true => &seeds[a],
            false => &seeds[b],
        };
        // A third of the inputs with their parts rearranged whole, half
        // of those mutated within too.
        let restructured = (target.restructure)
            .filter(|_| rng.one_in(3))
            .and_then(|restructure| restructure(&mut rng, base));
        let mut input = match restructured {
            Some(input) if rng.one_in(2) => input,
            Some(input) => mutate(&mut rng, &input, &seeds, target.dictionary),
            None => mutate(&mut rng, base, &seeds, target.dictionary),
        };
        if let Some(mend) = target.mend.filter(|_| rng.one_in(2)) {
            mend(&mut input);
        }
        ran += 1;
        let Some(failure) = worker.run(&input, args)? else {
            continue;
        };
        std::mem::replace(&mut worker, Worker::start(args)?).stop();
        let seen = kinds.entry(failure.kind.clone()).or_default();
        *seen += 1;
        if *seen <= SAVED_PER_KIND {
            let path = save(&args.findings, target.name, &input, &failure)?;
            println!(
                "fuzz {}: {} -> {}\n{}",
                target.name,
                failure.kind,
                path.display(),
                failure.detail
            );
        }
    }
    worker.stop();
    let seconds = started.elapsed().as_secs_f64();
    let found: usize = kinds.values().sum();
    println!(
        "fuzz {}: {ran} inputs in {seconds:.0} s ({:.0}/s), {found} findings of {} kinds",
        target.name,
        ran as f64 / seconds,
        kinds.len()
    );
    for (kind, count) in &kinds {
        println!("  {count} x {kind}");
    }
    Ok(found)
}

/// Runs the input saved at `path` as the fuzzer ran it; returns 1 if it
/// fails, after printing how.
pub(crate) fn replay(args: &Args, path: &Path) -> Result<usize> {
    let input = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut worker = Worker::start(args)?;
    let failure = worker.run(&input, args)?;
    worker.stop();
    match failure {
        None => {
            println!(
                "fuzz {}: {} runs to its end",
                args.target.name,
                path.display()
            );
            Ok(0)
        }
        Some(failure) => {
            println!(
                "fuzz {}: {}: {}",
                args.target.name,
                path.display(),
                failure.kind
            );
            println!("{}", failure.detail);
            Ok(1)
        }
    }
}

/// How an input failed.
struct Failure {
    /// What went wrong and where, the same for every input that fails the
    /// same way (a panic's location): findings are grouped by it.
    kind: String,
    /// The worker's last words.
    detail: String,
}

/// A worker process and the channel its answers come through: each
/// input's peak of resident memory, in KiB.
struct Worker {
    child: Child,
    stdin: ChildStdin,
    answers: Receiver<u64>,
    stderr: PathBuf,
}

impl Worker {
    fn start(args: &Args) -> Result<Worker> {
        let stderr = std::env::temp_dir().join(format!(
            "profiler-fuzz-{}-{}.stderr",
            std::process::id(),
            args.target.name
        ));
        let log =
            File::create(&stderr).with_context(|| format!("cannot create {}", stderr.display()))?;
        let mut child = Command::new(std::env::current_exe()?)
            .arg(args.target.name)
            .arg("--worker")
            .arg(format!("--memory-mib={}", args.memory_mib))
            .arg(format!("--ceiling-mib={}", args.ceiling_mib))
            // A panic in the standard library or a dependency is placed by
            // the project's frame below it.
            .env("RUST_BACKTRACE", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .context("cannot start a worker")?;
        let stdin = child.stdin.take().context("no worker stdin")?;
        let mut stdout = child.stdout.take().context("no worker stdout")?;
        let (sender, answers) = channel();
        std::thread::spawn(move || {
            let mut peak = [0; 8];
            while stdout.read_exact(&mut peak).is_ok()
                && sender.send(u64::from_le_bytes(peak)).is_ok()
            {}
        });
        Ok(Worker {
            child,
            stdin,
            answers,
            stderr,
        })
    }

    /// Runs `input`; `None` if it ran to its end.
    fn run(&mut self, input: &[u8], args: &Args) -> Result<Option<Failure>> {
        let sent = (self.stdin.write_all(&(input.len() as u64).to_le_bytes()))
            .and_then(|()| self.stdin.write_all(input))
            .and_then(|()| self.stdin.flush());
        let answer = match sent {
            Ok(()) => self.answers.recv_timeout(Duration::from_secs(args.timeout)),
            Err(_) => Err(RecvTimeoutError::Disconnected),
        };
        match answer {
            Ok(peak_kib) if peak_kib > args.ceiling_mib << 10 => Ok(Some(Failure {
                kind: format!(
                    "memory ceiling crossed (more than {} MiB)",
                    args.ceiling_mib
                ),
                detail: format!(
                    "the input took {} MiB of resident memory at its peak, more than the {} MiB \
                     an input may take",
                    peak_kib >> 10,
                    args.ceiling_mib
                ),
            })),
            Ok(_) => Ok(None),
            Err(RecvTimeoutError::Timeout) => {
                self.kill();
                Ok(Some(Failure {
                    kind: format!("hang (more than {} s)", args.timeout),
                    detail: self.last_words(),
                }))
            }
            Err(RecvTimeoutError::Disconnected) => {
                let status = self.child.wait().context("cannot wait for a worker")?;
                self.clean();
                Ok(Some(self.death(status)))
            }
        }
    }

    fn death(&self, status: ExitStatus) -> Failure {
        let detail = self.last_words();
        let kind = if let Some(place) = detail.lines().find_map(|l| l.split_once(" panicked at ")) {
            let place = place.1.trim_end_matches(':');
            let caller = (detail.lines())
                .filter_map(|l| l.trim().strip_prefix("at "))
                .find(|l| l.contains("crates/") && !l.contains("crates/fuzz/"));
            match caller {
                Some(caller) if !place.contains("crates/") => {
                    format!("panic at {place} (from {caller})")
                }
                _ => format!("panic at {place}"),
            }
        } else if detail.contains("memory allocation of") {
            "memory exhausted".to_owned()
        } else if let Some(signal) = status.signal() {
            format!("killed by signal {signal}")
        } else {
            format!("exit status {}", status.code().unwrap_or(-1))
        };
        Failure { kind, detail }
    }

    /// The end of what the worker wrote to stderr.
    fn last_words(&self) -> String {
        let text = std::fs::read(&self.stderr).unwrap_or_default();
        let text = String::from_utf8_lossy(&text[text.len().saturating_sub(4000)..]);
        text.trim_end().to_owned()
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.clean();
    }

    fn clean(&self) {
        let _ = std::fs::remove_dir_all(scratch_dir(self.child.id()));
    }

    /// Closes the worker's input, so it ends, and waits for it.
    fn stop(self) {
        let Worker {
            mut child, stdin, ..
        } = self;
        drop(stdin);
        let _ = child.wait();
        let _ = std::fs::remove_dir_all(scratch_dir(child.id()));
    }
}

/// Saves a failing input as `TARGET-N.bin` (with how it failed in
/// `TARGET-N.txt`), N the first number free.
fn save(dir: &Path, target: &str, input: &[u8], failure: &Failure) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for n in 0.. {
        let path = dir.join(format!("{target}-{n}.bin"));
        if path.exists() {
            continue;
        }
        std::fs::write(&path, input).with_context(|| format!("cannot write {}", path.display()))?;
        let note = format!("{}\n{}\n", failure.kind, failure.detail);
        let _ = std::fs::write(path.with_extension("txt"), note);
        return Ok(path);
    }
    bail!("no free name in {}", dir.display())
}
