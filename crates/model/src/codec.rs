//! The binary encoding of [`Record`]s in a recording's event stream.
//!
//! Every record is framed as `tag: u8, length: u32` (little-endian) followed by
//! `length` payload bytes, so that a reader can skip a tag it does not know.
//! Integers are little-endian; strings are a `u16` length and UTF-8 bytes.

use profiler_histogram::{BucketWidth, Buckets};

use crate::address::{Avma, FileOffset};
use crate::event::EventIndex;
use crate::printable::printable_bytes;
use crate::record::{
    BuildId, CallchainEntry, Comm, CpuMode, HistogramRecord, Lost, Mmap, Record, Sample, Switch,
    TaskEvent, Throttle, UserStack,
};

const TAG_SAMPLE: u8 = 1;
const TAG_MMAP: u8 = 2;
const TAG_COMM: u8 = 3;
const TAG_FORK: u8 = 4;
const TAG_EXIT: u8 = 5;
const TAG_LOST: u8 = 6;
const TAG_THROTTLE: u8 = 7;
/// Written by earlier versions: every bucket, zeros too.
const TAG_HISTOGRAM: u8 = 8;
const TAG_SPARSE_HISTOGRAM: u8 = 9;
const TAG_SWITCH: u8 = 10;

/// [`Switch`]'s flags, one byte.
const SWITCH_OUT: u8 = 1;
const SWITCH_PREEMPT: u8 = 2;
const SWITCH_SAMPLED: u8 = 4;

/// Zero buckets that end a run of a sparse histogram: a shorter gap costs
/// less kept than a new run's 8-byte header.
const HISTOGRAM_GAP: usize = 8;
/// The most bytes of buckets one histogram record may stand for: a 256 MiB
/// text segment at a 16-bit bucket per 2 bytes.
const MAX_HISTOGRAM_BYTES: u64 = 256 << 20;

/// Bytes of the frame before each payload.
pub(crate) const FRAME_HEADER_LEN: usize = 5;

/// Appends the framed encoding of `record` to `out`.
pub(crate) fn encode(record: &Record, out: &mut Vec<u8>) {
    let frame_start = out.len();
    out.extend_from_slice(&[0; FRAME_HEADER_LEN]);
    let tag = match record {
        Record::Sample(s) => {
            put_u64(out, s.time);
            put_u32(out, s.pid);
            put_u32(out, s.tid);
            put_u32(out, s.cpu);
            put_u16(out, s.event);
            out.push(encode_mode(s.mode));
            put_u64(out, s.ip.0);
            put_u64(out, s.period);
            put_stacks(out, &s.callchain, s.user_stack.as_ref(), !s.read.is_empty());
            put_read(out, &s.read);
            TAG_SAMPLE
        }
        Record::Mmap(m) => {
            put_u64(out, m.time);
            put_u32(out, m.pid);
            put_u32(out, m.tid);
            put_u64(out, m.start.0);
            put_u64(out, m.len);
            put_u64(out, m.offset.0);
            put_str(out, &m.path);
            put_build_id(out, m.build_id.as_ref());
            TAG_MMAP
        }
        Record::Comm(c) => {
            put_u64(out, c.time);
            put_u32(out, c.pid);
            put_u32(out, c.tid);
            out.push(u8::from(c.exec));
            put_str(out, &c.name);
            TAG_COMM
        }
        Record::Fork(t) | Record::Exit(t) => {
            put_u64(out, t.time);
            put_u32(out, t.pid);
            put_u32(out, t.ppid);
            put_u32(out, t.tid);
            put_u32(out, t.ptid);
            if matches!(record, Record::Fork(_)) {
                TAG_FORK
            } else {
                TAG_EXIT
            }
        }
        Record::Lost(l) => {
            put_u64(out, l.time);
            put_u16(out, l.event);
            put_u64(out, l.count);
            TAG_LOST
        }
        Record::Throttle(t) => {
            put_u64(out, t.time);
            put_u16(out, t.event);
            out.push(u8::from(t.unthrottle));
            TAG_THROTTLE
        }
        Record::Histogram(h) => {
            put_u16(out, h.event);
            put_str(out, &h.path);
            put_build_id(out, h.build_id.as_ref());
            put_u64(out, h.start.0);
            put_u32(out, h.scale);
            out.push(h.buckets.width().bits() as u8);
            put_sparse_buckets(out, &h.buckets);
            TAG_SPARSE_HISTOGRAM
        }
        Record::Switch(w) => {
            // 17 bytes and the frame's 5: two a switch, and the switch-out
            // sample's 44 without stacks, keep a switch under 100 bytes.
            put_u64(out, w.time);
            put_u32(out, w.pid);
            put_u32(out, w.tid);
            let flag = |set: bool, bit: u8| if set { bit } else { 0 };
            out.push(
                flag(w.out, SWITCH_OUT)
                    | flag(w.preempt, SWITCH_PREEMPT)
                    | flag(w.sampled, SWITCH_SAMPLED),
            );
            TAG_SWITCH
        }
    };
    let payload_len = (out.len() - frame_start - FRAME_HEADER_LEN) as u32;
    out[frame_start] = tag;
    out[frame_start + 1..frame_start + FRAME_HEADER_LEN]
        .copy_from_slice(&payload_len.to_le_bytes());
}

