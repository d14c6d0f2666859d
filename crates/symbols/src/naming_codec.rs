//! The naming cache's file format: what a module's file said of its
//! offsets, with what it was said for (the module's build-id, the files
//! read, the detail and the naming options), in one self-contained file.
//!
//! ```text
//! magic "PROFNAME", version u32
//! key:     build-id (u8 length, bytes), detail u8, full signatures u8,
//!          files u8, each: device, inode, size u64, mtime s, ns i64
//! strings: count u32, each: length u32, UTF-8 bytes
//! answers: count u32, each: offset u64, flags u8 (svma, relative,
//!          function), svma u64?, relative u64?, function (name,
//!          linkage name: string index + 1 or 0; start u64)?,
//!          frames u32, each: function, linkage name, file (string
//!          index + 1 or 0), flag u8, line u32 if the flag is 1
//! ```
//!
//! Integers are little-endian. The cache directory is the user's own, but
//! a file in it may be cut short by a full disk or written by another
//! version: reading checks every length against what is left before
//! allocating, and anything malformed, or a key other than the one asked
//! for, reads as nothing cached.

use std::sync::Arc;

use profiler_model::{
    AddressSymbol, Detail, FileOffset, Frame, FunctionSymbol, RelativeAddress, Svma,
};
use rustc_hash::FxHashMap;

use crate::file_identity::FileIdentity;

const MAGIC: &[u8; 8] = b"PROFNAME";
const VERSION: u32 = 1;

/// What answers are good for: all of it must match for a file's answers
/// to be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CacheKey {
    pub build_id: Vec<u8>,
    /// The module's file, then its separate debug file if it has one.
    pub files: Vec<FileIdentity>,
    pub detail: Detail,
    pub full_signatures: bool,
}

/// One offset's answer.
pub(crate) type Answer = (FileOffset, AddressSymbol);

/// The file holding `answers` (sorted by offset) for `key`.
pub(crate) fn encode(key: &CacheKey, answers: &[Answer]) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + answers.len() * 48);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    encode_key(&mut out, key);
    let mut strings = Strings::default();
    let mut body = Vec::with_capacity(answers.len() * 40);
    for (offset, answer) in answers {
        encode_answer(&mut body, &mut strings, *offset, answer);
    }
    put_u32(&mut out, strings.list.len());
    for string in &strings.list {
        put_u32(&mut out, string.len());
        out.extend_from_slice(string.as_bytes());
    }
    put_u32(&mut out, answers.len());
    out.extend_from_slice(&body);
    out
}

/// The answers `bytes` holds for `key`; `None` where it holds another
/// key's or is malformed.
pub(crate) fn decode(bytes: &[u8], key: &CacheKey) -> Option<Vec<Answer>> {
    let mut input = Input(bytes);
    if input.take(MAGIC.len())? != MAGIC || input.u32()? != VERSION {
        return None;
    }
    if decode_key(&mut input)? != *key {
        return None;
    }
    // Each string takes at least its 4-byte length; each answer 9 bytes.
    let count = input.count(4)?;
    let mut strings: Vec<Arc<str>> = Vec::with_capacity(count);
    for _ in 0..count {
        let length = input.u32()? as usize;
        strings.push(Arc::from(std::str::from_utf8(input.take(length)?).ok()?));
    }
    let count = input.count(9)?;
    let mut answers = Vec::with_capacity(count);
    for _ in 0..count {
        answers.push(decode_answer(&mut input, &strings)?);
    }
    let sorted = answers.windows(2).all(|w| w[0].0 < w[1].0);
    (input.0.is_empty() && sorted).then_some(answers)
}

fn encode_key(out: &mut Vec<u8>, key: &CacheKey) {
    out.push(key.build_id.len() as u8);
    out.extend_from_slice(&key.build_id);
    out.push(match key.detail {
        Detail::Functions => 0,
        Detail::Frames => 1,
    });
    out.push(u8::from(key.full_signatures));
    out.push(key.files.len() as u8);
    for file in &key.files {
        for value in [file.device, file.inode, file.size] {
            out.extend_from_slice(&value.to_le_bytes());
        }
        for value in [file.modified, file.modified_ns] {
            out.extend_from_slice(&value.to_le_bytes());
        }
    }
}

