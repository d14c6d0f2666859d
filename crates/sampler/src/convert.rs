//! Kernel ring-buffer records -> model records.
//!
//! Parsing goes through a `Visitor` rather than `Record::parse_record`,
//! because the latter drops the `sample_id_all` trailer, and with it the time
//! of every non-sample record, which the report needs to order mappings
//! against samples.

use rustc_hash::FxHashMap;

use perf_event::Counter;
use perf_event::data::endian::Native;
use perf_event::data::parse::{ParseConfig, Parser};
use perf_event::data::{self as perf, RecordMetadata, SampleFlags, SampleRegsAbi, Visitor};
use perf_event_open_sys::bindings::{
    PERF_RECORD_MISC_COMM_EXEC, PERF_RECORD_MISC_CPUMODE_MASK, PERF_RECORD_MISC_GUEST_KERNEL,
    PERF_RECORD_MISC_GUEST_USER, PERF_RECORD_MISC_HYPERVISOR, PERF_RECORD_MISC_KERNEL,
    PERF_RECORD_MISC_SWITCH_OUT, PERF_RECORD_MISC_SWITCH_OUT_PREEMPT, PERF_RECORD_MISC_USER,
    PERF_RECORD_SAMPLE, PERF_RECORD_SWITCH, perf_event_attr, perf_event_header,
};
use profiler_model::{
    Avma, BuildId, CallchainEntry, Comm, CpuMode, EventIndex, FileOffset, Lost, Mmap, Record,
    Sample, Sampling, Switch, TaskEvent, Throttle, UserStack,
};

/// x86-64 user registers in perf's numbering
/// (`arch/x86/include/uapi/asm/perf_regs.h`): what an unwinder starts
/// from, asked of each sample by the counters and read back here.
pub(crate) const REG_BP: u64 = 6;
pub(crate) const REG_SP: u64 = 7;
pub(crate) const REG_IP: u64 = 8;

/// Converts one ring-buffer record. `None` for record kinds the profiler does
/// not keep (and for records the parser cannot read). A sample's stack copy
/// goes into `spare`'s buffer: handing it back after each sample saves an
/// allocation per copy.
///
/// The events sharing a ring need not lay their samples out alike (a group
/// leader's carry counts, a frequency-sampled event's its period): a sample
/// is parsed as its own event lays it out, found by the id that
/// `PERF_SAMPLE_IDENTIFIER` puts first. Other records end in the same
/// `sample_id_all` fields for every event, and parse with `config`.
pub(crate) fn convert(
    record: &perf_event::Record<'_>,
    config: &ParseConfig<Native>,
    events_by_id: &FxHashMap<u64, StreamEvent>,
    spare: &mut Vec<u8>,
) -> Option<Record> {
    convert_bytes(
        record.ty(),
        record.misc(),
        &record.to_contiguous(),
        config,
        events_by_id,
        spare,
    )
}

/// [`convert`], from a record's type, misc bits and payload.
fn convert_bytes(
    ty: u32,
    misc: u16,
    bytes: &[u8],
    config: &ParseConfig<Native>,
    events_by_id: &FxHashMap<u64, StreamEvent>,
    spare: &mut Vec<u8>,
) -> Option<Record> {
    let header = perf_event_header {
        type_: ty,
        misc,
        size: (bytes.len() + size_of::<perf_event_header>()) as u16,
    };
    let config = match ty {
        PERF_RECORD_SAMPLE => {
            let id = u64::from_ne_bytes(bytes.get(..8)?.try_into().ok()?);
            let event = events_by_id.get(&id);
            let config = event.map_or(config, |e| &e.config);
            if let Some(sample) = plain_sample(bytes, misc, config.sample_type(), event) {
                return Some(Record::Sample(sample));
            }
            config
        }
        // perf-event-data reads a switch as a record of unknown type, and
        // fails on its empty body: its `sample_id_all` fields are all it
        // has, the thread and the time first.
        PERF_RECORD_SWITCH => return plain_switch(bytes, misc, config.sample_type()),
        _ => config,
    };
    let visitor = Converter {
        events_by_id,
        spare: &mut *spare,
    };
    match Parser::new(bytes, config.clone()).parse_record_with_header(visitor, header) {
        Ok(record) => record,
        Err(_) if ty == PERF_RECORD_SAMPLE && without_user_registers(bytes, config) => {
            let visitor = Converter {
                events_by_id,
                spare,
            };
            Parser::new(bytes, config_without_user_stack(config))
                .parse_record_with_header(visitor, header)
                .ok()?
        }
        Err(_) => None,
    }
}