/// Whether a frame of this tag holds a sample.
pub(crate) fn is_sample(tag: u8) -> bool {
    tag == TAG_SAMPLE
}

/// How many samples the records of a chunk's `payload` hold, by their
/// frames alone; `None` where the frames do not fill it exactly (a reader
/// stops there with an error).
pub(crate) fn count_samples(payload: &[u8]) -> Option<u64> {
    let (mut at, mut samples) = (0usize, 0u64);
    while at < payload.len() {
        let (tag, len) = frame_header(*payload[at..].first_chunk()?);
        samples += u64::from(is_sample(tag));
        at = at.checked_add(FRAME_HEADER_LEN + len as usize)?;
    }
    (at == payload.len()).then_some(samples)
}

/// Whether a frame of this tag holds a switch.
pub(crate) fn is_switch(tag: u8) -> bool {
    tag == TAG_SWITCH
}

/// Decodes a switch's payload.
pub(crate) fn decode_switch(payload: &[u8]) -> Result<Switch, &'static str> {
    let mut c = Cursor { buf: payload };
    let (time, pid, tid, flags) = (c.u64()?, c.u32()?, c.u32()?, c.u8()?);
    Ok(Switch {
        time,
        pid,
        tid,
        out: flags & SWITCH_OUT != 0,
        preempt: flags & SWITCH_PREEMPT != 0,
        sampled: flags & SWITCH_SAMPLED != 0,
    })
}

/// Splits a frame header into its tag and payload length.
pub(crate) fn frame_header(bytes: [u8; FRAME_HEADER_LEN]) -> (u8, u32) {
    (
        bytes[0],
        u32::from_le_bytes([bytes[1], bytes[2], bytes[3], bytes[4]]),
    )
}

/// The bytes of a sample's fixed fields, before its stacks.
const SAMPLE_FIXED_LEN: usize = 39;

/// Decodes a sample's payload into `sample`, whose lists' memory is
/// reused: a report decodes millions of samples into one.
pub(crate) fn decode_sample(payload: &[u8], sample: &mut Sample) -> Result<(), &'static str> {
    let (fixed, rest) = payload
        .split_first_chunk::<SAMPLE_FIXED_LEN>()
        .ok_or(SHORT)?;
    let mut c = Cursor { buf: fixed };
    sample.time = c.u64()?;
    sample.pid = c.u32()?;
    sample.tid = c.u32()?;
    sample.cpu = c.u32()?;
    sample.event = c.u16()?;
    sample.mode = decode_mode(c.u8()?);
    sample.ip = Avma(c.u64()?);
    sample.period = c.u64()?;
    let mut c = Cursor { buf: rest };
    c.callchain(&mut sample.callchain)?;
    c.user_stack(&mut sample.user_stack)?;
    c.read(&mut sample.read)
}