fn decode_key(input: &mut Input<'_>) -> Option<CacheKey> {
    let length = input.u8()?.into();
    let build_id = input.take(length)?.to_vec();
    let detail = match input.u8()? {
        0 => Detail::Functions,
        1 => Detail::Frames,
        _ => return None,
    };
    let full_signatures = match input.u8()? {
        0 => false,
        1 => true,
        _ => return None,
    };
    let mut files = Vec::new();
    for _ in 0..input.u8()? {
        files.push(FileIdentity {
            device: input.u64()?,
            inode: input.u64()?,
            size: input.u64()?,
            modified: input.u64()? as i64,
            modified_ns: input.u64()? as i64,
        });
    }
    Some(CacheKey {
        build_id,
        files,
        detail,
        full_signatures,
    })
}

const SVMA: u8 = 1;
const RELATIVE: u8 = 2;
const FUNCTION: u8 = 4;

fn encode_answer<'a>(
    out: &mut Vec<u8>,
    strings: &mut Strings<'a>,
    offset: FileOffset,
    answer: &'a AddressSymbol,
) {
    out.extend_from_slice(&offset.0.to_le_bytes());
    let flags = [
        (answer.svma.is_some(), SVMA),
        (answer.relative.is_some(), RELATIVE),
        (answer.function.is_some(), FUNCTION),
    ];
    out.push(
        flags
            .iter()
            .filter(|(set, _)| *set)
            .map(|(_, flag)| flag)
            .sum(),
    );
    let addresses = [answer.svma.map(|a| a.0), answer.relative.map(|a| a.0)];
    for address in addresses.into_iter().flatten() {
        out.extend_from_slice(&address.to_le_bytes());
    }
    if let Some(function) = &answer.function {
        strings.put(out, &function.name);
        strings.put(out, &function.linkage_name);
        out.extend_from_slice(&function.start.0.to_le_bytes());
    }
    put_u32(out, answer.frames.len());
    for frame in &answer.frames {
        strings.put(out, &frame.function);
        strings.put(out, &frame.linkage_name);
        strings.put(out, &frame.file);
        match frame.line {
            Some(line) => {
                out.push(1);
                out.extend_from_slice(&line.to_le_bytes());
            }
            None => out.push(0),
        }
    }
}

fn decode_answer(input: &mut Input<'_>, strings: &[Arc<str>]) -> Option<Answer> {
    let offset = FileOffset(input.u64()?);
    let flags = input.u8()?;
    if flags & !(SVMA | RELATIVE | FUNCTION) != 0 {
        return None;
    }
    let mut address = |flag: u8| match flags & flag != 0 {
        true => input.u64().map(Some),
        false => Some(None),
    };
    let svma = address(SVMA)?.map(Svma);
    let relative = address(RELATIVE)?.map(RelativeAddress);
    let function = match flags & FUNCTION != 0 {
        true => Some(FunctionSymbol {
            name: string(input, strings)?,
            linkage_name: string(input, strings)?,
            start: RelativeAddress(input.u64()?),
        }),
        false => None,
    };
    // Each frame takes at least 13 bytes.
    let count = input.count(13)?;
    let mut frames = Vec::with_capacity(count);
    for _ in 0..count {
        frames.push(Frame {
            function: string(input, strings)?,
            linkage_name: string(input, strings)?,
            file: string(input, strings)?,
            line: match input.u8()? {
                0 => None,
                1 => Some(input.u32()?),
                _ => return None,
            },
        });
    }
    let symbol = AddressSymbol {
        svma,
        relative,
        function,
        frames,
    };
    Some((offset, symbol))
}

/// A string reference: `Some(None)` for no string, `None` when malformed.
fn string(input: &mut Input<'_>, strings: &[Arc<str>]) -> Option<Option<Arc<str>>> {
    match input.u32()? {
        0 => Some(None),
        index => strings.get(index as usize - 1).cloned().map(Some),
    }
}

/// Strings written once each, referred to by index.
#[derive(Default)]
struct Strings<'a> {
    list: Vec<&'a str>,
    index: FxHashMap<&'a str, u32>,
}