/// The fields a plain sample may have: fixed-size ones and the call chain.
const PLAIN: SampleFlags = SampleFlags::IDENTIFIER
    .union(SampleFlags::IP)
    .union(SampleFlags::TID)
    .union(SampleFlags::TIME)
    .union(SampleFlags::CPU)
    .union(SampleFlags::PERIOD)
    .union(SampleFlags::CALLCHAIN);

/// A sample laid out by `flags` read word by word, where `flags` are
/// [`PLAIN`] ones (and carry the time, thread and address every sample
/// needs): the recorder's samples without stack copies or group counts.
/// The general parser takes several times as long over them, which is
/// most of what recording costs the recorder. `None` where `flags` ask
/// for more, or the record is cut short: the parser then has its say.
fn plain_sample(
    bytes: &[u8],
    misc: u16,
    flags: SampleFlags,
    event: Option<&StreamEvent>,
) -> Option<Sample> {
    let needed = SampleFlags::IP | SampleFlags::TID | SampleFlags::TIME;
    if !PLAIN.contains(flags) || !flags.contains(needed) {
        return None;
    }
    // The kernel's order (perf_output_sample): identifier, ip, pid and
    // tid, time, cpu, period, call chain.
    let mut words = bytes
        .chunks_exact(8)
        .map(|word| u64::from_ne_bytes(word.try_into().unwrap_or_default()));
    let mut field = |flag: SampleFlags| match flags.contains(flag) {
        true => words.next().map(Some),
        false => Some(None),
    };
    field(SampleFlags::IDENTIFIER)?;
    let ip = field(SampleFlags::IP)??;
    let pid_tid = field(SampleFlags::TID)??;
    let time = field(SampleFlags::TIME)??;
    let cpu = field(SampleFlags::CPU)?;
    let period = field(SampleFlags::PERIOD)?;
    let callchain = match field(SampleFlags::CALLCHAIN)? {
        Some(len) => {
            let len = usize::try_from(len).ok()?;
            let chain: Vec<CallchainEntry> = (words.by_ref().take(len))
                .map(CallchainEntry::from_raw)
                .collect();
            (chain.len() == len).then_some(chain)?
        }
        None => Vec::new(),
    };
    Some(Sample {
        time,
        pid: pid_tid as u32,
        tid: (pid_tid >> 32) as u32,
        cpu: cpu.map_or(0, |cpu| cpu as u32),
        event: event.map_or(0, |e| e.index),
        mode: cpu_mode(misc),
        ip: Avma(ip),
        period: period.or(event.and_then(|e| e.period)).unwrap_or(1),
        callchain,
        user_stack: None,
        read: Vec::new(),
    })
}

/// A switch record (`PERF_RECORD_SWITCH`), whose payload is the
/// `sample_id_all` fields that `flags` ask for, in the kernel's order
/// (`__perf_event__output_id_sample`): the thread, then the time, then
/// others. `None` without both, or when the record is cut short.
fn plain_switch(bytes: &[u8], misc: u16, flags: SampleFlags) -> Option<Record> {
    if !flags.contains(SampleFlags::TID | SampleFlags::TIME) {
        return None;
    }
    let word = |at: usize| Some(u64::from_ne_bytes(bytes.get(at..at + 8)?.try_into().ok()?));
    let (pid_tid, time) = (word(0)?, word(8)?);
    let misc = u32::from(misc);
    Some(Record::Switch(Switch {
        time,
        pid: pid_tid as u32,
        tid: (pid_tid >> 32) as u32,
        out: misc & PERF_RECORD_MISC_SWITCH_OUT != 0,
        preempt: misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT != 0,
        sampled: false,
    }))
}

/// Whether a sample that asked for the user registers and stack, last of
/// its fields, got neither: the kernel then writes the ABI word NONE and a
/// stack size of 0 alone (the thread had no user context: a kernel thread),
/// where perf-event-data expects the registers after the ABI word anyway,
/// and fails.
fn without_user_registers(bytes: &[u8], config: &ParseConfig<Native>) -> bool {
    let user_stack = SampleFlags::REGS_USER | SampleFlags::STACK_USER;
    // The fields the kernel writes after the stack: those of higher bits,
    // but the identifier, which it writes first.
    let later = !SampleFlags::from_bits_retain((SampleFlags::STACK_USER.bits() << 1) - 1)
        - SampleFlags::IDENTIFIER;
    let flags = config.sample_type();
    flags.contains(user_stack)
        && (flags & later).is_empty()
        && bytes.len() >= 16
        && bytes[bytes.len() - 16..].iter().all(|&b| b == 0)
}

