//! Recordings made by hand, for testing views without a kernel: processes
//! with command names, a fixture binary mapped into each, and samples at
//! chosen addresses of it (as `nm` and `objdump` state them), written with
//! the recording writer the profiler itself uses.

use std::path::Path;
use std::process::Command;

use profiler_model::{
    Avma, CallGraph, Comm, CpuMode, EventDescription, FileOffset, HostInfo, Mmap, Record,
    RecordSink, RecordingHeader, RecordingWriter, Sample, Sampling, TaskEvent, Trailer,
};

use crate::util::*;

/// Where the binary of every process is loaded (a PIE's base).
const BASE: u64 = 0x5555_5555_4000;

/// A recording being made.
#[derive(Default)]
pub struct Synthetic {
    records: Vec<Record>,
    time: u64,
    call_graph: Option<CallGraph>,
    /// The program the command was, as `record` resolves it.
    pub program: Option<String>,
}

impl Synthetic {
    pub fn new() -> Synthetic {
        Synthetic::default()
    }

    /// Samples carry call chains, as `record -g` takes them.
    pub fn with_stacks() -> Synthetic {
        Synthetic {
            call_graph: Some(CallGraph::FramePointer),
            ..Synthetic::default()
        }
    }

    fn tick(&mut self) -> u64 {
        self.time += 1000;
        self.time
    }

    /// Process `pid`, forked from `parent` (0: none), named `command`,
    /// with `binary`'s executable segments mapped at [`BASE`].
    pub fn process(&mut self, pid: u32, parent: u32, command: &str, binary: &Path) {
        if parent != 0 {
            self.fork(pid, parent);
        }
        self.exec(pid, command, binary);
    }

    /// Process `parent` forks `pid`, which inherits its name and mappings.
    pub fn fork(&mut self, pid: u32, parent: u32) {
        let time = self.tick();
        self.records.push(Record::Fork(TaskEvent {
            time,
            pid,
            ppid: parent,
            tid: pid,
            ptid: parent,
        }));
    }

    /// Process `pid` executes `binary`, and is named `command`.
    pub fn exec(&mut self, pid: u32, command: &str, binary: &Path) {
        let time = self.tick();
        self.records.push(Record::Comm(Comm {
            time,
            pid,
            tid: pid,
            name: command.to_owned(),
            exec: true,
        }));
        for (address, offset, len) in executable_segments(binary) {
            let time = self.tick();
            self.records.push(Record::Mmap(Mmap {
                time,
                pid,
                tid: pid,
                start: Avma(BASE + address),
                len,
                offset: FileOffset(offset),
                path: binary.to_str().unwrap().to_owned(),
                build_id: None,
            }));
        }
    }

    /// `count` samples in `pid` at `address` (as the binary states it),
    /// with the call chain `callers` (return addresses, innermost first)
    /// when the recording has stacks.
    pub fn samples(&mut self, pid: u32, address: u64, callers: &[u64], count: u32) {
        for _ in 0..count {
            let time = self.tick();
            let mut callchain = Vec::new();
            if self.call_graph.is_some() {
                callchain.push(u64::MAX - 511); // PERF_CONTEXT_USER
                callchain.push(BASE + address);
                callchain.extend(callers.iter().map(|a| BASE + a));
            }
            self.records.push(Record::Sample(Sample {
                time,
                pid,
                tid: pid,
                cpu: 0,
                event: 0,
                mode: CpuMode::User,
                ip: Avma(BASE + address),
                period: 250_000,
                callchain,
                user_stack: None,
                read: Vec::new(),
            }));
        }
    }

    /// Writes the recording to `path`, as made by running `command`.
    pub fn write(self, path: &Path, command: &[&str]) {
        let header = RecordingHeader {
            events: vec![EventDescription {
                name: "cpu-clock".into(),
                perf_type: 1,
                config: 0,
                config1: 0,
                config2: 0,
                sampling: Sampling::Frequency(4000),
                unit: "ns".into(),
                user: true,
                kernel: false,
                leader: None,
            }],
            command: command.iter().map(|s| s.to_string()).collect(),
            program: self.program.clone(),
            histogram: None,
            call_graph: self.call_graph,
            host: HostInfo {
                hostname: "synthetic".into(),
                kernel: "0.0".into(),
                arch: "x86_64".into(),
                cpus: 1,
            },
            start_unix_ns: 0,
            profiler_version: "test".into(),
        };
        let file = std::fs::File::create(path).unwrap();
        let mut writer = RecordingWriter::new(std::io::BufWriter::new(file), &header).unwrap();
        for record in &self.records {
            writer.push(record).unwrap();
        }
        let trailer = Trailer {
            duration_ns: self.time,
            outcome: "exited with status 0".into(),
            ..Trailer::default()
        };
        writer.finish(trailer).unwrap();
    }
}

/// The executable LOAD segments of `binary`, page-aligned as the loader
/// maps them: (stated address, file offset, length).
fn executable_segments(binary: &Path) -> Vec<(u64, u64, u64)> {
    let output = Command::new("readelf")
        .args(["-lW"])
        .arg(binary)
        .output()
        .unwrap();
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.first() != Some(&"LOAD") || !fields[6..].concat().contains('E') {
                return None;
            }
            let (offset, address, size) = (hex(fields[1]), hex(fields[2]), hex(fields[4]));
            let skew = address & 0xfff;
            Some((address - skew, offset - skew, size + skew))
        })
        .collect()
}

/// The start and size of `function` in `binary`, from `nm -S`.
pub fn function_range(binary: &Path, function: &str) -> (u64, u64) {
    let output = Command::new("nm").arg("-S").arg(binary).output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    text.lines()
        .find_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            match fields[..] {
                [start, size, _, name] if name == function => Some((
                    u64::from_str_radix(start, 16).unwrap(),
                    u64::from_str_radix(size, 16).unwrap(),
                )),
                _ => None,
            }
        })
        .unwrap_or_else(|| panic!("{} has no function {function}", binary.display()))
}

/// The inline chain (function names, innermost first) of every address of
/// `function`, from `profiler symbolize --inlines`.
pub fn inline_chains(binary: &Path, function: &str) -> Vec<(u64, Vec<String>)> {
    let (start, size) = function_range(binary, function);
    let input: String = (start..start + size).map(|a| format!("{a:#x}\n")).collect();
    let binary = binary.to_str().unwrap();
    let args = [
        "symbolize",
        "--inlines",
        "--format",
        "json",
        "--exe",
        binary,
    ];
    let output = run_with_input(Path::new("."), &args, &input);
    let entries: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    entries
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            let names = (entry["frames"].as_array().unwrap().iter())
                .map(|f| f["function"].as_str().unwrap_or("??").to_owned())
                .collect();
            (entry["address"].as_u64().unwrap(), names)
        })
        .collect()
}

/// An address of `function` whose code came from `inlined` (inlined
/// directly into it), and one of its own code.
pub fn inlined_and_own(binary: &Path, function: &str, inlined: &str) -> (u64, u64) {
    let chains = inline_chains(binary, function);
    let find = |wanted: &[&str]| {
        chains
            .iter()
            .find(|(_, chain)| chain.iter().map(String::as_str).eq(wanted.iter().copied()))
            .map(|(address, _)| *address)
            .unwrap_or_else(|| panic!("no address of {function} is {wanted:?}: {chains:?}"))
    };
    (find(&[inlined, function]), find(&[function]))
}
