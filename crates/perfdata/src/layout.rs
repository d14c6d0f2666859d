//! perf.data's header and sections, checked before the file is handed to
//! linux-perf-data, which trusts the sizes it finds: a feature section
//! claiming 2^44 bytes, or a data size of 0 (which sends it looking for the
//! feature table in the wrong place), makes it allocate that much, and the
//! process aborts, beyond the reach of any panic handler.
//!
//! ```text
//! offset 0   magic            "PERFILE2" (little-endian) or "2ELIFREP"
//!        8   header size      104 (16 in pipe mode)
//!       16   attr size        each entry of the attrs section
//!       24   attrs            {offset, size}
//!       40   data             {offset, size}: the records
//!       56   event types      {offset, size} (old files)
//!       72   features         256 bits; for each bit set, one {offset, size}
//!                             in the table at data.offset + data.size
//! ```

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use crate::error::Refusal;

pub(crate) const HEADER_LEN: u64 = 104;
const PIPE_HEADER_LEN: u64 = 16;
const SECTION_LEN: u64 = 16;
/// The smallest `perf_event_attr` (PERF_ATTR_SIZE_VER0).
const ATTR_MIN: u64 = 64;
/// Far beyond any `perf_event_attr` the kernel defines.
const ATTR_MAX: u64 = 4096;

/// Feature bits this reader looks at.
pub(crate) mod feature {
    pub(crate) const EVENT_DESC: u32 = 12;
    pub(crate) const BRANCH_STACK: u32 = 15;
    pub(crate) const AUXTRACE: u32 = 18;
    pub(crate) const STAT: u32 = 19;
    pub(crate) const DIR_FORMAT: u32 = 24;
}

/// Where a part of the file lies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Section {
    pub offset: u64,
    pub size: u64,
}

impl Section {
    fn end(&self) -> Option<u64> {
        self.offset.checked_add(self.size)
    }
}

/// The checked layout of a perf.data file.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    pub big_endian: bool,
    pub data: Section,
    /// The feature bits set, each with its section.
    pub features: Vec<(u32, Section)>,
    /// The events as the EVENT_DESC feature describes them, in the order
    /// linux-perf-data numbers them; empty without that feature.
    pub events: Vec<RawEvent>,
}

impl Layout {
    pub(crate) fn has(&self, bit: u32) -> bool {
        self.features.iter().any(|&(b, _)| b == bit)
    }
}

/// What EVENT_DESC says of one event, read from its `perf_event_attr`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RawEvent {
    pub name: Option<String>,
    pub perf_type: u32,
    pub config: u64,
    pub config1: u64,
    pub config2: u64,
}

/// Reads `len` bytes at `offset` of a file of `size` bytes, in the file's
/// byte order.
pub(crate) struct Reader<'a> {
    pub file: &'a File,
    pub size: u64,
    pub big_endian: bool,
}

impl Reader<'_> {
    pub(crate) fn bytes(&self, offset: u64, len: u64) -> io::Result<Vec<u8>> {
        let fits = offset.checked_add(len).is_some_and(|end| end <= self.size);
        if !fits {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let mut buf = vec![0; len as usize];
        self.file.read_exact_at(&mut buf, offset)?;
        Ok(buf)
    }

    pub(crate) fn u64(&self, bytes: &[u8], at: usize) -> u64 {
        let word: [u8; 8] = bytes[at..at + 8].try_into().unwrap_or_default();
        match self.big_endian {
            true => u64::from_be_bytes(word),
            false => u64::from_le_bytes(word),
        }
    }

    pub(crate) fn u32(&self, bytes: &[u8], at: usize) -> u32 {
        let word: [u8; 4] = bytes[at..at + 4].try_into().unwrap_or_default();
        match self.big_endian {
            true => u32::from_be_bytes(word),
            false => u32::from_le_bytes(word),
        }
    }

    fn section(&self, bytes: &[u8], at: usize) -> Section {
        Section {
            offset: self.u64(bytes, at),
            size: self.u64(bytes, at + 8),
        }
    }
}