/// `config` without the user registers and stack: what a sample that had
/// none parses with, its two empty fields left over at the end.
fn config_without_user_stack(config: &ParseConfig<Native>) -> ParseConfig<Native> {
    let mut attr = perf_event_attr::default();
    attr.sample_type =
        (config.sample_type() - SampleFlags::REGS_USER - SampleFlags::STACK_USER).bits();
    attr.read_format = config.read_format().bits();
    ParseConfig::from(attr)
}

/// The event a counter's records belong to.
#[derive(Clone, Debug)]
pub(crate) struct StreamEvent {
    pub index: EventIndex,
    /// Its fixed period, which its samples do not carry; `None` when
    /// sampled by frequency (each sample then carries its period).
    pub period: Option<u64>,
    /// How its samples are laid out.
    pub config: ParseConfig<Native>,
}

impl StreamEvent {
    /// The records of `counter`, opened for event `index` at `sampling`.
    pub(crate) fn of(sampling: Sampling, index: usize, counter: &Counter) -> StreamEvent {
        StreamEvent {
            index: index as EventIndex,
            period: match sampling {
                Sampling::Period(period) => Some(period),
                Sampling::Frequency(_) => None,
            },
            config: counter.config().clone(),
        }
    }
}

struct Converter<'a> {
    events_by_id: &'a FxHashMap<u64, StreamEvent>,
    /// The buffer a stack copy goes into.
    spare: &'a mut Vec<u8>,
}

impl Converter<'_> {
    fn stream(&self, id: Option<u64>) -> Option<&StreamEvent> {
        id.and_then(|id| self.events_by_id.get(&id))
    }

    fn event(&self, id: Option<u64>) -> EventIndex {
        self.stream(id).map_or(0, |e| e.index)
    }
}

impl Converter<'_> {
    /// A group leader's sample: each member's count, by event.
    fn read(&self, s: &perf::Sample<'_>) -> Vec<(EventIndex, u64)> {
        let Some(group) = s.values() else {
            return Vec::new();
        };
        let own = s.id();
        group
            .entries()
            .filter(|entry| entry.id().is_some() && entry.id() != own)
            .filter_map(|entry| Some((self.events_by_id.get(&entry.id()?)?.index, entry.value())))
            .collect()
    }
}

fn time(metadata: &RecordMetadata) -> u64 {
    metadata.sample_id().time().unwrap_or(0)
}

fn cpu_mode(misc: u16) -> CpuMode {
    match u32::from(misc) & PERF_RECORD_MISC_CPUMODE_MASK {
        PERF_RECORD_MISC_KERNEL => CpuMode::Kernel,
        PERF_RECORD_MISC_USER => CpuMode::User,
        PERF_RECORD_MISC_HYPERVISOR => CpuMode::Hypervisor,
        PERF_RECORD_MISC_GUEST_KERNEL => CpuMode::GuestKernel,
        PERF_RECORD_MISC_GUEST_USER => CpuMode::GuestUser,
        _ => CpuMode::Unknown,
    }
}