/// Decodes one payload. `Ok(None)` means a tag this version does not know,
/// which the reader skips.
pub(crate) fn decode(tag: u8, payload: &[u8]) -> Result<Option<Record>, &'static str> {
    let mut c = Cursor { buf: payload };
    let record = match tag {
        TAG_SAMPLE => {
            let mut sample = Sample::default();
            decode_sample(payload, &mut sample)?;
            Record::Sample(sample)
        }
        TAG_MMAP => Record::Mmap(Mmap {
            time: c.u64()?,
            pid: c.u32()?,
            tid: c.u32()?,
            start: Avma(c.u64()?),
            len: c.u64()?,
            offset: FileOffset(c.u64()?),
            path: c.str()?,
            build_id: c.build_id()?,
        }),
        TAG_COMM => Record::Comm(Comm {
            time: c.u64()?,
            pid: c.u32()?,
            tid: c.u32()?,
            exec: c.u8()? != 0,
            name: c.str()?,
        }),
        TAG_FORK | TAG_EXIT => {
            let task = TaskEvent {
                time: c.u64()?,
                pid: c.u32()?,
                ppid: c.u32()?,
                tid: c.u32()?,
                ptid: c.u32()?,
            };
            if tag == TAG_FORK {
                Record::Fork(task)
            } else {
                Record::Exit(task)
            }
        }
        TAG_LOST => Record::Lost(Lost {
            time: c.u64()?,
            event: c.u16()?,
            count: c.u64()?,
        }),
        TAG_THROTTLE => Record::Throttle(Throttle {
            time: c.u64()?,
            event: c.u16()?,
            unthrottle: c.u8()? != 0,
        }),
        TAG_HISTOGRAM | TAG_SPARSE_HISTOGRAM => {
            let (event, path, build_id) = (c.u16()?, c.str()?, c.build_id()?);
            let (start, scale) = (FileOffset(c.u64()?), c.u32()?);
            let width = BucketWidth::from_bits(u64::from(c.u8()?))
                .map_err(|_| "a histogram's buckets are not 16, 32 or 64 bits wide")?;
            let buckets = match tag {
                TAG_HISTOGRAM => {
                    let len = c.u32()? as usize;
                    Buckets::from_le_bytes(width, c.bytes(len)?)
                        .ok_or("a histogram's buckets end in the middle of a bucket")?
                }
                _ => c.sparse_buckets(width)?,
            };
            Record::Histogram(HistogramRecord {
                event,
                path,
                build_id,
                start,
                scale,
                buckets,
            })
        }
        TAG_SWITCH => Record::Switch(decode_switch(payload)?),
        _ => return Ok(None),
    };
    Ok(Some(record))
}

/// A histogram's buckets as their count, then the runs that hold counts:
/// each its first bucket, its length in buckets and its bytes
/// (little-endian). Most of a text segment's buckets stay empty: a long
/// run over a small program and libc fills a few hundred of libc's 700,000.
fn put_sparse_buckets(out: &mut Vec<u8>, buckets: &Buckets) {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for (bucket, _) in buckets.nonzero() {
        match runs.last_mut() {
            Some((first, len)) if bucket - (*first + *len) < HISTOGRAM_GAP => {
                *len = bucket + 1 - *first;
            }
            _ => runs.push((bucket, 1)),
        }
    }
    put_u32(out, buckets.len() as u32);
    put_u32(out, runs.len() as u32);
    let width = buckets.width().bytes();
    for (first, len) in runs {
        put_u32(out, first as u32);
        put_u32(out, len as u32);
        for bucket in first..first + len {
            out.extend_from_slice(&buckets.get(bucket).to_le_bytes()[..width]);
        }
    }
}

fn encode_mode(mode: CpuMode) -> u8 {
    match mode {
        CpuMode::Unknown => 0,
        CpuMode::Kernel => 1,
        CpuMode::User => 2,
        CpuMode::Hypervisor => 3,
        CpuMode::GuestKernel => 4,
        CpuMode::GuestUser => 5,
    }
}

fn decode_mode(byte: u8) -> CpuMode {
    match byte {
        1 => CpuMode::Kernel,
        2 => CpuMode::User,
        3 => CpuMode::Hypervisor,
        4 => CpuMode::GuestKernel,
        5 => CpuMode::GuestUser,
        _ => CpuMode::Unknown,
    }
}

fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_le_bytes());
}
fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}
fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}
fn put_build_id(out: &mut Vec<u8>, id: Option<&BuildId>) {
    let id = id.map_or(&[][..], |b| &b.0[..]);
    let len = id.len().min(255);
    out.push(len as u8);
    out.extend_from_slice(&id[..len]);
}
fn put_str(out: &mut Vec<u8>, s: &str) {
    let mut end = s.len().min(usize::from(u16::MAX));
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    put_u16(out, end as u16);
    out.extend_from_slice(&s.as_bytes()[..end]);
}

/// A sample's call chain and stack copy, after its fixed fields; nothing
/// at all when it has neither and nothing follows (as in recordings
/// without call graphs or groups).
fn put_stacks(
    out: &mut Vec<u8>,
    callchain: &[CallchainEntry],
    user_stack: Option<&UserStack>,
    more: bool,
) {
    if callchain.is_empty() && user_stack.is_none() && !more {
        return;
    }
    put_u32(out, callchain.len() as u32);
    callchain
        .iter()
        .for_each(|&entry| put_u64(out, entry.to_raw()));
    match user_stack {
        None => out.push(0),
        Some(stack) => {
            out.push(1);
            put_u64(out, stack.ip.0);
            put_u64(out, stack.sp.0);
            put_u64(out, stack.bp.0);
            put_u32(out, stack.bytes.len() as u32);
            out.extend_from_slice(&stack.bytes);
        }
    }
}