/// Checks the header and every section of the perf.data file `file` of
/// `size` bytes.
pub(crate) fn check(file: &File, size: u64) -> Result<Layout, Refusal> {
    let mut reader = Reader {
        file,
        size,
        big_endian: false,
    };
    let start = reader.bytes(0, PIPE_HEADER_LEN.min(size))?;
    reader.big_endian = match start.get(..8) {
        Some(b"PERFILE2") => false,
        Some(b"2ELIFREP") => true,
        Some(b"PERFFILE") => return Err(Refusal::VersionOne),
        _ => return Err(Refusal::NotPerfData),
    };
    if start.len() < PIPE_HEADER_LEN as usize {
        return Err(Refusal::Truncated("it ends inside its header".into()));
    }
    let header_len = reader.u64(&start, 8);
    if header_len == PIPE_HEADER_LEN {
        return Err(Refusal::Pipe);
    }
    if header_len < HEADER_LEN {
        return Err(Refusal::Corrupt(format!(
            "its header claims {header_len} bytes, fewer than the {HEADER_LEN} of perf's format"
        )));
    }
    if size < header_len {
        return Err(Refusal::Truncated("it ends inside its header".into()));
    }
    let header = reader.bytes(0, HEADER_LEN)?;
    let attr_size = reader.u64(&header, 16);
    let attrs = reader.section(&header, 24);
    let data = reader.section(&header, 40);
    let event_types = reader.section(&header, 56);
    if !(ATTR_MIN..=ATTR_MAX).contains(&attr_size) {
        return Err(Refusal::Corrupt(format!(
            "its header gives {attr_size} bytes per event attribute"
        )));
    }
    if data.size == 0 {
        return Err(Refusal::Unfinished);
    }
    for (name, section) in [
        ("data", data),
        ("attributes", attrs),
        ("event types", event_types),
    ] {
        if section.end().is_none_or(|end| end > size) {
            return Err(Refusal::Truncated(format!(
                "its {name} section ends at byte {}, past its end",
                section.end().map_or("2^64".to_owned(), |e| e.to_string())
            )));
        }
    }
    let features = feature_table(&reader, &header, data)?;
    let mut layout = Layout {
        big_endian: reader.big_endian,
        data,
        features,
        events: Vec::new(),
    };
    let section = |bit| {
        layout
            .features
            .iter()
            .find(|&&(b, _)| b == bit)
            .map(|f| f.1)
    };
    if let Some(desc) = section(feature::EVENT_DESC) {
        layout.events = event_desc(&reader, desc)?;
    } else if event_types.size != 0 {
        check_event_types(&reader, event_types, attr_size)?;
    }
    Ok(layout)
}

/// The feature sections, each checked to lie in the file, and together no
/// larger than it (linux-perf-data reads them all into memory).
fn feature_table(
    reader: &Reader<'_>,
    header: &[u8],
    data: Section,
) -> Result<Vec<(u32, Section)>, Refusal> {
    let bits: Vec<u32> = (0..4u32)
        .flat_map(|word| {
            let value = reader.u64(header, 72 + 8 * word as usize);
            (0..64)
                .filter(move |bit| value & (1 << bit) != 0)
                .map(move |bit| word * 64 + bit)
        })
        .collect();
    let table_len = SECTION_LEN * bits.len() as u64;
    let table_start = data.offset + data.size;
    let table = reader.bytes(table_start, table_len).map_err(|_| {
        Refusal::Truncated(format!(
            "its feature table ({} entries at byte {table_start}) lies past its end",
            bits.len()
        ))
    })?;
    let mut total = 0u64;
    let mut features = Vec::with_capacity(bits.len());
    for (i, bit) in bits.into_iter().enumerate() {
        let section = reader.section(&table, i * SECTION_LEN as usize);
        total = total.saturating_add(section.size);
        if section.end().is_none_or(|end| end > reader.size) || total > reader.size {
            return Err(Refusal::Corrupt(format!(
                "its header feature {bit} claims {} bytes at byte {}, beyond its end",
                section.size, section.offset
            )));
        }
        features.push((bit, section));
    }
    Ok(features)
}