impl<'p> Visitor<'p> for Converter<'_> {
    type Output = Option<Record>;

    fn visit_unimplemented(self, _: RecordMetadata) -> Self::Output {
        None
    }

    fn visit_sample(self, s: perf::Sample<'p>, metadata: RecordMetadata) -> Self::Output {
        let event = self.stream(s.id());
        Some(Record::Sample(Sample {
            time: s.time()?,
            pid: s.pid()?,
            tid: s.tid()?,
            cpu: s.cpu().unwrap_or(0),
            event: event.map_or(0, |e| e.index),
            mode: cpu_mode(metadata.misc()),
            ip: Avma(s.ip()?),
            period: s.period().or(event.and_then(|e| e.period)).unwrap_or(1),
            callchain: (s.callchain().unwrap_or_default().iter())
                .map(|&raw| CallchainEntry::from_raw(raw))
                .collect(),
            read: self.read(&s),
            user_stack: user_stack(&s, self.spare),
        }))
    }

    fn visit_mmap2(self, m: perf::Mmap2<'p>, metadata: RecordMetadata) -> Self::Output {
        Some(Record::Mmap(Mmap {
            time: time(&metadata),
            pid: m.pid,
            tid: m.tid,
            start: Avma(m.addr),
            len: m.len,
            offset: FileOffset(m.pgoff),
            path: String::from_utf8_lossy(&m.filename).into_owned(),
            build_id: m
                .build_id()
                .filter(|id| !id.is_empty())
                .map(|id| BuildId(id.to_vec())),
        }))
    }

    fn visit_comm(self, c: perf::Comm<'p>, metadata: RecordMetadata) -> Self::Output {
        Some(Record::Comm(Comm {
            time: time(&metadata),
            pid: c.pid,
            tid: c.tid,
            name: String::from_utf8_lossy(&c.comm).into_owned(),
            exec: u32::from(metadata.misc()) & PERF_RECORD_MISC_COMM_EXEC != 0,
        }))
    }

    fn visit_fork(self, f: perf::Fork, _: RecordMetadata) -> Self::Output {
        Some(Record::Fork(task(&f)))
    }

    fn visit_exit(self, e: perf::Exit, _: RecordMetadata) -> Self::Output {
        Some(Record::Exit(task(&e)))
    }

    fn visit_lost(self, l: perf::Lost, metadata: RecordMetadata) -> Self::Output {
        Some(Record::Lost(Lost {
            time: time(&metadata),
            event: self.event(Some(l.id)),
            count: l.lost,
        }))
    }

    fn visit_lost_samples(self, l: perf::LostSamples, metadata: RecordMetadata) -> Self::Output {
        let event = self.event(metadata.sample_id().id());
        Some(Record::Lost(Lost {
            time: time(&metadata),
            event,
            count: l.lost,
        }))
    }

    fn visit_throttle(self, t: perf::Throttle, _: RecordMetadata) -> Self::Output {
        Some(throttle(self.event(Some(t.id)), &t, false))
    }

    fn visit_unthrottle(self, t: perf::Throttle, _: RecordMetadata) -> Self::Output {
        Some(throttle(self.event(Some(t.id)), &t, true))
    }

    /// Whole CPUs' switches (`-a --off-cpu`): each of the task switching.
    fn visit_switch_cpu_wide(
        self,
        _: perf::SwitchCpuWide,
        metadata: RecordMetadata,
    ) -> Self::Output {
        switch(&metadata)
    }
}

/// A switch record: the thread and time are its `sample_id_all` fields',
/// which direction and why are in its misc bits.
fn switch(metadata: &RecordMetadata) -> Option<Record> {
    let id = metadata.sample_id();
    let misc = u32::from(metadata.misc());
    Some(Record::Switch(Switch {
        time: id.time()?,
        pid: id.pid()?,
        tid: id.tid()?,
        out: misc & PERF_RECORD_MISC_SWITCH_OUT != 0,
        preempt: misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT != 0,
        sampled: false,
    }))
}

/// The registers and stack copy of a `--call-graph dwarf` sample; `None`
/// when the kernel had no user context to copy (the ABI is NONE).
fn user_stack(s: &perf::Sample<'_>, spare: &mut Vec<u8>) -> Option<UserStack> {
    let regs = s.regs_user()?;
    if regs.abi == SampleRegsAbi::NONE {
        return None;
    }
    let register = |bit: u64| -> Option<Avma> {
        if regs.mask & (1 << bit) == 0 {
            return None;
        }
        let index = (regs.mask & ((1 << bit) - 1)).count_ones() as usize;
        regs.regs.get(index).copied().map(Avma)
    };
    let (ip, sp, bp) = (register(REG_IP)?, register(REG_SP)?, register(REG_BP)?);
    let mut bytes = std::mem::take(spare);
    bytes.clear();
    bytes.extend_from_slice(s.stack_user().unwrap_or_default());
    Some(UserStack { ip, sp, bp, bytes })
}

fn task(e: &perf::Exit) -> TaskEvent {
    TaskEvent {
        time: e.time,
        pid: e.pid,
        ppid: e.ppid,
        tid: e.tid,
        ptid: e.ptid,
    }
}

