//! Recordings made by hand, for testing views without a kernel: processes
//! and threads with command names, fixture binaries mapped into them, and
//! samples (with call chains, of several events, with group members'
//! counts) at chosen addresses of them, as `nm` and `objdump` state them;
//! or the buckets a histogram-mode recording keeps. They are written with
//! the recording writer the profiler itself uses.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use profiler_histogram::{BucketWidth, Buckets};
use profiler_model::{
    Avma, BuildId, CallGraph, CallchainEntry, ChunkLimits, Comm, CpuMode, EventDescription,
    EventIndex, EventRole, FileOffset, HistogramRecord, HistogramSettings, HistogramTotals,
    HostInfo, JobInfo, Mmap, Record, RecordSink, RecordingHeader, RecordingWriter, Sample,
    Sampling, Switch, TaskEvent, Trailer,
};

use crate::util::*;

/// Where the binary of every process is loaded when it is a PIE (a non-PIE
/// is loaded at the addresses it states).
const BASE: u64 = 0x5555_5555_4000;

/// A recording being made.
#[derive(Default)]
pub(crate) struct Synthetic {
    records: Vec<Record>,
    time: u64,
    call_graph: Option<CallGraph>,
    /// The program the command was, as `record` resolves it.
    pub program: Option<String>,
    /// The user the processes ran as, as `record` finds it.
    pub user: Option<u32>,
    /// The events; cpu-clock alone where none was added.
    events: Vec<EventDescription>,
    histogram: Option<HistogramSettings>,
    histogram_totals: Vec<HistogramTotals>,
    /// Each process's program: its path and where it is loaded.
    programs: HashMap<u32, (String, u64)>,
    /// Group members' running totals, per thread and member.
    member_totals: HashMap<(u32, EventIndex), u64>,
    /// Where chunks end: after this many records.
    chunk_ends: Vec<usize>,
    /// The recording's place in a job, as a launcher would say it.
    pub job: Option<JobInfo>,
    /// The build-id of every file mapped; none where `None`.
    pub build_id: Option<BuildId>,
    /// The host the recording says it was made on; `synthetic` where `None`.
    pub host: Option<String>,
}

/// What one sample is: where it was taken and what it stands for.
#[derive(Clone, Debug, Default)]
pub(crate) struct At {
    pub pid: u32,
    /// The thread; the process's main thread where 0.
    pub tid: u32,
    pub event: EventIndex,
    /// Events the sample stands for; 250000 where 0.
    pub period: u64,
    /// Kernel addresses, innermost first: the interrupted instruction, then
    /// return addresses. A kernel sample's user part follows in `user`.
    pub kernel: Vec<u64>,
    /// User-space addresses as the process sees them, innermost first.
    pub user: Vec<u64>,
    /// What each group member counted since the thread's previous sample.
    pub read: Vec<(EventIndex, u64)>,
}

impl Synthetic {
    pub(crate) fn new() -> Synthetic {
        Synthetic::default()
    }

    /// Samples carry call chains, as `record -g` takes them.
    pub(crate) fn with_stacks() -> Synthetic {
        Synthetic {
            call_graph: Some(CallGraph::FramePointer),
            ..Synthetic::default()
        }
    }

    /// A histogram-mode recording with these settings: buckets, no samples.
    pub(crate) fn with_histograms(settings: HistogramSettings) -> Synthetic {
        Synthetic {
            histogram: Some(settings),
            ..Synthetic::default()
        }
    }

    /// Adds a software event sampled as `sampling`, a member of the group
    /// `leader` leads if given; returns its index.
    pub(crate) fn add_event(
        &mut self,
        name: &str,
        sampling: Sampling,
        leader: Option<EventIndex>,
    ) -> EventIndex {
        let (config, unit) = match name {
            "cpu-clock" => (0, "ns"),
            "task-clock" => (1, "ns"),
            "page-faults" => (2, "events"),
            "context-switches" => (3, "events"),
            other => panic!("no software event {other} here"),
        };
        self.events.push(EventDescription {
            name: name.into(),
            perf_type: 1,
            config,
            config1: 0,
            config2: 0,
            sampling,
            unit: unit.into(),
            user: true,
            kernel: false,
            leader,
            role: EventRole::Sampled,
        });
        self.events.len() as EventIndex - 1
    }

