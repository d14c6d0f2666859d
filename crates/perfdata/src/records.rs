//! perf's records as the profiler's: one small handler per record type.
//! Mappings take their build-ids from the MMAP2 record itself (`perf record
//! --buildid-mmap`) or from the file's build-id table; samples keep their
//! call chains as the kernel wrote them (the same `PERF_CONTEXT_*`
//! markers) and their stack copies for the unwinder.
//!
//! Records the profiler has no use for are counted by kind, so that what
//! was skipped can be said once.
//!
//! The kernel (6.18 at least) leaves an MMAP2 record's build-id flag set
//! where it wrote the file's device and inode, when another session
//! watching the same mappings records build-ids: the build-id's length is
//! then the device's major number (254 for `fe:00`). Such a record is read
//! as the device and inode it holds (linux-perf-event-reader would assert
//! on the length), and counted.

use std::collections::HashMap;
use std::io;

use linux_perf_data::linux_perf_event_reader::{
    CommOrExecRecord, CpuMode as PerfCpuMode, EventRecord, ForkOrExitRecord, Mmap2FileId,
    Mmap2Record, MmapRecord, RawData, RawEventRecord, RecordType, SampleRecord, SamplingPolicy,
    constants::PERF_RECORD_MISC_MMAP_BUILD_ID,
};
use linux_perf_data::{DsoInfo, DsoKey, Endianness, PerfFileRecord, UserRecordType};
use profiler_model::{
    Avma, BuildId, CallchainEntry, Comm, CpuMode, EventIndex, FileOffset, Lost, Mmap, Record,
    Sample, TaskEvent, Throttle, UserStack,
};

/// `PROT_EXEC` in an MMAP2 record's protection.
const PROT_EXEC: u32 = 4;
/// Where an MMAP2 record's body states its build-id's length, and the
/// first length past the 20 bytes its field holds.
const BUILD_ID_LEN_AT: usize = 32;
const BUILD_ID_TOO_LONG: u8 = 21;
/// x86-64's `perf_regs` numbers.
const REG_BP: u64 = 6;
const REG_SP: u64 = 7;
const REG_IP: u64 = 8;
/// Kernel record types linux-perf-data hands over unparsed.
const AUX: u32 = 11;
const ITRACE_START: u32 = 12;
const LOST_SAMPLES: u32 = 13;
const KSYMBOL: u32 = 17;
const BPF_EVENT: u32 = 18;
const TEXT_POKE: u32 = 20;
const AUX_OUTPUT_HW_ID: u32 = 21;

/// What the conversion needs to know of the file.
#[derive(Debug, Default)]
pub(crate) struct FileFacts {
    pub build_ids: HashMap<DsoKey, DsoInfo>,
    /// Per event: the period of samples that do not state theirs (`perf
    /// record -c N` leaves it out).
    pub periods: Vec<u64>,
    /// Stack copies are unwound with x86-64's registers only.
    pub x86_64: bool,
}

/// Records of kinds the profiler does not read, and records read otherwise
/// than they are marked, counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Skipped {
    /// AUX area tracing (Intel PT, BTS, CoreSight, SPE): the trace and its
    /// bookkeeping.
    pub aux: u64,
    /// BPF programs and kernel JIT code announced (`KSYMBOL`, `BPF_EVENT`).
    pub jit_symbols: u64,
    /// Records of a kind this reader does not know.
    pub unknown: u64,
    /// MMAP2 records marked as carrying a build-id, of a length no
    /// build-id has, read as the device and inode they hold.
    pub inode_mappings: u64,
}

/// Turns perf's records into the profiler's.
pub(crate) struct Converter<'a> {
    pub facts: &'a FileFacts,
    pub skipped: Skipped,
}

