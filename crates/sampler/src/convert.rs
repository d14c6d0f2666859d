//! Kernel ring-buffer records -> model records.
//!
//! Parsing goes through a `Visitor` rather than `Record::parse_record`,
//! because the latter drops the `sample_id_all` trailer, and with it the time
//! of every non-sample record, which the report needs to order mappings
//! against samples.

use std::collections::HashMap;

use perf_event::Counter;
use perf_event::data::endian::Native;
use perf_event::data::parse::{ParseConfig, Parser};
use perf_event::data::{self as perf, RecordMetadata, SampleRegsAbi, Visitor};
use perf_event_open_sys::bindings::{
    PERF_RECORD_MISC_COMM_EXEC, PERF_RECORD_MISC_CPUMODE_MASK, PERF_RECORD_MISC_GUEST_KERNEL,
    PERF_RECORD_MISC_GUEST_USER, PERF_RECORD_MISC_HYPERVISOR, PERF_RECORD_MISC_KERNEL,
    PERF_RECORD_MISC_USER, PERF_RECORD_SAMPLE, perf_event_header,
};
use profiler_model::{
    Avma, BuildId, CallchainEntry, Comm, CpuMode, EventIndex, FileOffset, Lost, Mmap, Record,
    Sample, Sampling, TaskEvent, Throttle, UserStack,
};

/// x86-64 user registers in perf's numbering
/// (`arch/x86/include/uapi/asm/perf_regs.h`): what an unwinder starts
/// from, asked of each sample by the counters and read back here.
pub(crate) const REG_BP: u64 = 6;
pub(crate) const REG_SP: u64 = 7;
pub(crate) const REG_IP: u64 = 8;

/// Converts one ring-buffer record. `None` for record kinds the profiler does
/// not keep (and for records the parser cannot read).
///
/// The events sharing a ring need not lay their samples out alike (a group
/// leader's carry counts, a frequency-sampled event's its period): a sample
/// is parsed as its own event lays it out, found by the id that
/// `PERF_SAMPLE_IDENTIFIER` puts first. Other records end in the same
/// `sample_id_all` fields for every event, and parse with `config`.
pub(crate) fn convert(
    record: &perf_event::Record<'_>,
    config: &ParseConfig<Native>,
    events_by_id: &HashMap<u64, StreamEvent>,
) -> Option<Record> {
    let bytes = record.to_contiguous();
    let header = perf_event_header {
        type_: record.ty(),
        misc: record.misc(),
        size: (record.len() + size_of::<perf_event_header>()) as u16,
    };
    let config = match record.ty() {
        PERF_RECORD_SAMPLE => {
            let id = u64::from_ne_bytes(bytes.get(..8)?.try_into().ok()?);
            events_by_id.get(&id).map_or(config, |e| &e.config)
        }
        _ => config,
    };
    let visitor = Converter { events_by_id };
    Parser::new(bytes.as_ref(), config.clone())
        .parse_record_with_header(visitor, header)
        .ok()?
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
    pub fn of(sampling: Sampling, index: usize, counter: &Counter) -> StreamEvent {
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
    events_by_id: &'a HashMap<u64, StreamEvent>,
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
            user_stack: user_stack(&s),
            read: self.read(&s),
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
}

/// The registers and stack copy of a `--call-graph dwarf` sample; `None`
/// when the kernel had no user context to copy (the ABI is NONE).
fn user_stack(s: &perf::Sample<'_>) -> Option<UserStack> {
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
    Some(UserStack {
        ip: register(REG_IP)?,
        sp: register(REG_SP)?,
        bp: register(REG_BP)?,
        bytes: s.stack_user().unwrap_or_default().to_vec(),
    })
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
