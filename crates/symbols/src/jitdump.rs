//! Names, source lines and unwind tables of JIT-compiled code from the
//! jitdump file (`jit-PID.dump`) a JIT writes as perf's convention says
//! (V8 and node with `--perf-prof`, OpenJDK with a jitdump agent, .NET
//! with `DOTNET_PerfMapEnabled=1`, Wasmtime with `--profile=jitdump`,
//! LuaJIT), read where perf needs `perf inject --jit` first.
//!
//! The file is a header and records, each `id, total_size, timestamp` then
//! its body: code loads (the function's address, size, name and code),
//! moves, debug info (the source line of each stretch of a function's
//! code, before the function's load) and unwinding info (`.eh_frame` and
//! `.eh_frame_hdr` for the next load). A JIT maps the file executable once
//! as a marker, so the recording names it among the files mapped.
//!
//! Only a regular file owned by the reader or by root is read (a file in
//! /tmp may have been put there by anyone), every length is checked
//! against the bytes that hold it, and what is kept is bounded by the
//! file's size.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use rustix::fs::OFlags;

/// `JiTD` as a little-endian (or, swapped, big-endian) word.
const MAGIC: u32 = 0x4A69_5444;
const MAGIC_SWAPPED: u32 = 0x4454_694A;
const HEADER_SIZE: u64 = 40;
const RECORD_HEADER_SIZE: u64 = 16;

const CODE_LOAD: u32 = 0;
const CODE_MOVE: u32 = 1;
const CODE_DEBUG_INFO: u32 = 2;
const CODE_CLOSE: u32 = 3;
const CODE_UNWINDING_INFO: u32 = 4;

/// What V8, LLVM's and Dart's JITs add to each debug entry's address:
/// `perf inject` places a function's code after an ELF header of this size.
const ELF_HEADER_SIZE: u64 = 0x40;

/// A function of JIT code: where it lay, its name, and what the debug and
/// unwinding info said of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct JitFunction {
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) name: Arc<str>,
    /// The source line from each offset into the code on, by offset.
    pub(crate) lines: Arc<[LineEntry]>,
    pub(crate) unwind: Option<Arc<UnwindInfo>>,
}

/// From `offset` bytes into a function's code on, its source line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LineEntry {
    pub(crate) offset: u64,
    pub(crate) file: Arc<str>,
    pub(crate) line: u32,
}

/// A function's `.eh_frame` followed by its `.eh_frame_hdr`, as they lie
/// right after its code (where the JIT's pointers in them expect them).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct UnwindInfo {
    pub(crate) bytes: Arc<[u8]>,
    pub(crate) eh_frame_hdr_size: u64,
}

/// The functions a jitdump file describes, each address named by the last
/// load that covered it.
#[derive(Debug, Default)]
pub(crate) struct JitDump {
    /// Disjoint, by start.
    functions: BTreeMap<u64, JitFunction>,
    /// Why the records after some point were not read, if they were not.
    pub(crate) problem: Option<String>,
}