impl Converter<'_> {
    /// The profiler's record for `record`, if it has one.
    pub(crate) fn convert(&mut self, record: PerfFileRecord<'_>) -> io::Result<Option<Record>> {
        let (attr_index, mut raw) = match record {
            PerfFileRecord::EventRecord { attr_index, record } => (attr_index, record),
            PerfFileRecord::UserRecord(user) => {
                self.user_record(user.record_type);
                return Ok(None);
            }
        };
        let event = EventIndex::try_from(attr_index).unwrap_or(EventIndex::MAX);
        let time = raw.timestamp().unwrap_or(0);
        if raw.record_type == RecordType::MMAP2 && holds_inode(&raw) {
            raw.misc &= !PERF_RECORD_MISC_MMAP_BUILD_ID;
            self.skipped.inode_mappings += 1;
        }
        Ok(match raw.parse()? {
            EventRecord::Sample(sample) => Some(self.sample(&sample, event)),
            EventRecord::Mmap(mmap) => self.mmap(&mmap, time),
            EventRecord::Mmap2(mmap) => self.mmap2(&mmap, time),
            EventRecord::Comm(comm) => Some(comm_record(&comm, time)),
            EventRecord::Fork(task) => Some(Record::Fork(task_event(&task))),
            EventRecord::Exit(task) => Some(Record::Exit(task_event(&task))),
            EventRecord::Lost(lost) => Some(Record::Lost(Lost {
                time,
                event,
                count: lost.count,
            })),
            EventRecord::Throttle(_) | EventRecord::Unthrottle(_) => {
                Some(Record::Throttle(Throttle {
                    time,
                    event,
                    unthrottle: raw.record_type == RecordType::UNTHROTTLE,
                }))
            }
            EventRecord::ContextSwitch(_) => None,
            EventRecord::Raw(raw) => self.raw_record(&raw, event, time),
            _ => {
                self.skipped.unknown += 1;
                None
            }
        })
    }

    fn user_record(&mut self, kind: UserRecordType) {
        if matches!(
            kind,
            UserRecordType::PERF_AUXTRACE_INFO
                | UserRecordType::PERF_AUXTRACE
                | UserRecordType::PERF_AUXTRACE_ERROR
        ) {
            self.skipped.aux += 1;
        }
    }

    /// Kernel records linux-perf-data does not parse.
    fn raw_record(
        &mut self,
        raw: &RawEventRecord<'_>,
        event: EventIndex,
        time: u64,
    ) -> Option<Record> {
        match raw.record_type.0 {
            LOST_SAMPLES => {
                let bytes = raw.data.as_slice();
                let word: [u8; 8] = bytes.get(..8)?.try_into().ok()?;
                let count = match raw.parse_info.endian {
                    Endianness::LittleEndian => u64::from_le_bytes(word),
                    Endianness::BigEndian => u64::from_be_bytes(word),
                };
                return Some(Record::Lost(Lost { time, event, count }));
            }
            AUX | ITRACE_START | AUX_OUTPUT_HW_ID => self.skipped.aux += 1,
            KSYMBOL | BPF_EVENT => self.skipped.jit_symbols += 1,
            // Code patched at run time, namespaces, cgroups, switches and
            // group reads change no name or mapping the views use.
            TEXT_POKE | 8 | 14..=16 | 19 => {}
            _ => self.skipped.unknown += 1,
        }
        None
    }

    fn sample(&self, sample: &SampleRecord<'_>, event: EventIndex) -> Record {
        let period = sample.period.unwrap_or_else(|| {
            let fixed = self.facts.periods.get(usize::from(event));
            fixed.copied().unwrap_or(1)
        });
        let callchain = match &sample.callchain {
            Some(chain) => (0..chain.len())
                .filter_map(|i| chain.get(i))
                .map(CallchainEntry::from_raw)
                .collect(),
            None => Vec::new(),
        };
        Record::Sample(Sample {
            time: sample.timestamp.unwrap_or(0),
            pid: id(sample.pid),
            tid: id(sample.tid),
            cpu: sample.cpu.unwrap_or(0),
            event,
            mode: cpu_mode(sample.cpu_mode),
            ip: Avma(sample.ip.unwrap_or(0)),
            period,
            callchain,
            user_stack: self.user_stack(sample),
            read: Vec::new(),
        })
    }

    /// The registers and stack copy of a `--call-graph dwarf` sample.
    fn user_stack(&self, sample: &SampleRecord<'_>) -> Option<UserStack> {
        if !self.facts.x86_64 {
            return None;
        }
        let regs = sample.user_regs.as_ref()?;
        let (stack, dynamic_size) = sample.user_stack.as_ref()?;
        let bytes = stack.as_slice();
        let len = usize::try_from(*dynamic_size).map_or(bytes.len(), |n| n.min(bytes.len()));
        Some(UserStack {
            ip: Avma(regs.get(REG_IP)?),
            sp: Avma(regs.get(REG_SP)?),
            bp: Avma(regs.get(REG_BP).unwrap_or(0)),
            bytes: bytes[..len].to_vec(),
        })
    }

    /// A mapping of the old kind, as perf writes for the kernel and its
    /// modules (pid -1), and for processes that were running before it.
    fn mmap(&self, mmap: &MmapRecord<'_>, time: u64) -> Option<Record> {
        if mmap.pid == -1 || !mmap.is_executable {
            // Kernel samples are placed by their address alone.
            return None;
        }
        let path = mmap.path.as_slice();
        Some(Record::Mmap(Mmap {
            time,
            pid: id(Some(mmap.pid)),
            tid: id(Some(mmap.tid)),
            start: Avma(mmap.address),
            len: mmap.length,
            offset: FileOffset(mmap.page_offset),
            path: text(&path),
            build_id: self.build_id(&path, mmap.cpu_mode),
        }))
    }

    fn mmap2(&self, mmap: &Mmap2Record<'_>, time: u64) -> Option<Record> {
        if mmap.pid == -1 || mmap.protection & PROT_EXEC == 0 {
            return None;
        }
        let path = mmap.path.as_slice();
        let build_id = match &mmap.file_id {
            Mmap2FileId::BuildId(bytes) => Some(BuildId(bytes.clone())),
            Mmap2FileId::InodeAndVersion(_) => self.build_id(&path, mmap.cpu_mode),
        };
        Some(Record::Mmap(Mmap {
            time,
            pid: id(Some(mmap.pid)),
            tid: id(Some(mmap.tid)),
            start: Avma(mmap.address),
            len: mmap.length,
            offset: FileOffset(mmap.page_offset),
            path: text(&path),
            build_id,
        }))
    }

    /// The build-id the file's table gives the module at `path`.
    fn build_id(&self, path: &[u8], mode: PerfCpuMode) -> Option<BuildId> {
        let key = DsoKey::detect(path, mode)?;
        let info = self.facts.build_ids.get(&key)?;
        Some(BuildId(info.build_id.clone()))
    }
}