/// The EVENT_DESC feature, checked entry by entry so that no count in it
/// exceeds what its bytes can hold:
///
/// ```text
/// u32 nr, u32 attr_size,
/// nr × { perf_event_attr (attr_size bytes), u32 nr_ids,
///        u32 len, name (len bytes), u64 ids[nr_ids] }
/// ```
fn event_desc(reader: &Reader<'_>, section: Section) -> Result<Vec<RawEvent>, Refusal> {
    let bytes = reader.bytes(section.offset, section.size)?;
    let bad = |what: &str| Refusal::Corrupt(format!("its event descriptions {what}"));
    if bytes.len() < 8 {
        return Err(bad("are cut short"));
    }
    let count = u64::from(reader.u32(&bytes, 0));
    let attr_size = u64::from(reader.u32(&bytes, 4));
    if !(ATTR_MIN..=ATTR_MAX).contains(&attr_size) {
        return Err(bad(&format!("give {attr_size} bytes per attribute")));
    }
    // Each entry takes at least its attribute and two counts.
    if count > (bytes.len() as u64 - 8) / (attr_size + 8) {
        return Err(bad(&format!("claim {count} events")));
    }
    let mut at = 8usize;
    let mut events = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let attr = bytes
            .get(at..at + attr_size as usize)
            .ok_or_else(|| bad("are cut short"))?;
        let mut event = RawEvent {
            name: None,
            perf_type: reader.u32(attr, 0),
            config: reader.u64(attr, 8),
            config1: reader.u64(attr, 56),
            config2: if attr_size >= 72 {
                reader.u64(attr, 64)
            } else {
                0
            },
        };
        at += attr_size as usize;
        let counts = bytes.get(at..at + 8).ok_or_else(|| bad("are cut short"))?;
        let ids = u64::from(reader.u32(counts, 0));
        let name_len = u64::from(reader.u32(counts, 4));
        at += 8;
        let rest = (bytes.len() - at) as u64;
        if name_len > rest || ids > (rest - name_len) / 8 {
            return Err(bad("run past their section"));
        }
        let name = &bytes[at..at + name_len as usize];
        let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
        event.name = String::from_utf8(name.to_vec())
            .ok()
            .filter(|n| !n.is_empty());
        at += (name_len + 8 * ids) as usize;
        events.push(event);
    }
    Ok(events)
}

/// The event types section of old files: entries of an attribute and the
/// section of its event ids, each of which must lie in the file.
fn check_event_types(reader: &Reader<'_>, section: Section, attr_size: u64) -> Result<(), Refusal> {
    let entry = attr_size + SECTION_LEN;
    let bytes = reader.bytes(section.offset, section.size - section.size % entry)?;
    for start in (0..bytes.len()).step_by(entry as usize) {
        let ids = reader.section(&bytes, start + attr_size as usize);
        if ids.end().is_none_or(|end| end > reader.size) {
            return Err(Refusal::Corrupt(format!(
                "its event types list {} bytes of event ids at byte {}, beyond its end",
                ids.size, ids.offset
            )));
        }
    }
    Ok(())
}

/// The strings of a `perf_header_string` list feature (CMDLINE): a u32
/// count, then each string as a u32 length and its bytes.
pub(crate) fn string_list(reader: &Reader<'_>, bytes: &[u8]) -> Option<Vec<String>> {
    let count = reader.u32(bytes.get(..4)?, 0);
    let mut at = 4;
    let mut strings = Vec::new();
    for _ in 0..count {
        let (string, next) = string_at(reader, bytes, at)?;
        strings.push(string);
        at = next;
    }
    Some(strings)
}

/// The PMU_MAPPINGS feature: a u32 count, then each PMU's type and name.
pub(crate) fn pmu_names(reader: &Reader<'_>, bytes: &[u8]) -> Option<Vec<(u32, String)>> {
    let count = reader.u32(bytes.get(..4)?, 0);
    let mut at = 4;
    let mut names = Vec::new();
    for _ in 0..count {
        let pmu_type = reader.u32(bytes.get(at..at + 4)?, 0);
        let (name, next) = string_at(reader, bytes, at + 4)?;
        names.push((pmu_type, name));
        at = next;
    }
    Some(names)
}

/// A `perf_header_string` at `at`: its text up to the first NUL, and
/// where the next field starts.
fn string_at(reader: &Reader<'_>, bytes: &[u8], at: usize) -> Option<(String, usize)> {
    let len = reader.u32(bytes.get(at..at + 4)?, 0) as usize;
    let text = bytes.get(at + 4..(at + 4).checked_add(len)?)?;
    let text = &text[..text.iter().position(|&b| b == 0).unwrap_or(text.len())];
    Some((String::from_utf8_lossy(text).into_owned(), at + 4 + len))
}
