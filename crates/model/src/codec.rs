//! The binary encoding of [`Record`]s in a recording's event stream.
//!
//! Every record is framed as `tag: u8, length: u32` (little-endian) followed by
//! `length` payload bytes, so that a reader can skip a tag it does not know.
//! Integers are little-endian; strings are a `u16` length and UTF-8 bytes.

use crate::address::{Avma, FileOffset};
use crate::event::EventIndex;
use crate::record::{
    BuildId, CallchainEntry, Comm, CpuMode, HistogramRecord, Lost, Mmap, Record, Sample, TaskEvent,
    Throttle, UserStack,
};

const TAG_SAMPLE: u8 = 1;
const TAG_MMAP: u8 = 2;
const TAG_COMM: u8 = 3;
const TAG_FORK: u8 = 4;
const TAG_EXIT: u8 = 5;
const TAG_LOST: u8 = 6;
const TAG_THROTTLE: u8 = 7;
const TAG_HISTOGRAM: u8 = 8;

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
            out.push(h.bucket_bits);
            put_u32(out, h.buckets.len() as u32);
            out.extend_from_slice(&h.buckets);
            TAG_HISTOGRAM
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

/// Splits a frame header into its tag and payload length.
pub(crate) fn frame_header(bytes: [u8; FRAME_HEADER_LEN]) -> (u8, u32) {
    (
        bytes[0],
        u32::from_le_bytes([bytes[1], bytes[2], bytes[3], bytes[4]]),
    )
}