impl<'a> Strings<'a> {
    fn put(&mut self, out: &mut Vec<u8>, string: &'a Option<Arc<str>>) {
        let reference = match string.as_deref() {
            None => 0,
            Some(string) => *self.index.entry(string).or_insert_with(|| {
                self.list.push(string);
                self.list.len() as u32
            }),
        };
        out.extend_from_slice(&reference.to_le_bytes());
    }
}

fn put_u32(out: &mut Vec<u8>, value: usize) {
    out.extend_from_slice(&(value as u32).to_le_bytes());
}

/// What is left to read.
struct Input<'a>(&'a [u8]);

impl<'a> Input<'a> {
    fn take(&mut self, length: usize) -> Option<&'a [u8]> {
        let taken = self.0.get(..length)?;
        self.0 = &self.0[length..];
        Some(taken)
    }

    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    /// A count of items taking at least `least` bytes each, refused where
    /// what is left cannot hold them.
    fn count(&mut self, least: usize) -> Option<usize> {
        let count = self.u32()? as usize;
        (count.checked_mul(least)? <= self.0.len()).then_some(count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> CacheKey {
        CacheKey {
            build_id: vec![0xab; 20],
            files: vec![FileIdentity {
                device: 1,
                inode: 2,
                size: 3,
                modified: -4,
                modified_ns: 5,
            }],
            detail: Detail::Frames,
            full_signatures: false,
        }
    }

    fn answers() -> Vec<Answer> {
        let name: Arc<str> = Arc::from("main");
        let frame = Frame {
            function: Some(Arc::from("inlined")),
            linkage_name: None,
            file: Some(Arc::from("/src/a.c")),
            line: Some(12),
        };
        let named = AddressSymbol {
            svma: Some(Svma(0x1010)),
            relative: Some(RelativeAddress(0x10)),
            function: Some(FunctionSymbol {
                name: Some(Arc::clone(&name)),
                linkage_name: Some(Arc::from("_Z4mainv")),
                start: RelativeAddress(0),
            }),
            frames: vec![
                frame,
                Frame {
                    function: Some(name),
                    line: None,
                    ..Frame::default()
                },
            ],
        };
        vec![
            (FileOffset(0x10), named),
            (FileOffset(0x20), AddressSymbol::default()),
        ]
    }

    #[test]
    fn answers_read_back_as_written_with_names_shared() {
        let bytes = encode(&key(), &answers());
        let read = decode(&bytes, &key()).unwrap();
        assert_eq!(read, answers());
        let function = read[0].1.function.as_ref().unwrap();
        let outermost = read[0].1.frames[1].function.as_ref().unwrap();
        assert!(Arc::ptr_eq(function.name.as_ref().unwrap(), outermost));
    }

    #[test]
    fn another_key_reads_as_nothing() {
        let bytes = encode(&key(), &answers());
        let mut other = key();
        other.files[0].modified_ns += 1;
        assert_eq!(decode(&bytes, &other), None);
        let other = CacheKey {
            detail: Detail::Functions,
            ..key()
        };
        assert_eq!(decode(&bytes, &other), None);
        let other = CacheKey {
            full_signatures: true,
            ..key()
        };
        assert_eq!(decode(&bytes, &other), None);
    }

    #[test]
    fn a_file_cut_short_or_damaged_reads_as_nothing_or_as_answers_never_a_panic() {
        let bytes = encode(&key(), &answers());
        for length in 0..bytes.len() {
            assert_eq!(decode(&bytes[..length], &key()), None, "cut at {length}");
        }
        // Every byte changed to a few values: whatever comes back, no
        // panic and no allocation beyond the file's size.
        for at in 0..bytes.len() {
            for value in [0, 1, 0x7f, 0xff] {
                let mut damaged = bytes.clone();
                damaged[at] = value;
                let _ = decode(&damaged, &key());
            }
        }
        // Counts claiming more than the file holds.
        let mut huge = bytes.clone();
        let strings_at = MAGIC.len() + 4 + 1 + 20 + 3 + 40;
        huge[strings_at..strings_at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(decode(&huge, &key()), None);
        let mut noise = 0x9e37_79b9_u32;
        let random: Vec<u8> = (0..4096)
            .map(|_| {
                noise ^= noise << 13;
                noise ^= noise >> 17;
                noise ^= noise << 5;
                noise as u8
            })
            .collect();
        assert_eq!(decode(&random, &key()), None);
    }
}