/// Whether the MMAP2 record `raw` is marked as carrying a build-id but
/// holds the device and inode: its build-id's length is 0, which the kernel
/// never marks, or more than the field holds.
fn holds_inode(raw: &RawEventRecord<'_>) -> bool {
    let length = raw.data.get(BUILD_ID_LEN_AT..BUILD_ID_LEN_AT + 1);
    let impossible = |length: RawData<'_>| matches!(length.as_slice()[0], 0 | BUILD_ID_TOO_LONG..);
    raw.misc & PERF_RECORD_MISC_MMAP_BUILD_ID != 0 && length.is_some_and(impossible)
}

fn comm_record(comm: &CommOrExecRecord<'_>, time: u64) -> Record {
    Record::Comm(Comm {
        time,
        pid: id(Some(comm.pid)),
        tid: id(Some(comm.tid)),
        name: text(&comm.name.as_slice()),
        exec: comm.is_execve,
    })
}

fn task_event(task: &ForkOrExitRecord) -> TaskEvent {
    TaskEvent {
        time: task.timestamp,
        pid: id(Some(task.pid)),
        ppid: id(Some(task.ppid)),
        tid: id(Some(task.tid)),
        ptid: id(Some(task.ptid)),
    }
}

/// A process or thread id; perf's -1 (none) becomes the largest id.
fn id(value: Option<i32>) -> u32 {
    value.map_or(0, |v| v as u32)
}

/// A path or name, up to its first NUL.
fn text(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

fn cpu_mode(mode: PerfCpuMode) -> CpuMode {
    match mode {
        PerfCpuMode::Kernel => CpuMode::Kernel,
        PerfCpuMode::User => CpuMode::User,
        PerfCpuMode::Hypervisor => CpuMode::Hypervisor,
        PerfCpuMode::GuestKernel => CpuMode::GuestKernel,
        PerfCpuMode::GuestUser => CpuMode::GuestUser,
        _ => CpuMode::Unknown,
    }
}

/// The period samples of an event carry when they state none.
pub(crate) fn fixed_period(policy: SamplingPolicy) -> u64 {
    match policy {
        SamplingPolicy::Period(period) => period.get(),
        _ => 1,
    }
}