fn throttle(event: EventIndex, t: &perf::Throttle, unthrottle: bool) -> Record {
    Record::Throttle(Throttle {
        time: t.time,
        event,
        unthrottle,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: u64 = 42;

    /// How the recorder lays out the samples of a frequency-sampled event
    /// with call chains and stack copies.
    fn events() -> FxHashMap<u64, StreamEvent> {
        let mut attr = perf_event_attr::default();
        attr.sample_type = (SampleFlags::IDENTIFIER
            | SampleFlags::IP
            | SampleFlags::TID
            | SampleFlags::TIME
            | SampleFlags::CPU
            | SampleFlags::PERIOD
            | SampleFlags::CALLCHAIN
            | SampleFlags::REGS_USER
            | SampleFlags::STACK_USER)
            .bits();
        attr.sample_regs_user = (1 << REG_BP) | (1 << REG_SP) | (1 << REG_IP);
        let config = ParseConfig::from(attr);
        FxHashMap::from_iter([(
            ID,
            StreamEvent {
                index: 0,
                period: None,
                config,
            },
        )])
    }

    /// A sample's payload: its fixed fields, then `callchain`, then `tail`.
    fn payload(callchain: &[u64], tail: &[u64]) -> Vec<u8> {
        let pid_tid = 7 | (8 << 32);
        [ID, 0x1000, pid_tid, 123, 1, 250_000, callchain.len() as u64]
            .iter()
            .chain(callchain)
            .chain(tail)
            .flat_map(|word| word.to_ne_bytes())
            .collect()
    }

    fn sample(misc: u16, bytes: &[u8]) -> Sample {
        let events = events();
        let config = &events[&ID].config;
        match convert_bytes(
            PERF_RECORD_SAMPLE,
            misc,
            bytes,
            config,
            &events,
            &mut Vec::new(),
        ) {
            Some(Record::Sample(sample)) => sample,
            other => panic!("{other:?}"),
        }
    }

    fn raw(callchain: &[CallchainEntry]) -> Vec<u64> {
        callchain.iter().map(|entry| entry.to_raw()).collect()
    }

    /// The general parser's reading of a sample.
    fn parsed(
        bytes: &[u8],
        config: &ParseConfig<Native>,
        events: &FxHashMap<u64, StreamEvent>,
    ) -> Option<Record> {
        let header = perf_event_header {
            type_: PERF_RECORD_SAMPLE,
            misc: PERF_RECORD_MISC_USER as u16,
            size: (bytes.len() + size_of::<perf_event_header>()) as u16,
        };
        let visitor = Converter {
            events_by_id: events,
            spare: &mut Vec::new(),
        };
        (Parser::new(bytes, config.clone()))
            .parse_record_with_header(visitor, header)
            .ok()?
    }

    #[test]
    fn plain_samples_are_read_as_the_parser_reads_them() {
        let optional = [
            SampleFlags::CPU,
            SampleFlags::PERIOD,
            SampleFlags::CALLCHAIN,
        ];
        for chosen in 0..8 {
            let mut flags =
                SampleFlags::IDENTIFIER | SampleFlags::IP | SampleFlags::TID | SampleFlags::TIME;
            for (bit, &flag) in optional.iter().enumerate() {
                if chosen & (1 << bit) != 0 {
                    flags |= flag;
                }
            }
            let mut attr = perf_event_attr::default();
            attr.sample_type = flags.bits();
            let config = ParseConfig::from(attr);
            let event = StreamEvent {
                index: 3,
                period: Some(4000),
                config: config.clone(),
            };
            let events = FxHashMap::from_iter([(ID, event)]);
            let mut words = vec![ID, 0x1000, 7 | (8 << 32), 123];
            if flags.contains(SampleFlags::CPU) {
                words.push(1);
            }
            if flags.contains(SampleFlags::PERIOD) {
                words.push(250_000);
            }
            if flags.contains(SampleFlags::CALLCHAIN) {
                words.extend([3, u64::MAX - 511, 0x1000, 0x2000]);
            }
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
            let misc = PERF_RECORD_MISC_USER as u16;
            let plain = plain_sample(&bytes, misc, flags, events.get(&ID));
            assert!(plain.is_some(), "{flags:?}");
            let by_parser = parsed(&bytes, &config, &events);
            assert_eq!(plain.map(Record::Sample), by_parser, "{flags:?}");
            // A record cut short is left to the parser, which refuses it.
            let cut = &bytes[..bytes.len() - 8];
            assert_eq!(plain_sample(cut, misc, flags, events.get(&ID)), None);
            assert_eq!(parsed(cut, &config, &events), None, "{flags:?}");
        }
    }

    #[test]
    fn switches_are_read_as_their_sample_id_fields_say() {
        let events = events();
        let config = &events[&ID].config;
        // pid 7, tid 8; time 123; cpu 1; the identifier.
        let bytes: Vec<u8> = [7 | (8 << 32), 123, 1, ID]
            .iter()
            .flat_map(|w: &u64| w.to_ne_bytes())
            .collect();
        let out_preempted =
            (PERF_RECORD_MISC_SWITCH_OUT | PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) as u16;
        let read = |misc| {
            convert_bytes(
                PERF_RECORD_SWITCH,
                misc,
                &bytes,
                config,
                &events,
                &mut Vec::new(),
            )
        };
        let switch = |out, preempt| {
            Some(Record::Switch(Switch {
                time: 123,
                pid: 7,
                tid: 8,
                out,
                preempt,
                sampled: false,
            }))
        };
        assert_eq!(read(out_preempted), switch(true, true));
        assert_eq!(read(0), switch(false, false));
        // The same fields as perf-event-data reads them.
        let header = perf_event_header {
            type_: PERF_RECORD_SWITCH,
            misc: 0,
            size: (bytes.len() + size_of::<perf_event_header>()) as u16,
        };
        let mut attr = perf_event_attr::default();
        attr.sample_type = config.sample_type().bits();
        attr.set_sample_id_all(1);
        let mut parser = Parser::new(&bytes[..], ParseConfig::<Native>::from(attr));
        let (_, metadata) = parser.parse_metadata_with_header(header).unwrap();
        assert_eq!(super::switch(&metadata), switch(false, false));
        assert_eq!(
            convert_bytes(
                PERF_RECORD_SWITCH,
                0,
                &bytes[..12],
                config,
                &events,
                &mut Vec::new()
            ),
            None
        );
    }

    #[test]
    fn samples_with_stack_copies_or_group_counts_go_to_the_parser() {
        let events = events();
        let flags = events[&ID].config.sample_type();
        let bytes = payload(&[0x1000], &[2, 0x7f10, 0x7f00, 0x1000, 0]);
        assert_eq!(plain_sample(&bytes, 0, flags, events.get(&ID)), None);
        let with_read = SampleFlags::IDENTIFIER
            | SampleFlags::IP
            | SampleFlags::TID
            | SampleFlags::TIME
            | SampleFlags::READ;
        assert_eq!(plain_sample(&bytes, 0, with_read, None), None);
    }

    #[test]
    fn a_sample_with_user_registers_carries_its_stack_copy() {
        let user = u64::MAX - 511;
        // ABI 64, then bp, sp, ip (by register number), then 16 bytes of
        // stack and how many of them the kernel filled.
        let tail = [2, 0x7f10, 0x7f00, 0x1000, 16, 0xaaaa, 0xbbbb, 16];
        let misc = PERF_RECORD_MISC_USER as u16;
        let s = sample(misc, &payload(&[user, 0x1000, 0x2000], &tail));
        assert_eq!((s.pid, s.tid, s.time, s.period), (7, 8, 123, 250_000));
        assert_eq!(raw(&s.callchain), [user, 0x1000, 0x2000]);
        let stack = s.user_stack.unwrap();
        assert_eq!(
            (stack.ip, stack.sp, stack.bp),
            (Avma(0x1000), Avma(0x7f00), Avma(0x7f10))
        );
        assert_eq!(stack.read_u64(0x7f08), Some(0xbbbb));
    }

    #[test]
    fn a_sample_without_user_registers_is_kept_without_a_stack() {
        // A kernel thread: the ABI word NONE and an empty stack, nothing
        // else, where the parser would read three registers.
        let kernel = u64::MAX - 127;
        let misc = PERF_RECORD_MISC_KERNEL as u16;
        let s = sample(misc, &payload(&[kernel, 0xffff_ffff_8100_0000], &[0, 0]));
        assert_eq!(s.mode, CpuMode::Kernel);
        assert_eq!(raw(&s.callchain), [kernel, 0xffff_ffff_8100_0000]);
        assert_eq!(s.user_stack, None);
        // A record cut short is still refused.
        let bytes = payload(&[kernel, 0xffff_ffff_8100_0000], &[0]);
        let events = events();
        let config = &events[&ID].config;
        let spare = &mut Vec::new();
        let converted = convert_bytes(PERF_RECORD_SAMPLE, misc, &bytes, config, &events, spare);
        assert_eq!(converted, None);
    }
}