    /// The events `record --off-cpu` adds after those sampled (cpu-clock
    /// at 4000 Hz where none was added): the samples taken as threads
    /// leave the CPU, then the off-CPU and wall events read from them.
    /// Returns the first's index.
    pub(crate) fn add_off_cpu_events(&mut self) -> EventIndex {
        if self.events.is_empty() {
            self.add_event("cpu-clock", Sampling::Frequency(4000), None);
        }
        let clock = self.events[0].clone();
        let switch_out = self.add_event("context-switches", Sampling::Period(1), None);
        self.events[usize::from(switch_out)].role = EventRole::SwitchOut;
        for (name, role) in [("off-cpu", EventRole::OffCpu), ("wall", EventRole::Wall)] {
            self.events.push(EventDescription {
                name: name.into(),
                role,
                ..clock.clone()
            });
        }
        switch_out
    }

    /// The thread of `at` leaves the CPU for `ns` nanoseconds, blocked or
    /// else preempted; with `at.user`, a sample of `at.event` (the
    /// switch-out event) holds the stack it left from.
    pub(crate) fn off_cpu(&mut self, at: &At, preempt: bool, ns: u64) {
        let sampled = !at.user.is_empty();
        if sampled {
            self.take(at, 1);
        } else {
            self.tick();
        }
        let (time, tid) = (self.time, if at.tid == 0 { at.pid } else { at.tid });
        let switch = |time, out| {
            Record::Switch(Switch {
                time,
                pid: at.pid,
                tid,
                out,
                preempt: out && preempt,
                sampled: out && sampled,
            })
        };
        self.records.push(switch(time, true));
        self.time += ns;
        self.records.push(switch(self.time, false));
    }

    /// Thread `tid` of process `pid` exits.
    pub(crate) fn exit(&mut self, pid: u32, tid: u32) {
        let time = self.tick();
        self.records.push(Record::Exit(TaskEvent {
            time,
            pid,
            ppid: pid,
            tid,
            ptid: pid,
        }));
    }

    fn tick(&mut self) -> u64 {
        self.time += 1000;
        self.time
    }

    /// Process `pid`, forked from `parent` (0: none), named `command`,
    /// with `binary`'s executable segments mapped.
    pub(crate) fn process(&mut self, pid: u32, parent: u32, command: &str, binary: &Path) {
        if parent != 0 {
            self.fork(pid, parent);
        }
        self.exec(pid, command, binary);
    }

    /// Process `parent` forks `pid`, which inherits its name and mappings.
    pub(crate) fn fork(&mut self, pid: u32, parent: u32) {
        let time = self.tick();
        self.records.push(Record::Fork(TaskEvent {
            time,
            pid,
            ppid: parent,
            tid: pid,
            ptid: parent,
        }));
        if let Some(program) = self.programs.get(&parent).cloned() {
            self.programs.insert(pid, program);
        }
    }

    /// Process `pid` starts thread `tid`, named `name`.
    pub(crate) fn thread(&mut self, pid: u32, tid: u32, name: &str) {
        let time = self.tick();
        self.records.push(Record::Fork(TaskEvent {
            time,
            pid,
            ppid: pid,
            tid,
            ptid: pid,
        }));
        self.records.push(Record::Comm(Comm {
            time,
            pid,
            tid,
            name: name.to_owned(),
            exec: false,
        }));
    }

    /// Process `pid` executes `binary`, and is named `command`.
    pub(crate) fn exec(&mut self, pid: u32, command: &str, binary: &Path) {
        let time = self.tick();
        self.records.push(Record::Comm(Comm {
            time,
            pid,
            tid: pid,
            name: command.to_owned(),
            exec: true,
        }));
        let base = load_base(binary);
        self.map(pid, binary, base);
        let path = binary.to_str().unwrap().to_owned();
        self.programs.insert(pid, (path, base));
    }

    /// Maps `binary`'s executable segments into `pid`, its stated address
    /// 0 at `base`.
    pub(crate) fn map(&mut self, pid: u32, binary: &Path, base: u64) {
        for (address, offset, len) in executable_segments(binary) {
            let time = self.tick();
            self.records.push(Record::Mmap(Mmap {
                time,
                pid,
                tid: pid,
                start: Avma(base + address),
                len,
                offset: FileOffset(offset),
                path: binary.to_str().unwrap().to_owned(),
                build_id: self.build_id.clone(),
            }));
        }
    }

