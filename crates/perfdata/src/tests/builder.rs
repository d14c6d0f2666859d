//! perf.data files built by the tests, byte by byte, as perf writes them
//! (little-endian): the header, one attribute per event, the records, the
//! feature table and its sections.

pub(super) const SAMPLE_IP: u64 = 1;
pub(super) const SAMPLE_TID: u64 = 2;
pub(super) const SAMPLE_TIME: u64 = 4;
pub(super) const SAMPLE_CALLCHAIN: u64 = 32;
pub(super) const SAMPLE_PERIOD: u64 = 256;
const ATTR_LEN: usize = 128;
const FLAG_FREQ: u64 = 1 << 10;
const FLAG_SAMPLE_ID_ALL: u64 = 1 << 18;
/// A COMM record's `misc` bit for a name taken at exec.
const MISC_COMM_EXEC: u16 = 1 << 13;
/// A record's `misc` bits: user space, and of an MMAP2 record, a build-id
/// instead of the device and inode.
const MISC_USER: u16 = 2;
pub(super) const MISC_MMAP_BUILD_ID: u16 = 1 << 14;

pub(super) const PERF_CONTEXT_USER: u64 = u64::MAX - 511;

/// A perf.data file to be built.
#[derive(Clone, Debug, Default)]
pub(super) struct PerfFile {
    pub sample_type: u64,
    /// Sampling by frequency (Hz) rather than every N events.
    pub frequency: Option<u64>,
    pub records: Vec<Vec<u8>>,
    /// Feature bit and section contents, in bit order.
    pub features: Vec<(u32, Vec<u8>)>,
}

/// Where the parts of a built file lie.
#[derive(Clone, Copy, Debug)]
pub(super) struct Built {
    pub data_offset: usize,
    pub data_size: usize,
    pub feature_table: usize,
}

impl PerfFile {
    pub(super) fn new() -> PerfFile {
        PerfFile {
            sample_type: SAMPLE_IP | SAMPLE_TID | SAMPLE_TIME | SAMPLE_PERIOD,
            ..PerfFile::default()
        }
    }

    pub(super) fn build(&self) -> (Vec<u8>, Built) {
        let mut out = vec![0u8; 104];
        let attrs_offset = out.len();
        let attr_size = ATTR_LEN + 16;
        let ids_offset = attrs_offset + attr_size;
        out.extend_from_slice(&self.attr());
        put64(&mut out, ids_offset as u64 + 16);
        put64(&mut out, 8);
        put64(&mut out, 1); // the event's one id
        let data_offset = out.len();
        for record in &self.records {
            out.extend_from_slice(record);
        }
        let data_size = out.len() - data_offset;
        let feature_table = out.len();
        let mut section_at = feature_table + 16 * self.features.len();
        for (_, bytes) in &self.features {
            put64(&mut out, section_at as u64);
            put64(&mut out, bytes.len() as u64);
            section_at += bytes.len();
        }
        let mut bits = [0u64; 4];
        for (bit, bytes) in &self.features {
            bits[*bit as usize / 64] |= 1 << (bit % 64);
            out.extend_from_slice(bytes);
        }
        let mut header = Vec::new();
        header.extend_from_slice(b"PERFILE2");
        for word in [104, attr_size as u64, attrs_offset as u64, attr_size as u64] {
            put64(&mut header, word);
        }
        for word in [data_offset as u64, data_size as u64, 0, 0] {
            put64(&mut header, word);
        }
        for word in bits {
            put64(&mut header, word);
        }
        out[..104].copy_from_slice(&header);
        let built = Built {
            data_offset,
            data_size,
            feature_table,
        };
        (out, built)
    }

    /// cpu-clock, user space only.
    fn attr(&self) -> Vec<u8> {
        let mut attr = Vec::new();
        put32(&mut attr, 1); // PERF_TYPE_SOFTWARE
        put32(&mut attr, ATTR_LEN as u32);
        put64(&mut attr, 0); // PERF_COUNT_SW_CPU_CLOCK
        put64(&mut attr, self.frequency.unwrap_or(1000));
        put64(&mut attr, self.sample_type);
        put64(&mut attr, 0);
        let freq = if self.frequency.is_some() {
            FLAG_FREQ
        } else {
            0
        };
        put64(&mut attr, (1 << 5) | FLAG_SAMPLE_ID_ALL | freq);
        attr.resize(ATTR_LEN, 0);
        attr
    }

    /// A sample at `ip` in process `pid`, with `callchain` when the file's
    /// samples have one.
    pub(super) fn sample(
        &self,
        time: u64,
        pid: u32,
        ip: u64,
        period: u64,
        callchain: &[u64],
    ) -> Vec<u8> {
        let mut body = Vec::new();
        put64(&mut body, ip);
        put32(&mut body, pid);
        put32(&mut body, pid);
        put64(&mut body, time);
        put64(&mut body, period);
        if self.sample_type & SAMPLE_CALLCHAIN != 0 {
            put64(&mut body, callchain.len() as u64);
            for &entry in callchain {
                put64(&mut body, entry);
            }
        }
        record(9, 2, &body)
    }