/// A group leader's member counts, after the stacks; nothing without.
fn put_read(out: &mut Vec<u8>, read: &[(EventIndex, u64)]) {
    if read.is_empty() {
        return;
    }
    put_u16(out, read.len() as u16);
    for &(event, value) in read {
        put_u16(out, event);
        put_u64(out, value);
    }
}

struct Cursor<'a> {
    buf: &'a [u8],
}

const SHORT: &str = "record payload shorter than its fields";

impl<'a> Cursor<'a> {
    fn bytes(&mut self, n: usize) -> Result<&'a [u8], &'static str> {
        if self.buf.len() < n {
            return Err(SHORT);
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(head)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], &'static str> {
        self.bytes(N)?.try_into().map_err(|_| SHORT)
    }
    fn callchain(&mut self, callchain: &mut Vec<CallchainEntry>) -> Result<(), &'static str> {
        callchain.clear();
        if self.buf.is_empty() {
            return Ok(());
        }
        let len = self.u32()? as usize;
        let bytes = self.bytes(len.checked_mul(8).ok_or(SHORT)?)?;
        callchain.extend(bytes.chunks_exact(8).map(|b| {
            CallchainEntry::from_raw(u64::from_le_bytes(b.try_into().unwrap_or_default()))
        }));
        Ok(())
    }
    fn user_stack(&mut self, user_stack: &mut Option<UserStack>) -> Result<(), &'static str> {
        if self.buf.is_empty() || self.u8()? == 0 {
            *user_stack = None;
            return Ok(());
        }
        let (ip, sp, bp) = (Avma(self.u64()?), Avma(self.u64()?), Avma(self.u64()?));
        let len = self.u32()? as usize;
        let bytes = self.bytes(len)?;
        let stack = user_stack.get_or_insert_with(UserStack::default);
        (stack.ip, stack.sp, stack.bp) = (ip, sp, bp);
        stack.bytes.clear();
        stack.bytes.extend_from_slice(bytes);
        Ok(())
    }
    fn read(&mut self, read: &mut Vec<(EventIndex, u64)>) -> Result<(), &'static str> {
        read.clear();
        if self.buf.is_empty() {
            return Ok(());
        }
        let len = self.u16()?;
        for _ in 0..len {
            read.push((self.u16()?, self.u64()?));
        }
        Ok(())
    }
    fn u8(&mut self) -> Result<u8, &'static str> {
        Ok(self.array::<1>()?[0])
    }
    fn u16(&mut self) -> Result<u16, &'static str> {
        self.array().map(u16::from_le_bytes)
    }
    fn u32(&mut self) -> Result<u32, &'static str> {
        self.array().map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> Result<u64, &'static str> {
        self.array().map(u64::from_le_bytes)
    }
    fn build_id(&mut self) -> Result<Option<BuildId>, &'static str> {
        let len = usize::from(self.u8()?);
        let bytes = self.bytes(len)?;
        Ok((len > 0).then(|| BuildId(bytes.to_vec())))
    }
    /// The buckets [`put_sparse_buckets`] wrote: sparse, so that a count
    /// of buckets costs nothing until they hold counts.
    fn sparse_buckets(&mut self, width: BucketWidth) -> Result<Buckets, &'static str> {
        let count = u64::from(self.u32()?);
        if count * width.bytes() as u64 > MAX_HISTOGRAM_BYTES {
            return Err("a histogram claims more than 256 MiB of buckets");
        }
        let mut buckets = Buckets::sparse(width, count as usize);
        let runs = self.u32()?;
        for _ in 0..runs {
            let (first, len) = (self.u32()? as usize, self.u32()? as usize);
            let bytes = self.bytes(len.saturating_mul(width.bytes()))?;
            let run = Buckets::from_le_bytes(width, bytes).ok_or("a histogram's run is cut")?;
            (buckets.as_sparse_mut())
                .and_then(|sparse| sparse.push_run(first, run))
                .ok_or("a histogram's runs of buckets overlap or pass its end")?;
        }
        Ok(buckets)
    }
    fn str(&mut self) -> Result<String, &'static str> {
        let len = usize::from(self.u16()?);
        let bytes = self.bytes(len)?;
        // Names of processes and files, which anyone may have chosen:
        // they are shown, never trusted raw.
        Ok(printable_bytes(bytes).into_owned())
    }
}

#[cfg(test)]
mod tests;