/// Decodes one payload. `Ok(None)` means a tag this version does not know,
/// which the reader skips.
pub(crate) fn decode(tag: u8, payload: &[u8]) -> Result<Option<Record>, &'static str> {
    let mut c = Cursor { buf: payload };
    let record = match tag {
        TAG_SAMPLE => Record::Sample(Sample {
            time: c.u64()?,
            pid: c.u32()?,
            tid: c.u32()?,
            cpu: c.u32()?,
            event: c.u16()?,
            mode: decode_mode(c.u8()?),
            ip: Avma(c.u64()?),
            period: c.u64()?,
            callchain: (c.callchain()?.into_iter())
                .map(CallchainEntry::from_raw)
                .collect(),
            user_stack: c.user_stack()?,
            read: c.read()?,
        }),
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
        TAG_HISTOGRAM => Record::Histogram(HistogramRecord {
            event: c.u16()?,
            path: c.str()?,
            build_id: c.build_id()?,
            start: FileOffset(c.u64()?),
            scale: c.u32()?,
            bucket_bits: c.u8()?,
            buckets: {
                let len = c.u32()? as usize;
                c.bytes(len)?.to_vec()
            },
        }),
        _ => return Ok(None),
    };
    Ok(Some(record))
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
    fn callchain(&mut self) -> Result<Vec<u64>, &'static str> {
        if self.buf.is_empty() {
            return Ok(Vec::new());
        }
        let len = self.u32()? as usize;
        let bytes = self.bytes(len.checked_mul(8).ok_or(SHORT)?)?;
        Ok(bytes
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
            .collect())
    }
    fn user_stack(&mut self) -> Result<Option<UserStack>, &'static str> {
        if self.buf.is_empty() || self.u8()? == 0 {
            return Ok(None);
        }
        Ok(Some(UserStack {
            ip: Avma(self.u64()?),
            sp: Avma(self.u64()?),
            bp: Avma(self.u64()?),
            bytes: {
                let len = self.u32()? as usize;
                self.bytes(len)?.to_vec()
            },
        }))
    }
    fn read(&mut self) -> Result<Vec<(EventIndex, u64)>, &'static str> {
        if self.buf.is_empty() {
            return Ok(Vec::new());
        }
        let len = self.u16()?;
        (0..len).map(|_| Ok((self.u16()?, self.u64()?))).collect()
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
    fn str(&mut self) -> Result<String, &'static str> {
        let len = usize::from(self.u16()?);
        let bytes = self.bytes(len)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| "string field is not UTF-8")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(record: Record) {
        let mut buf = Vec::new();
        encode(&record, &mut buf);
        let (tag, len) = frame_header(buf[..FRAME_HEADER_LEN].try_into().unwrap());
        assert_eq!(len as usize, buf.len() - FRAME_HEADER_LEN);
        let decoded = decode(tag, &buf[FRAME_HEADER_LEN..]).unwrap().unwrap();
        assert_eq!(decoded, record);
    }

    #[test]
    fn every_record_kind_round_trips() {
        round_trip(Record::Sample(Sample {
            time: 1,
            pid: 2,
            tid: 3,
            cpu: 4,
            event: 5,
            mode: CpuMode::GuestUser,
            ip: Avma(0xffff_ffff_8100_0000),
            period: 250_000,
            callchain: Vec::new(),
            user_stack: None,
            read: Vec::new(),
        }));
        // A group leader's sample with member counts, without stacks.
        round_trip(Record::Sample(Sample {
            time: 1,
            pid: 2,
            tid: 3,
            cpu: 4,
            event: 0,
            mode: CpuMode::User,
            ip: Avma(0x40_1000),
            period: 250_000,
            callchain: Vec::new(),
            user_stack: None,
            read: vec![(1, 17), (2, u64::MAX)],
        }));
        round_trip(Record::Sample(Sample {
            time: 1,
            pid: 2,
            tid: 3,
            cpu: 4,
            event: 5,
            mode: CpuMode::User,
            ip: Avma(0x40_1000),
            period: 1,
            callchain: [u64::MAX - 511, 0x40_1000, 0x40_2345]
                .map(CallchainEntry::from_raw)
                .to_vec(),
            user_stack: Some(UserStack {
                ip: Avma(0x40_1000),
                sp: Avma(0x7ffe_0000),
                bp: Avma(0x7ffe_0040),
                bytes: (0..=255).collect(),
            }),
            read: vec![(6, 1)],
        }));
        round_trip(Record::Mmap(Mmap {
            time: 9,
            pid: 10,
            tid: 11,
            start: Avma(0x5555_0000_1000),
            len: 0x2000,
            offset: FileOffset(0x1000),
            path: "/usr/lib/x86_64-linux-gnu/libc.so.6".into(),
            build_id: Some(BuildId(vec![0xab; 20])),
        }));
        round_trip(Record::Mmap(Mmap {
            time: 9,
            pid: 10,
            tid: 11,
            start: Avma(0x7fff_0000),
            len: 0x2000,
            offset: FileOffset(0),
            path: "[vdso]".into(),
            build_id: None,
        }));
        round_trip(Record::Comm(Comm {
            time: 3,
            pid: 4,
            tid: 5,
            name: "wörker".into(),
            exec: true,
        }));
        round_trip(Record::Fork(TaskEvent {
            time: 1,
            pid: 2,
            ppid: 3,
            tid: 4,
            ptid: 5,
        }));
        round_trip(Record::Exit(TaskEvent {
            time: 1,
            pid: 2,
            ppid: 3,
            tid: 4,
            ptid: 5,
        }));
        round_trip(Record::Lost(Lost {
            time: 7,
            event: 1,
            count: 99,
        }));
        round_trip(Record::Histogram(HistogramRecord {
            event: 1,
            path: "/bin/app".into(),
            build_id: Some(BuildId(vec![7; 20])),
            start: FileOffset(0x1000),
            scale: 65536,
            bucket_bits: 16,
            buckets: vec![1, 0, 0, 2, 255, 255],
        }));
        round_trip(Record::Throttle(Throttle {
            time: 7,
            event: 0,
            unthrottle: true,
        }));
    }

    #[test]
    fn unknown_tags_are_skipped_and_short_payloads_rejected() {
        assert_eq!(decode(200, &[1, 2, 3]), Ok(None));
        assert!(decode(TAG_SAMPLE, &[0; 10]).is_err());
    }

    #[test]
    fn overlong_strings_are_cut_at_a_character_boundary() {
        let name = "é".repeat(40_000);
        let mut buf = Vec::new();
        encode(
            &Record::Comm(Comm {
                time: 0,
                pid: 0,
                tid: 0,
                name,
                exec: false,
            }),
            &mut buf,
        );
        let (tag, _) = frame_header(buf[..FRAME_HEADER_LEN].try_into().unwrap());
        let Some(Record::Comm(c)) = decode(tag, &buf[FRAME_HEADER_LEN..]).unwrap() else {
            panic!("not a comm record")
        };
        assert!(c.name.len() <= usize::from(u16::MAX));
        assert!(c.name.chars().all(|ch| ch == 'é'));
    }
}