    /// An executable MMAP2 of `path` at `start` in process `pid`.
    pub(super) fn mmap2(&self, time: u64, pid: u32, start: u64, len: u64, path: &str) -> Vec<u8> {
        let mut body = Vec::new();
        put32(&mut body, pid);
        put32(&mut body, pid);
        put64(&mut body, start);
        put64(&mut body, len);
        put64(&mut body, 0);
        // Device fe:00, inode 4242, generation 0.
        put32(&mut body, 254);
        put32(&mut body, 0);
        put64(&mut body, 4242);
        put64(&mut body, 0);
        put32(&mut body, 5); // PROT_READ | PROT_EXEC
        put32(&mut body, 2);
        put_string(&mut body, path);
        self.sample_id(&mut body, pid, time);
        record(10, 2, &body)
    }

    /// An MMAP2 record carrying a build-id of `claimed` bytes, as perf
    /// 5.12 and later write them: its first bytes are `build_id`'s.
    pub(super) fn mmap2_build_id(
        &self,
        pid: u32,
        path: &str,
        build_id: &[u8],
        claimed: u8,
    ) -> Vec<u8> {
        let mut body = Vec::new();
        put32(&mut body, pid);
        put32(&mut body, pid);
        put64(&mut body, 0x40_0000);
        put64(&mut body, 0x1000);
        put64(&mut body, 0);
        body.extend_from_slice(&[claimed, 0, 0, 0]);
        let mut field = [0; 20];
        field[..build_id.len()].copy_from_slice(build_id);
        body.extend_from_slice(&field);
        put32(&mut body, 5);
        put32(&mut body, 2);
        put_string(&mut body, path);
        self.sample_id(&mut body, pid, 2);
        record(10, MISC_USER | MISC_MMAP_BUILD_ID, &body)
    }

    pub(super) fn comm(&self, time: u64, pid: u32, name: &str) -> Vec<u8> {
        self.comm_record(time, pid, name, 0)
    }

    /// The COMM record of process `pid` executing a program named `name`.
    pub(super) fn exec(&self, time: u64, pid: u32, name: &str) -> Vec<u8> {
        self.comm_record(time, pid, name, MISC_COMM_EXEC)
    }

    fn comm_record(&self, time: u64, pid: u32, name: &str, misc: u16) -> Vec<u8> {
        let mut body = Vec::new();
        put32(&mut body, pid);
        put32(&mut body, pid);
        put_string(&mut body, name);
        self.sample_id(&mut body, pid, time);
        record(3, misc, &body)
    }

    /// The id fields at the end of a record other than a sample.
    fn sample_id(&self, body: &mut Vec<u8>, pid: u32, time: u64) {
        put32(body, pid);
        put32(body, pid);
        put64(body, time);
    }
}

/// A record of `kind`, its header sized for `body`.
pub(super) fn record(kind: u32, misc: u16, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    put32(&mut out, kind);
    out.extend_from_slice(&misc.to_le_bytes());
    out.extend_from_slice(&((8 + body.len()) as u16).to_le_bytes());
    out.extend_from_slice(body);
    out
}

pub(super) fn finished_round() -> Vec<u8> {
    record(68, 0, &[])
}

/// An AUXTRACE record that says `payload` bytes of trace follow it.
pub(super) fn auxtrace(payload: u64) -> Vec<u8> {
    let mut body = Vec::new();
    put64(&mut body, payload);
    body.extend_from_slice(&[0; 32]);
    record(71, 0, &body)
}

/// A `perf_header_string` list, as CMDLINE holds.
pub(super) fn string_list(strings: &[&str]) -> Vec<u8> {
    let mut out = Vec::new();
    put32(&mut out, strings.len() as u32);
    for s in strings {
        let mut text = s.as_bytes().to_vec();
        text.resize((s.len() + 1).next_multiple_of(8), 0);
        put32(&mut out, text.len() as u32);
        out.extend_from_slice(&text);
    }
    out
}

pub(super) fn put64(out: &mut Vec<u8>, value: u64) {
    out.extend_from_slice(&value.to_le_bytes());
}

pub(super) fn put32(out: &mut Vec<u8>, value: u32) {
    out.extend_from_slice(&value.to_le_bytes());
}

/// A NUL-terminated string padded to 8 bytes, as in records.
fn put_string(out: &mut Vec<u8>, text: &str) {
    let mut bytes = text.as_bytes().to_vec();
    bytes.resize((text.len() + 1).next_multiple_of(8), 0);
    out.extend_from_slice(&bytes);
}