/// The process id a jitdump file's name gives (`jit-PID.dump`), if it
/// is named as JITs name them.
pub(crate) fn dump_pid(path: &Path) -> Option<u32> {
    let name = path.file_name()?.to_str()?;
    let digits = name.strip_prefix("jit-")?.strip_suffix(".dump")?;
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// The jitdump file of process `pid` among `paths` (the files the recorded
/// processes mapped executable).
pub(crate) fn dump_of(paths: &[PathBuf], pid: u32) -> Option<&Path> {
    paths
        .iter()
        .find(|path| dump_pid(path) == Some(pid))
        .map(PathBuf::as_path)
}

/// A process's jitdump, when it wrote one, or why it could not be read.
pub(crate) type DumpRead = Result<Option<Arc<JitDump>>, String>;

/// The jitdump files of the recorded processes, each read the first time
/// it is asked for.
#[derive(Debug, Default)]
pub(crate) struct JitDumps {
    read: Mutex<HashMap<u32, DumpRead>>,
}

impl JitDumps {
    /// The jitdump of process `pid`, found among `paths`.
    pub(crate) fn get(&self, paths: &[PathBuf], pid: u32) -> DumpRead {
        let mut read = self.read.lock().unwrap_or_else(PoisonError::into_inner);
        let dump = read.entry(pid).or_insert_with(|| {
            let Some(path) = dump_of(paths, pid) else {
                return Ok(None);
            };
            match JitDump::load(path) {
                Ok(mut dump) => {
                    let named = |problem| format!("{}: {problem}", path.display());
                    dump.problem = dump.problem.map(named);
                    Ok(Some(Arc::new(dump)))
                }
                Err(error) => Err(format!("cannot read {}: {error}", path.display())),
            }
        });
        dump.clone()
    }
}

impl JitDump {
    /// Reads the jitdump file at `path`.
    pub(crate) fn load(path: &Path) -> io::Result<JitDump> {
        let (file, size) = open_owned_regular(path)?;
        JitDump::read(BufReader::new(file), size)
    }

    /// Reads a jitdump file of `size` bytes from `input`.
    pub(crate) fn read(input: impl Read, size: u64) -> io::Result<JitDump> {
        let mut input = Input {
            inner: input.take(size),
            left: size,
            swapped: false,
        };
        let magic = input.bytes(4)?;
        input.swapped = match u32::from_le_bytes([magic[0], magic[1], magic[2], magic[3]]) {
            MAGIC => false,
            MAGIC_SWAPPED => true,
            _ => return Err(invalid("not a jitdump file (no JiTD signature)")),
        };
        let header = Fields::new(input.bytes(HEADER_SIZE - 4)?, input.swapped);
        let header_size = u64::from(header.u32_at(4)?);
        if header_size < HEADER_SIZE {
            return Err(invalid("its header is shorter than a jitdump header"));
        }
        input.skip(header_size - HEADER_SIZE)?;
        let mut builder = Builder::default();
        let mut problem = None;
        let mut index = 0u64;
        while input.left >= RECORD_HEADER_SIZE {
            index += 1;
            let head = Fields::new(input.bytes(RECORD_HEADER_SIZE)?, input.swapped);
            let (id, total) = (head.u32_at(0)?, u64::from(head.u32_at(4)?));
            let Some(body) = total.checked_sub(RECORD_HEADER_SIZE) else {
                return Err(invalid("a record is shorter than its own header"));
            };
            if body > input.left {
                // The JIT was still writing it: what came before stands.
                break;
            }
            if id == CODE_CLOSE {
                break;
            }
            let known = [CODE_LOAD, CODE_MOVE, CODE_DEBUG_INFO, CODE_UNWINDING_INFO];
            if !known.contains(&id) {
                input.skip(body)?;
                continue;
            }
            let body = Fields::new(input.bytes(body)?, input.swapped);
            // A record that does not add up ends the reading, as in perf;
            // what came before stands.
            if let Err(error) = builder.add(id, &body) {
                problem = Some(format!(
                    "record {index} is damaged ({error}); the records after it are left out"
                ));
                break;
            }
        }
        Ok(JitDump {
            functions: builder.functions,
            problem,
        })
    }

    /// The function whose code holds `address`.
    pub(crate) fn function(&self, address: u64) -> Option<&JitFunction> {
        let (_, function) = self.functions.range(..=address).next_back()?;
        (address < function.end).then_some(function)
    }

    /// The functions that overlap `range`, by start.
    pub(crate) fn functions_in(&self, start: u64, end: u64) -> impl Iterator<Item = &JitFunction> {
        let first = self.function(start).map_or(start, |f| f.start);
        (self.functions.range(first..end.max(first))).map(|(_, function)| function)
    }
}

/// The source line of `address` in `function`, where the debug info has one.
pub(crate) fn line_of(function: &JitFunction, address: u64) -> Option<&LineEntry> {
    let offset = address.checked_sub(function.start)?;
    let after = function
        .lines
        .partition_point(|entry| entry.offset <= offset);
    function.lines.get(after.checked_sub(1)?)
}

/// Records turned into functions: debug and unwinding info wait for the
/// load they precede.
#[derive(Default)]
struct Builder {
    functions: BTreeMap<u64, JitFunction>,
    /// Debug info by the code address it describes.
    lines: BTreeMap<u64, Arc<[LineEntry]>>,
    unwind: Option<Arc<UnwindInfo>>,
}

impl Builder {
    fn add(&mut self, id: u32, body: &Fields) -> io::Result<()> {
        match id {
            CODE_LOAD => self.load(body),
            CODE_MOVE => self.relocate(body),
            CODE_DEBUG_INFO => self.debug_info(body),
            _ => self.unwinding_info(body),
        }
    }

    /// `pid, tid, vma, code_addr, code_size, code_index, name\0, code`.
    fn load(&mut self, body: &Fields) -> io::Result<()> {
        let (start, size) = (body.u64_at(16)?, body.u64_at(24)?);
        let (name, name_end) = body.str_at(40)?;
        if size > body.len().saturating_sub(name_end) as u64 {
            return Err(invalid("a code load's code is longer than its record"));
        }
        // Lines outside the code belong to no function of it.
        let lines = (self.lines.remove(&start))
            .filter(|lines| lines.iter().all(|entry| entry.offset < size))
            .unwrap_or_default();
        let function = JitFunction {
            start,
            end: start.saturating_add(size),
            name,
            lines,
            unwind: self.unwind.take(),
        };
        self.insert(function);
        Ok(())
    }

    /// `pid, tid, vma, old_code_addr, new_code_addr, code_size, code_index`:
    /// the code of the load at the old address now lies at the new one.
    fn relocate(&mut self, body: &Fields) -> io::Result<()> {
        let (old, new, size) = (body.u64_at(16)?, body.u64_at(24)?, body.u64_at(32)?);
        let Some(moved) = self.functions.get(&old).cloned() else {
            return Ok(());
        };
        self.insert(JitFunction {
            start: new,
            end: new.saturating_add(size),
            ..moved
        });
        Ok(())
    }

    /// `code_addr, nr_entry`, then entries `addr, lineno, discrim, name\0`,
    /// a name of `\xff` repeating the previous entry's file.
    fn debug_info(&mut self, body: &Fields) -> io::Result<()> {
        let (code, count) = (body.u64_at(0)?, body.u64_at(8)?);
        // An entry takes at least 17 bytes: no count beyond that is read.
        let most = (body.len().saturating_sub(16) / 17) as u64;
        let mut raw = Vec::with_capacity(count.min(most) as usize);
        let mut at = 16;
        let mut file: Arc<str> = Arc::from("");
        for _ in 0..count.min(most) {
            let (address, line) = (body.u64_at(at)?, body.u32_at(at + 8)?);
            let (name, end) = body.str_at(at + 16)?;
            if !body.repeats_name(at + 16) {
                file = name;
            }
            raw.push((address, Arc::clone(&file), line));
            at = end;
        }
        // The entries fill the record up to its padding to 8 bytes, or the
        // record is not what it says (node 20's V8 writes some scripts'
        // names from freed memory): its lines are not used.
        if count > most || body.len().saturating_sub(at) >= 8 {
            return Ok(());
        }
        // Entries state the address the code would have after an ELF
        // header (V8, LLVM, Dart); a writer whose first address is below
        // that states the code's own.
        let shift = match raw
            .iter()
            .all(|(a, ..)| *a >= code.saturating_add(ELF_HEADER_SIZE))
        {
            true => code.saturating_add(ELF_HEADER_SIZE),
            false => code,
        };
        let mut lines: Vec<LineEntry> = (raw.into_iter())
            .filter_map(|(address, file, line)| {
                let offset = address.checked_sub(shift)?;
                Some(LineEntry { offset, file, line })
            })
            .collect();
        lines.sort_by_key(|entry| entry.offset);
        self.lines.insert(code, lines.into());
        Ok(())
    }

    /// `unwinding_size, eh_frame_hdr_size, mapped_size`, then `.eh_frame`
    /// and `.eh_frame_hdr`, for the next load.
    fn unwinding_info(&mut self, body: &Fields) -> io::Result<()> {
        let (size, header_size) = (body.u64_at(0)?, body.u64_at(8)?);
        let bytes = body.slice(24, size)?;
        if header_size > size {
            return Err(invalid("unwinding info with a header larger than itself"));
        }
        self.unwind = Some(Arc::new(UnwindInfo {
            bytes: bytes.into(),
            eh_frame_hdr_size: header_size,
        }));
        Ok(())
    }

    /// Adds `function`, cutting away whatever earlier loads it overlaps.
    fn insert(&mut self, function: JitFunction) {
        if function.end <= function.start {
            return;
        }
        let overlapping: Vec<u64> = (self.functions.range(..function.end).rev())
            .take_while(|(_, old)| old.end > function.start)
            .map(|(&start, _)| start)
            .collect();
        for start in overlapping {
            let Some(old) = self.functions.remove(&start) else {
                continue;
            };
            // What is left of an earlier function keeps its name.
            if old.start < function.start {
                let before = JitFunction {
                    end: function.start,
                    ..old.clone()
                };
                self.functions.insert(before.start, before);
            }
            if old.end > function.end {
                self.functions.insert(
                    function.end,
                    JitFunction {
                        start: function.end,
                        ..old
                    },
                );
            }
        }
        self.functions.insert(function.start, function);
    }
}

/// The rest of the file, each read checked against what is left.
struct Input<R> {
    inner: R,
    left: u64,
    swapped: bool,
}

impl<R: Read> Input<R> {
    /// The next `count` bytes, which the file must hold.
    fn bytes(&mut self, count: u64) -> io::Result<Vec<u8>> {
        if count > self.left {
            return Err(invalid("it ends early"));
        }
        let mut bytes = vec![0; count as usize];
        self.inner.read_exact(&mut bytes)?;
        self.left -= count;
        Ok(bytes)
    }

    fn skip(&mut self, count: u64) -> io::Result<()> {
        if count > self.left {
            return Err(invalid("it ends early"));
        }
        let skipped = io::copy(&mut (&mut self.inner).take(count), &mut io::sink())?;
        if skipped < count {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        self.left -= count;
        Ok(())
    }
}

/// A record's body, read field by field, each within its bytes.
struct Fields {
    bytes: Vec<u8>,
    swapped: bool,
}

impl Fields {
    fn new(bytes: Vec<u8>, swapped: bool) -> Fields {
        Fields { bytes, swapped }
    }

    fn len(&self) -> usize {
        self.bytes.len()
    }

    fn array<const N: usize>(&self, at: usize) -> io::Result<[u8; N]> {
        let bytes = (self.bytes.get(at..at.saturating_add(N)))
            .ok_or_else(|| invalid("a record is shorter than its fields"))?;
        let mut array = [0; N];
        array.copy_from_slice(bytes);
        if self.swapped {
            array.reverse();
        }
        Ok(array)
    }

    fn u32_at(&self, at: usize) -> io::Result<u32> {
        self.array(at).map(u32::from_le_bytes)
    }

    fn u64_at(&self, at: usize) -> io::Result<u64> {
        self.array(at).map(u64::from_le_bytes)
    }

    /// The NUL-terminated string at `at` and where it ends (after its NUL).
    fn str_at(&self, at: usize) -> io::Result<(Arc<str>, usize)> {
        let rest = self.bytes.get(at..).unwrap_or_default();
        let length = (rest.iter().position(|&b| b == 0))
            .ok_or_else(|| invalid("a name runs past its record"))?;
        let text = String::from_utf8_lossy(&rest[..length]);
        Ok((Arc::from(&*text), at + length + 1))
    }

    /// Whether the name at `at` is `\xff`, which repeats the previous one.
    fn repeats_name(&self, at: usize) -> bool {
        self.bytes.get(at..at.saturating_add(2)) == Some(&[0xff, 0][..])
    }

    fn slice(&self, at: usize, count: u64) -> io::Result<&[u8]> {
        usize::try_from(count)
            .ok()
            .and_then(|count| self.bytes.get(at..at.checked_add(count)?))
            .ok_or_else(|| invalid("unwinding info longer than its record"))
    }
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_owned())
}

/// Opens `path` if it is a regular file itself (not a link to one) owned
/// by this user or root, checking after the open that the file opened is
/// the one looked at; with its size.
fn open_owned_regular(path: &Path) -> io::Result<(File, u64)> {
    let seen = std::fs::symlink_metadata(path)?;
    if !seen.file_type().is_file() {
        return Err(invalid("not a regular file"));
    }
    let user = rustix::process::geteuid().as_raw();
    if seen.uid() != user && seen.uid() != 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("owned by user {}, not by this user or root", seen.uid()),
        ));
    }
    let flags = OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits() as i32)
        .open(path)?;
    let opened = file.metadata()?;
    if !opened.file_type().is_file() || (opened.dev(), opened.ino()) != (seen.dev(), seen.ino()) {
        return Err(invalid("replaced while it was opened"));
    }
    Ok((file, opened.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A jitdump file as a JIT writes it, record by record.
    #[derive(Default)]
    struct DumpWriter {
        bytes: Vec<u8>,
    }

    impl DumpWriter {
        fn new(pid: u32) -> DumpWriter {
            let mut bytes = Vec::new();
            for word in [MAGIC, 1, HEADER_SIZE as u32, 62, 0, pid] {
                bytes.extend(word.to_le_bytes());
            }
            bytes.extend(0u64.to_le_bytes());
            bytes.extend(0u64.to_le_bytes());
            DumpWriter { bytes }
        }

        fn record(&mut self, id: u32, body: &[u8]) {
            let total = (RECORD_HEADER_SIZE as usize + body.len()) as u32;
            self.bytes.extend(id.to_le_bytes());
            self.bytes.extend(total.to_le_bytes());
            self.bytes.extend(0u64.to_le_bytes());
            self.bytes.extend(body);
        }

        fn load(&mut self, address: u64, code: &[u8], name: &str) {
            let mut body = Vec::new();
            body.extend(1u32.to_le_bytes());
            body.extend(1u32.to_le_bytes());
            for word in [address, address, code.len() as u64, 0] {
                body.extend(word.to_le_bytes());
            }
            body.extend(name.as_bytes());
            body.push(0);
            body.extend(code);
            self.record(CODE_LOAD, &body);
        }

        fn moved(&mut self, old: u64, new: u64, size: u64) {
            let mut body = Vec::new();
            body.extend(1u32.to_le_bytes());
            body.extend(1u32.to_le_bytes());
            for word in [new, old, new, size, 0] {
                body.extend(word.to_le_bytes());
            }
            self.record(CODE_MOVE, &body);
        }

        /// Entries at `address + offset + 0x40`, as V8 states them; the
        /// file `"\\xff"` is written as the byte 0xff, which repeats the
        /// previous entry's.
        fn lines(&mut self, address: u64, entries: &[(u64, &str, u32)]) {
            let mut body = Vec::new();
            body.extend(address.to_le_bytes());
            body.extend((entries.len() as u64).to_le_bytes());
            for (offset, file, line) in entries {
                body.extend((address + offset + ELF_HEADER_SIZE).to_le_bytes());
                body.extend(line.to_le_bytes());
                body.extend(0u32.to_le_bytes());
                match *file {
                    "\\xff" => body.push(0xff),
                    file => body.extend(file.as_bytes()),
                }
                body.push(0);
            }
            self.record(CODE_DEBUG_INFO, &body);
        }

        fn unwinding(&mut self, eh_frame: &[u8], eh_frame_hdr: &[u8]) {
            let mut body = Vec::new();
            let size = (eh_frame.len() + eh_frame_hdr.len()) as u64;
            for word in [size, eh_frame_hdr.len() as u64, 0] {
                body.extend(word.to_le_bytes());
            }
            body.extend(eh_frame);
            body.extend(eh_frame_hdr);
            self.record(CODE_UNWINDING_INFO, &body);
        }

        fn read(&self) -> io::Result<JitDump> {
            JitDump::read(&self.bytes[..], self.bytes.len() as u64)
        }
    }

    #[test]
    fn loads_name_their_code_and_debug_info_gives_lines() {
        let mut dump = DumpWriter::new(42);
        dump.lines(
            0x1000,
            &[(0, "app.js", 3), (0x10, "app.js", 5), (0x18, "\\xff", 9)],
        );
        dump.load(0x1000, &[0x90; 0x20], "JS:*hot app.js:3");
        dump.load(0x2000, &[0x90; 0x10], "Builtin:Add");
        let dump = dump.read().unwrap();
        let hot = dump.function(0x101f).unwrap();
        assert_eq!(
            (&*hot.name, hot.start, hot.end),
            ("JS:*hot app.js:3", 0x1000, 0x1020)
        );
        let line = |address| line_of(hot, address).map(|e| (e.file.to_string(), e.line));
        assert_eq!(line(0x1000), Some(("app.js".into(), 3)));
        assert_eq!(line(0x100f), Some(("app.js".into(), 3)));
        assert_eq!(line(0x1012), Some(("app.js".into(), 5)));
        assert_eq!(line(0x101f), Some(("app.js".into(), 9)));
        assert!(dump.function(0x1020).is_none());
        let add = dump.function(0x2000).unwrap();
        assert_eq!(&*add.name, "Builtin:Add");
        assert!(add.lines.is_empty());
    }

    #[test]
    fn a_later_load_or_move_replaces_what_it_covers() {
        let mut dump = DumpWriter::new(42);
        dump.load(0x1000, &[0x90; 0x40], "old");
        dump.load(0x1010, &[0x90; 0x10], "new");
        dump.moved(0x1010, 0x3000, 0x10);
        let dump = dump.read().unwrap();
        let name = |address| dump.function(address).map(|f| f.name.to_string());
        assert_eq!(name(0x100f).as_deref(), Some("old"));
        assert_eq!(name(0x1010).as_deref(), Some("new"));
        assert_eq!(name(0x1020).as_deref(), Some("old"));
        assert_eq!(name(0x103f).as_deref(), Some("old"));
        assert_eq!(name(0x3005).as_deref(), Some("new"));
        let names: Vec<String> = (dump.functions_in(0x1015, 0x1030))
            .map(|f| f.name.to_string())
            .collect();
        assert_eq!(names, ["new", "old"]);
    }

    #[test]
    fn a_record_cut_short_ends_the_file_and_lengths_are_checked() {
        let mut dump = DumpWriter::new(42);
        dump.load(0x1000, &[0x90; 0x10], "whole");
        dump.load(0x2000, &[0x90; 0x10], "cut");
        let cut = dump.bytes.len() - 4;
        let read = JitDump::read(&dump.bytes[..cut], cut as u64).unwrap();
        assert!(read.function(0x1000).is_some());
        assert!(read.function(0x2000).is_none());

        // A code size past the record, a name without its NUL, a debug
        // entry count of 2^60: refused or bounded, never trusted.
        let mut lying = DumpWriter::new(42);
        lying.load(0x1000, &[0x90; 4], "f");
        let size_at = 40 + 16 + 24;
        lying.bytes[size_at..size_at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        lying.load(0x2000, &[0x90; 4], "after");
        let read = lying.read().unwrap();
        assert!(read.function(0x1000).is_none() && read.function(0x2000).is_none());
        assert!(read.problem.unwrap().starts_with("record 1 is damaged"));
        let mut nameless = DumpWriter::new(42);
        nameless.load(0x1000, &[], "f");
        let last = nameless.bytes.len() - 1;
        nameless.bytes[last] = b'x';
        assert!(nameless.read().unwrap().problem.is_some());
        let mut counted = DumpWriter::new(42);
        counted.lines(0x1000, &[(0, "a.js", 1)]);
        let count_at = 40 + 16 + 8;
        counted.bytes[count_at..count_at + 8].copy_from_slice(&(1u64 << 60).to_le_bytes());
        counted.load(0x1000, &[0x90; 4], "f");
        let read = counted.read().unwrap();
        assert!(read.function(0x1000).unwrap().lines.is_empty());
        assert!(JitDump::read(&b"ELF\0"[..], 4).is_err());
    }

    #[test]
    fn unwinding_info_belongs_to_the_next_load_and_moves_with_it() {
        let mut dump = DumpWriter::new(42);
        dump.unwinding(&[1; 24], &[2; 20]);
        dump.load(0x1000, &[0x90; 0x20], "described");
        dump.load(0x2000, &[0x90; 0x20], "bare");
        dump.moved(0x1000, 0x3000, 0x20);
        let dump = dump.read().unwrap();
        for address in [0x1000, 0x3000] {
            let unwind = dump.function(address).unwrap().unwind.as_ref().unwrap();
            assert_eq!((unwind.bytes.len(), unwind.eh_frame_hdr_size), (44, 20));
        }
        assert!(dump.function(0x2000).unwrap().unwind.is_none());
    }

    #[test]
    fn debug_info_that_does_not_add_up_gives_no_lines() {
        // An entry past the code, and a record whose entries stop short of
        // its end (names read from freed memory): no lines, names kept.
        let mut dump = DumpWriter::new(42);
        dump.lines(0x1000, &[(0, "a.js", 1), (0x40, "a.js", 2)]);
        dump.load(0x1000, &[0x90; 0x20], "past");
        dump.lines(0x2000, &[(0, "b.js", 1), (4, "b.js", 2)]);
        let count_at = dump.bytes.len() - 2 * (16 + 5) - 8;
        dump.bytes[count_at..count_at + 8].copy_from_slice(&1u64.to_le_bytes());
        dump.load(0x2000, &[0x90; 0x20], "short");
        let dump = dump.read().unwrap();
        for (address, name) in [(0x1000, "past"), (0x2000, "short")] {
            let function = dump.function(address).unwrap();
            assert_eq!(&*function.name, name);
            assert!(function.lines.is_empty(), "{function:?}");
        }
    }

    #[test]
    fn only_files_named_as_jits_name_them_are_dumps() {
        assert_eq!(dump_pid(Path::new("/tmp/x/jit-1234.dump")), Some(1234));
        assert_eq!(dump_pid(Path::new("jit-.dump")), None);
        assert_eq!(dump_pid(Path::new("/tmp/jit-12a.dump")), None);
        assert_eq!(dump_pid(Path::new("/tmp/perf-12.map")), None);
        let paths = [
            PathBuf::from("/a/jit-1.dump"),
            PathBuf::from("/b/jit-2.dump"),
        ];
        assert_eq!(dump_of(&paths, 2), Some(Path::new("/b/jit-2.dump")));
        assert_eq!(dump_of(&paths, 3), None);
    }

    #[test]
    fn only_a_regular_file_of_this_user_or_root_is_opened() {
        let dir = std::env::temp_dir().join(format!("jitdump-open-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("jit-1.dump");
        let mut dump = DumpWriter::new(1);
        dump.load(0x1000, &[0x90; 4], "f");
        std::fs::write(&file, &dump.bytes).unwrap();
        assert!(JitDump::load(&file).unwrap().function(0x1000).is_some());
        let link = dir.join("jit-2.dump");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(JitDump::load(&link).is_err());
        assert!(JitDump::load(&dir).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