    /// Gives process `pid` JIT code at `start`, in anonymous memory: the
    /// functions `(offset, name)`, 0x100 bytes each, named by a jitdump
    /// file written in `dir`, which the process maps as a JIT's marker.
    pub(crate) fn jit(&mut self, pid: u32, dir: &Path, start: u64, functions: &[(u64, &str)]) {
        let dump = dir.join(format!("jit-{pid}.dump"));
        let loads: Vec<(u64, u64, &str)> = (functions.iter())
            .map(|&(offset, name)| (start + offset, 0x100, name))
            .collect();
        write_jitdump(&dump, pid, &loads);
        let end = functions.iter().map(|&(offset, _)| offset + 0x100).max();
        let len = end.unwrap_or(0x100).next_multiple_of(4096);
        for (path, at, len, offset) in [
            (dump.to_str().unwrap(), start + len + 0x10_0000, 4096, 0),
            // An anonymous mapping's offset is its address.
            ("//anon", start, len, start),
        ] {
            let time = self.tick();
            self.records.push(Record::Mmap(Mmap {
                time,
                pid,
                tid: pid,
                start: Avma(at),
                len,
                offset: FileOffset(offset),
                path: path.to_owned(),
                build_id: None,
            }));
        }
    }

    /// Ends the chunk of records being written: the records so far are
    /// written as it is ended, as the sampler's batches are.
    pub(crate) fn end_chunk(&mut self) {
        self.chunk_ends.push(self.records.len());
    }

    /// A record as it is, for records no other method makes.
    pub(crate) fn push_raw(&mut self, record: Record) {
        self.records.push(record);
    }

    /// `count` samples in `pid` at `address` of its program (as the binary
    /// states it), with the call chain `callers` (stated return addresses,
    /// innermost first) when the recording has stacks.
    pub(crate) fn samples(&mut self, pid: u32, address: u64, callers: &[u64], count: u32) {
        let base = self.programs[&pid].1;
        let at = At {
            pid,
            user: (std::iter::once(address).chain(callers.iter().copied()))
                .map(|a| base + a)
                .collect(),
            ..At::default()
        };
        self.take(&at, count);
    }

    /// `count` samples as `at` describes them.
    pub(crate) fn take(&mut self, at: &At, count: u32) {
        for _ in 0..count {
            let time = self.tick();
            let tid = if at.tid == 0 { at.pid } else { at.tid };
            let ip = at.kernel.first().or(at.user.first());
            let mut callchain = Vec::new();
            if self.call_graph.is_some() {
                let address = |&a: &u64| CallchainEntry::Address(Avma(a));
                if !at.kernel.is_empty() {
                    callchain.push(CallchainEntry::Context(CpuMode::Kernel));
                    callchain.extend(at.kernel.iter().map(address));
                }
                callchain.push(CallchainEntry::Context(CpuMode::User));
                callchain.extend(at.user.iter().map(address));
            }
            let read = (at.read.iter())
                .map(|&(member, delta)| {
                    let total = self.member_totals.entry((tid, member)).or_default();
                    *total += delta;
                    (member, *total)
                })
                .collect();
            self.records.push(Record::Sample(Sample {
                time,
                pid: at.pid,
                tid,
                cpu: 0,
                event: at.event,
                mode: match at.kernel.is_empty() {
                    true => CpuMode::User,
                    false => CpuMode::Kernel,
                },
                ip: Avma(*ip.expect("a sample needs an address")),
                period: if at.period == 0 { 250_000 } else { at.period },
                callchain,
                user_stack: None,
                read,
            }));
        }
    }

    /// Buckets of `event` over `binary`'s file from offset `start` (16-bit,
    /// at the recording's scale).
    pub(crate) fn buckets(&mut self, event: EventIndex, binary: &Path, start: u64, counts: &[u16]) {
        let settings = self.histogram.as_ref().expect("a histogram recording");
        self.records.push(Record::Histogram(HistogramRecord {
            event,
            path: binary.to_str().unwrap().to_owned(),
            build_id: None,
            start: FileOffset(start),
            scale: settings.scale,
            buckets: Buckets::from_le_bytes(
                BucketWidth::Bits16,
                &counts
                    .iter()
                    .flat_map(|c| c.to_le_bytes())
                    .collect::<Vec<u8>>(),
            )
            .unwrap(),
        }));
    }

