//! The records of a recording: samples and the side-band events that tie each
//! sampled address to a file (mappings, exec, fork, exit), plus the kernel's
//! notes on data it dropped.
//!
//! Times are nanoseconds on the kernel's perf clock, comparable across CPUs.

use std::fmt;

use profiler_histogram::Buckets;

use crate::address::{Avma, FileOffset};
use crate::event::EventIndex;
use crate::printable::make_printable;

/// One record of the event stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record {
    Sample(Sample),
    Mmap(Mmap),
    Comm(Comm),
    Fork(TaskEvent),
    Exit(TaskEvent),
    Lost(Lost),
    Throttle(Throttle),
    Histogram(HistogramRecord),
    Switch(Switch),
}

impl Record {
    /// Escapes the control characters of the names and paths it holds, as
    /// a profiler recording's are when decoded: for records another
    /// format's reader made.
    pub fn make_printable(&mut self) {
        match self {
            Record::Comm(comm) => make_printable(&mut comm.name),
            Record::Mmap(mmap) => make_printable(&mut mmap.path),
            Record::Histogram(histogram) => make_printable(&mut histogram.path),
            _ => {}
        }
    }
}

/// Where the CPU was executing when a sample was taken
/// (`PERF_RECORD_MISC_CPUMODE_*`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CpuMode {
    #[default]
    Unknown,
    Kernel,
    User,
    Hypervisor,
    GuestKernel,
    GuestUser,
}

/// A program-counter sample, taken when an event's counter overflowed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sample {
    pub time: u64,
    pub pid: u32,
    pub tid: u32,
    pub cpu: u32,
    pub event: EventIndex,
    pub mode: CpuMode,
    pub ip: Avma,
    /// How many events this sample stands for (the counter's period when it
    /// overflowed; constant unless sampling by frequency).
    pub period: u64,
    /// The kernel's call chain (`record --call-graph fp`), innermost first,
    /// as `PERF_SAMPLE_CALLCHAIN` gives it, decoded: each context's
    /// addresses follow the context they are in (the kernel's
    /// `PERF_CONTEXT_*` markers); in each context the first address is the
    /// interrupted instruction, the others return addresses. Empty without
    /// call graphs.
    pub callchain: Vec<CallchainEntry>,
    /// The user registers and stack copy (`record --call-graph dwarf`),
    /// unwound at report time; with `-g`, the top of the stack, which finds
    /// the caller the call chain skipped (spliced into `callchain` while
    /// recording, and then dropped).
    pub user_stack: Option<UserStack>,
    /// For the leader of a group: each member's count when the sample was
    /// taken (`PERF_SAMPLE_READ`), running totals of this thread's counter
    /// on this CPU. Empty otherwise.
    pub read: Vec<(EventIndex, u64)>,
}

/// What the unwinder of a `--call-graph dwarf` sample starts from: the
/// registers it needs and a copy of the top of the user stack.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserStack {
    pub ip: Avma,
    pub sp: Avma,
    pub bp: Avma,
    /// The stack's bytes from `sp` upwards, as many as the kernel could copy.
    pub bytes: Vec<u8>,
}

impl UserStack {
    /// The eight bytes at `address`, if the copy holds them.
    pub fn read_u64(&self, address: u64) -> Option<u64> {
        let start = usize::try_from(address.checked_sub(self.sp.0)?).ok()?;
        let bytes = self.bytes.get(start..start.checked_add(8)?)?;
        Some(u64::from_le_bytes(bytes.try_into().ok()?))
    }
}

/// An entry of [`Sample::callchain`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallchainEntry {
    /// The following entries are of this mode.
    Context(CpuMode),
    Address(Avma),
}

impl CallchainEntry {
    /// The kernel's `PERF_CONTEXT_*` markers are the top 4095 values.
    const CONTEXT_MIN: u64 = u64::MAX - 4095 + 1;

    pub fn from_raw(raw: u64) -> CallchainEntry {
        if raw < Self::CONTEXT_MIN {
            return CallchainEntry::Address(Avma(raw));
        }
        // PERF_CONTEXT_HV -32, KERNEL -128, USER -512, GUEST -2048,
        // GUEST_KERNEL -2176, GUEST_USER -2560.
        let mode = match raw.wrapping_neg() {
            32 => CpuMode::Hypervisor,
            128 => CpuMode::Kernel,
            512 => CpuMode::User,
            2176 => CpuMode::GuestKernel,
            2560 => CpuMode::GuestUser,
            _ => CpuMode::Unknown,
        };
        CallchainEntry::Context(mode)
    }