    /// What became of each event's samples in a histogram recording.
    pub(crate) fn histogram_totals(&mut self, totals: Vec<HistogramTotals>) {
        self.histogram_totals = totals;
    }

    /// Writes the recording to `path`, as made by running `command`.
    pub(crate) fn write(mut self, path: &Path, command: &[&str]) {
        if self.events.is_empty() {
            self.add_event("cpu-clock", Sampling::Frequency(4000), None);
        }
        let header = RecordingHeader {
            events: self.events,
            command: command.iter().map(|s| s.to_string()).collect(),
            program: self.program.clone(),
            user: self.user,
            histogram: self.histogram,
            call_graph: self.call_graph,
            host: HostInfo {
                hostname: self.host.unwrap_or_else(|| "synthetic".into()),
                kernel: "0.0".into(),
                arch: "x86_64".into(),
                cpus: 1,
            },
            job: self.job,
            start_unix_ns: 0,
            profiler_version: "test".into(),
        };
        let file = std::fs::File::create(path).unwrap();
        // Where chunks are ended, each batch is a chunk.
        let limits = match self.chunk_ends.is_empty() {
            true => ChunkLimits::default(),
            false => ChunkLimits {
                bytes: 1,
                ..ChunkLimits::default()
            },
        };
        let out = std::io::BufWriter::new(file);
        let mut writer = RecordingWriter::with_limits(out, &header, limits).unwrap();
        for (index, record) in self.records.iter().enumerate() {
            if self.chunk_ends.contains(&index) {
                writer.end_batch().unwrap();
            }
            if matches!(record, Record::Sample(_)) && header.histogram.is_some() {
                writer.tally(record);
            } else {
                writer.push(record).unwrap();
            }
        }
        let trailer = Trailer {
            duration_ns: self.time,
            outcome: "exited with status 0".into(),
            histogram_totals: self.histogram_totals,
            ..Trailer::default()
        };
        writer.finish(trailer).unwrap();
    }
}

/// Writes a jitdump file (perf's convention, as a JIT writes it) at
/// `path`: a header for `pid`, then a code load record of each function,
/// `(address, size, name)`, its code `int3`s.
pub(crate) fn write_jitdump(path: &Path, pid: u32, functions: &[(u64, u64, &str)]) {
    let mut bytes = Vec::new();
    for word in [0x4A69_5444u32, 1, 40, 62, 0, pid] {
        bytes.extend(word.to_le_bytes());
    }
    bytes.extend([0; 16]);
    for (index, &(address, size, name)) in functions.iter().enumerate() {
        let mut body = Vec::new();
        body.extend(pid.to_le_bytes());
        body.extend(pid.to_le_bytes());
        for word in [address, address, size, index as u64] {
            body.extend(word.to_le_bytes());
        }
        body.extend(name.as_bytes());
        body.push(0);
        body.extend(std::iter::repeat_n(0xcc, size as usize));
        bytes.extend(0u32.to_le_bytes());
        bytes.extend((16 + body.len() as u32).to_le_bytes());
        bytes.extend((index as u64).to_le_bytes());
        bytes.extend(body);
    }
    std::fs::write(path, bytes).unwrap();
}

/// Where the loader puts `binary`: a PIE or library at [`BASE`], anything
/// else at the addresses it states.
pub(crate) fn load_base(binary: &Path) -> u64 {
    let output = Command::new("readelf")
        .arg("-h")
        .arg(binary)
        .output()
        .unwrap();
    let header = String::from_utf8(output.stdout).unwrap();
    match header
        .lines()
        .any(|l| l.trim_start().starts_with("Type:") && l.contains("EXEC"))
    {
        true => 0,
        false => BASE,
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
pub(crate) fn function_range(binary: &Path, function: &str) -> (u64, u64) {
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
pub(crate) fn inline_chains(binary: &Path, function: &str) -> Vec<(u64, Vec<String>)> {
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
pub(crate) fn inlined_and_own(binary: &Path, function: &str, inlined: &str) -> (u64, u64) {
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