    /// The entry as the kernel writes it, as recordings keep it. A context
    /// the kernel did not name comes back as `PERF_CONTEXT_MAX` (-4095).
    pub fn to_raw(self) -> u64 {
        let marker: i64 = match self {
            CallchainEntry::Address(address) => return address.0,
            CallchainEntry::Context(CpuMode::Hypervisor) => -32,
            CallchainEntry::Context(CpuMode::Kernel) => -128,
            CallchainEntry::Context(CpuMode::User) => -512,
            CallchainEntry::Context(CpuMode::GuestKernel) => -2176,
            CallchainEntry::Context(CpuMode::GuestUser) => -2560,
            CallchainEntry::Context(CpuMode::Unknown) => -4095,
        };
        marker as u64
    }
}

/// A file (or an anonymous or special region such as `[vdso]`) mapped
/// executable into a process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mmap {
    pub time: u64,
    pub pid: u32,
    pub tid: u32,
    pub start: Avma,
    pub len: u64,
    /// Offset in the file of the byte mapped at `start`.
    pub offset: FileOffset,
    /// The path as the kernel saw it, or a name in brackets (`[vdso]`).
    pub path: String,
    /// The GNU build-id of the file, when the kernel could read it.
    pub build_id: Option<BuildId>,
}

/// A thread took a new name, or a process executed a new program (`exec`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comm {
    pub time: u64,
    pub pid: u32,
    pub tid: u32,
    pub name: String,
    /// True when the name changed because of `exec`: the old mappings are gone.
    pub exec: bool,
}

/// A task was created (fork, clone) or ended. `pid == ppid` for a new thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskEvent {
    pub time: u64,
    pub pid: u32,
    pub ppid: u32,
    pub tid: u32,
    pub ptid: u32,
}

/// The kernel dropped `count` records of this event: its ring buffer was full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lost {
    pub time: u64,
    pub event: EventIndex,
    pub count: u64,
}

/// The kernel stopped (or resumed) sampling this event because it exceeded
/// `perf_event_max_sample_rate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Throttle {
    pub time: u64,
    pub event: EventIndex,
    /// False for a THROTTLE record, true for the UNTHROTTLE that ends it.
    pub unthrottle: bool,
}

/// A thread left the CPU or came back to it (`PERF_RECORD_SWITCH`,
/// `record --off-cpu`): what off-CPU time is read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Switch {
    pub time: u64,
    pub pid: u32,
    pub tid: u32,
    /// True when the thread left the CPU, false when it came back.
    pub out: bool,
    /// For a switch out: the thread was still runnable, and another took
    /// its CPU (`PERF_RECORD_MISC_SWITCH_OUT_PREEMPT`); otherwise it
    /// blocked (slept, waited for I/O, a lock, a child).
    pub preempt: bool,
    /// For a switch out: a sample of the switch-out event, taken as the
    /// thread left, has this switch's time and thread, and holds the stack
    /// the thread waited in.
    pub sampled: bool,
}

/// One event's histogram over one region of a module's file, as a
/// histogram-mode recording keeps it (PAPI_profil's buffer, with its
/// settings).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistogramRecord {
    pub event: EventIndex,
    /// The module, as in [`Mmap::path`].
    pub path: String,
    pub build_id: Option<BuildId>,
    /// The file offset of the region's first byte.
    pub start: FileOffset,
    /// PAPI's scale (131072, or 2..=65536).
    pub scale: u32,
    /// The buckets, 16, 32 or 64 bits wide. Read from a recording, they
    /// are sparse: only the runs that counted take memory.
    pub buckets: Buckets,
}

/// A GNU build-id (the `.note.gnu.build-id` payload).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BuildId(pub Vec<u8>);

impl fmt::Display for BuildId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl fmt::Debug for BuildId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BuildId({self})")
    }
}

impl BuildId {
    /// Parses the hexadecimal form written by `Display`.
    pub fn from_hex(text: &str) -> Option<BuildId> {
        if !text.len().is_multiple_of(2) {
            return None;
        }
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
            .collect::<Option<Vec<u8>>>()
            .map(BuildId)
    }
}

impl Record {
    /// The record's timestamp.
    pub fn time(&self) -> u64 {
        match self {
            Record::Sample(r) => r.time,
            Record::Mmap(r) => r.time,
            Record::Comm(r) => r.time,
            Record::Fork(r) | Record::Exit(r) => r.time,
            Record::Lost(r) => r.time,
            Record::Throttle(r) => r.time,
            Record::Histogram(_) => 0,
            Record::Switch(r) => r.time,
        }
    }
}
