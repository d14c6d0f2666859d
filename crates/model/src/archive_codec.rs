//! The binary encoding of an [`Archive`], one chunk payload per module and
//! one for the kernel's names.
//!
//! Integers are LEB128 varints; offsets ascend, so each is stored as the
//! step from the one before; stated and relative addresses as the signed
//! distance from their offset, which is the same for every address of a
//! segment. Names and source files are stored once per module, in a table
//! that frames refer to by index (0 for none, else index + 1). A function's
//! name is its reference shifted left by one, the low bit set where the
//! mangled name differs and follows as a reference of its own, so that C
//! code pays next to nothing for C++'s mangled names.
//!
//! ```text
//! u8 kind: 3 module, 2 kernel names (1 was a module without mangled
//!          names: refused as of an older format)
//! module: path, build-id, pid + 1 (0: none), strings,
//!         functions { name, offset step, len, svma - offset, start - offset },
//!         addresses { offset step, flags (1 svma, 2 relative, 4 function),
//!                     svma - offset, relative - offset, function index,
//!                     frames { name, file, line + 1 } },
//!         code { svma, offset, bitness, bytes, name, has lines,
//!                frames { instruction offset step, frames },
//!                callees { svma, name } },
//!         unwind? { sections { name, start, end, bytes },
//!                   segments { offset, size, svma } }
//! kernel: names { address step, name }
//! name: (string << 1 | 1 if mangled), mangled string if mangled
//! ```
//!
//! A payload is decoded with every count checked against the bytes left,
//! so a crafted one is refused rather than believed.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use crate::address::{Avma, FileOffset, RelativeAddress, Svma};
use crate::archive::{
    ArchivedCode, ArchivedFunction, ArchivedSection, ArchivedUnwind, ModuleArchive,
};
use crate::printable::printable_bytes;
use crate::record::BuildId;
use crate::symbolize::{AddressSymbol, Frame, FunctionSymbol};

const KIND_MODULE: u8 = 3;
const KIND_KERNEL: u8 = 2;
/// A module's part before mangled names were archived.
const KIND_MODULE_UNMANGLED: u8 = 1;

/// A function's name, and its mangled name where that differs.
type Names = (Option<Arc<str>>, Option<Arc<str>>);

/// One decoded payload.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ArchivePart {
    Module(ModuleArchive),
    Kernel(Vec<(Avma, Arc<str>)>),
}

pub(crate) fn encode_kernel(names: &[(Avma, Arc<str>)]) -> Vec<u8> {
    let mut out = Writer::default();
    out.bytes.push(KIND_KERNEL);
    out.uint(names.len() as u64);
    let mut last = 0;
    for (address, name) in names {
        out.uint(address.0 - last);
        last = address.0;
        out.str(name);
    }
    out.bytes
}

pub(crate) fn encode_module(module: &ModuleArchive) -> Vec<u8> {
    let mut strings = Strings::default();
    let mut body = Writer::default();
    let function_index: HashMap<RelativeAddress, usize> = (module.functions.iter())
        .enumerate()
        .map(|(i, f)| (f.start, i))
        .collect();
    body.uint(module.functions.len() as u64);
    let mut last = 0;
    for f in &module.functions {
        body.name(f.name.as_deref(), f.linkage_name.as_deref(), &mut strings);
        body.uint(f.offset.0 - last);
        last = f.offset.0;
        body.uint(f.len);
        body.int(f.svma.0.wrapping_sub(f.offset.0));
        body.int(f.start.0.wrapping_sub(f.offset.0));
    }
    body.uint(module.addresses.len() as u64);
    let mut last = 0;
    for (offset, symbol) in &module.addresses {
        body.uint(offset.0 - last);
        last = offset.0;
        let function = (symbol.function.as_ref()).and_then(|f| function_index.get(&f.start));
        let flags = u8::from(symbol.svma.is_some())
            | u8::from(symbol.relative.is_some()) << 1
            | u8::from(function.is_some()) << 2;
        body.bytes.push(flags);
        if let Some(svma) = symbol.svma {
            body.int(svma.0.wrapping_sub(offset.0));
        }
        if let Some(relative) = symbol.relative {
            body.int(relative.0.wrapping_sub(offset.0));
        }
        if let Some(&index) = function {
            body.uint(index as u64);
        }
        body.frames(&symbol.frames, &mut strings);
    }
    body.uint(module.code.len() as u64);
    for code in &module.code {
        body.code(code, &mut strings);
    }
    match &module.unwind {
        Some(unwind) => {
            body.bytes.push(1);
            body.unwind(unwind, &mut strings);
        }
        None => body.bytes.push(0),
    }

    let mut out = Writer::default();
    out.bytes.push(KIND_MODULE);
    out.str(&module.path);
    let build_id = module.build_id.as_ref().map_or(&[][..], |b| &b.0);
    out.blob(build_id);
    out.uint(module.pid.map_or(0, |pid| u64::from(pid) + 1));
    out.uint(strings.list.len() as u64);
    for s in &strings.list {
        out.str(s);
    }
    out.bytes.extend_from_slice(&body.bytes);
    out.bytes
}

#[derive(Default)]
struct Strings {
    list: Vec<Arc<str>>,
    ids: HashMap<Arc<str>, u64>,
}

impl Strings {
    /// 0 for none, else the string's index + 1.
    fn id(&mut self, s: Option<&str>) -> u64 {
        let Some(s) = s else { return 0 };
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let s: Arc<str> = s.into();
        self.list.push(Arc::clone(&s));
        let id = self.list.len() as u64;
        self.ids.insert(s, id);
        id
    }
}

#[derive(Default)]
struct Writer {
    bytes: Vec<u8>,
}

impl Writer {
    fn uint(&mut self, mut value: u64) {
        loop {
            let byte = (value & 0x7f) as u8;
            value >>= 7;
            if value == 0 {
                self.bytes.push(byte);
                return;
            }
            self.bytes.push(byte | 0x80);
        }
    }

    /// A signed distance, zigzag-encoded.
    fn int(&mut self, value: u64) {
        let value = value as i64;
        self.uint(((value << 1) ^ (value >> 63)) as u64);
    }

    fn blob(&mut self, bytes: &[u8]) {
        self.uint(bytes.len() as u64);
        self.bytes.extend_from_slice(bytes);
    }

    fn str(&mut self, s: &str) {
        self.blob(s.as_bytes());
    }

    /// A function's name, and its mangled name where that differs.
    fn name(&mut self, name: Option<&str>, linkage_name: Option<&str>, strings: &mut Strings) {
        let id = strings.id(name) << 1;
        match linkage_name {
            Some(linkage_name) => {
                self.uint(id | 1);
                self.uint(strings.id(Some(linkage_name)));
            }
            None => self.uint(id),
        }
    }

    fn frames(&mut self, frames: &[Frame], strings: &mut Strings) {
        self.uint(frames.len() as u64);
        for frame in frames {
            self.name(
                frame.function.as_deref(),
                frame.linkage_name.as_deref(),
                strings,
            );
            self.uint(strings.id(frame.file.as_deref()));
            self.uint(frame.line.map_or(0, |line| u64::from(line) + 1));
        }
    }

    fn code(&mut self, code: &ArchivedCode, strings: &mut Strings) {
        self.uint(code.svma.0);
        self.uint(code.offset.0);
        self.bytes.push(code.bitness);
        self.blob(&code.bytes);
        self.uint(strings.id(code.name.as_deref()));
        self.bytes.push(u8::from(code.has_lines));
        self.uint(code.frames.len() as u64);
        let mut last = 0;
        for (at, frames) in &code.frames {
            self.uint(u64::from(at - last));
            last = *at;
            self.frames(frames, strings);
        }
        self.uint(code.callees.len() as u64);
        for (svma, name) in &code.callees {
            self.uint(svma.0);
            self.uint(strings.id(Some(name)));
        }
    }

    fn unwind(&mut self, unwind: &ArchivedUnwind, strings: &mut Strings) {
        self.uint(unwind.sections.len() as u64);
        for section in &unwind.sections {
            self.uint(strings.id(Some(&section.name)));
            self.uint(section.start.0);
            self.uint(section.end.0);
            self.blob(&section.bytes);
        }
        self.uint(unwind.segments.len() as u64);
        for (offset, size, svma) in &unwind.segments {
            self.uint(offset.0);
            self.uint(*size);
            self.uint(svma.0);
        }
    }
}

/// Decodes one archive chunk's payload.
pub(crate) fn decode(payload: &[u8]) -> Result<ArchivePart, &'static str> {
    let mut r = Reader {
        bytes: payload,
        strings: Vec::new(),
    };
    match r.u8()? {
        KIND_KERNEL => {
            let count = r.count(2)?;
            let mut names = Vec::with_capacity(count);
            let mut address = 0u64;
            for _ in 0..count {
                address = address
                    .checked_add(r.uint()?)
                    .ok_or("an address overflows")?;
                names.push((Avma(address), r.str()?.into()));
            }
            Ok(ArchivePart::Kernel(names))
        }
        KIND_MODULE => r.module().map(ArchivePart::Module),
        KIND_MODULE_UNMANGLED => Err("an archive part of an older format"),
        _ => Err("an archive part of an unknown kind"),
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    strings: Vec<Arc<str>>,
}

impl<'a> Reader<'a> {
    fn u8(&mut self) -> Result<u8, &'static str> {
        let (&byte, rest) = self.bytes.split_first().ok_or("the archive ends early")?;
        self.bytes = rest;
        Ok(byte)
    }

    fn uint(&mut self) -> Result<u64, &'static str> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.u8()?;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err("a number runs on")
    }

    fn int(&mut self) -> Result<u64, &'static str> {
        let value = self.uint()?;
        Ok(((value >> 1) as i64 ^ -((value & 1) as i64)) as u64)
    }

    /// A count of items taking at least `min_bytes` each, checked against
    /// the bytes left.
    fn count(&mut self, min_bytes: usize) -> Result<usize, &'static str> {
        let count = self.uint()?;
        match usize::try_from(count) {
            Ok(n) if n.saturating_mul(min_bytes) <= self.bytes.len() => Ok(n),
            _ => Err("a count exceeds what the archive holds"),
        }
    }

    fn blob(&mut self) -> Result<&'a [u8], &'static str> {
        let len = self.count(1)?;
        let (blob, rest) = self.bytes.split_at(len);
        self.bytes = rest;
        Ok(blob)
    }

    /// A name or path, made printable as a recording's are when read.
    fn str(&mut self) -> Result<Cow<'a, str>, &'static str> {
        Ok(printable_bytes(self.blob()?))
    }

    /// A reference to the string table: `None` for 0.
    fn string(&mut self) -> Result<Option<Arc<str>>, &'static str> {
        let id = self.uint()?;
        self.string_at(id)
    }

    fn string_at(&self, id: u64) -> Result<Option<Arc<str>>, &'static str> {
        match id {
            0 => Ok(None),
            id => (self.strings.get(id as usize - 1).cloned())
                .map(Some)
                .ok_or("a name that is not in the table"),
        }
    }

    /// A function's name, and its mangled name if one follows.
    fn name(&mut self) -> Result<Names, &'static str> {
        let id = self.uint()?;
        let name = self.string_at(id >> 1)?;
        let linkage_name = match id & 1 {
            0 => None,
            _ => Some(self.string()?.ok_or("a mangled name that is none")?),
        };
        Ok((name, linkage_name))
    }

    fn module(&mut self) -> Result<ModuleArchive, &'static str> {
        let path = self.str()?.into_owned();
        let build_id = self.blob()?;
        let build_id = (!build_id.is_empty()).then(|| BuildId(build_id.to_vec()));
        let pid = match self.uint()? {
            0 => None,
            n => Some(u32::try_from(n - 1).map_err(|_| "a pid out of range")?),
        };
        let strings = self.count(1)?;
        for _ in 0..strings {
            let s = self.str()?;
            self.strings.push(s.into());
        }
        let functions = self.functions()?;
        let addresses = self.addresses(&functions)?;
        let count = self.count(8)?;
        let code = (0..count).map(|_| self.code()).collect::<Result<_, _>>()?;
        let unwind = match self.u8()? {
            0 => None,
            _ => Some(self.unwind()?),
        };
        Ok(ModuleArchive {
            path,
            build_id,
            pid,
            functions,
            addresses,
            code,
            unwind,
        })
    }

    fn functions(&mut self) -> Result<Vec<ArchivedFunction>, &'static str> {
        let count = self.count(5)?;
        let mut functions = Vec::with_capacity(count);
        let mut offset = 0u64;
        for _ in 0..count {
            let (name, linkage_name) = self.name()?;
            offset = offset
                .checked_add(self.uint()?)
                .ok_or("an offset overflows")?;
            functions.push(ArchivedFunction {
                name,
                linkage_name,
                offset: FileOffset(offset),
                len: self.uint()?,
                svma: Svma(offset.wrapping_add(self.int()?)),
                start: RelativeAddress(offset.wrapping_add(self.int()?)),
            });
        }
        Ok(functions)
    }

    fn addresses(
        &mut self,
        functions: &[ArchivedFunction],
    ) -> Result<Vec<(FileOffset, AddressSymbol)>, &'static str> {
        let count = self.count(3)?;
        let mut addresses = Vec::with_capacity(count);
        let mut offset = 0u64;
        for _ in 0..count {
            offset = offset
                .checked_add(self.uint()?)
                .ok_or("an offset overflows")?;
            let flags = self.u8()?;
            let mut symbol = AddressSymbol::default();
            if flags & 1 != 0 {
                symbol.svma = Some(Svma(offset.wrapping_add(self.int()?)));
            }
            if flags & 2 != 0 {
                symbol.relative = Some(RelativeAddress(offset.wrapping_add(self.int()?)));
            }
            if flags & 4 != 0 {
                let f = (functions.get(self.uint()? as usize)).ok_or("no such function")?;
                symbol.function = Some(FunctionSymbol {
                    name: f.name.clone(),
                    linkage_name: f.linkage_name.clone(),
                    start: f.start,
                });
            }
            symbol.frames = self.frames()?;
            addresses.push((FileOffset(offset), symbol));
        }
        Ok(addresses)
    }

    fn frames(&mut self) -> Result<Vec<Frame>, &'static str> {
        let count = self.count(3)?;
        let mut frames = Vec::with_capacity(count);
        for _ in 0..count {
            let (function, linkage_name) = self.name()?;
            frames.push(Frame {
                function,
                linkage_name,
                file: self.string()?,
                line: match self.uint()? {
                    0 => None,
                    n => Some(u32::try_from(n - 1).map_err(|_| "a line out of range")?),
                },
            });
        }
        Ok(frames)
    }

    fn code(&mut self) -> Result<ArchivedCode, &'static str> {
        let svma = Svma(self.uint()?);
        let offset = FileOffset(self.uint()?);
        let bitness = self.u8()?;
        let bytes = self.blob()?.to_vec();
        let name = self.string()?.map(|s| s.to_string());
        let has_lines = self.u8()? != 0;
        let count = self.count(2)?;
        let mut frames = Vec::with_capacity(count);
        let mut at = 0u32;
        for _ in 0..count {
            let step = u32::try_from(self.uint()?).map_err(|_| "an instruction out of range")?;
            at = at.checked_add(step).ok_or("an instruction out of range")?;
            frames.push((at, self.frames()?));
        }
        let count = self.count(2)?;
        let mut callees = Vec::with_capacity(count);
        for _ in 0..count {
            let svma = Svma(self.uint()?);
            let name = self.string()?.ok_or("a callee without a name")?;
            callees.push((svma, name.to_string()));
        }
        Ok(ArchivedCode {
            svma,
            offset,
            bitness,
            bytes,
            name,
            has_lines,
            frames,
            callees,
        })
    }

    fn unwind(&mut self) -> Result<ArchivedUnwind, &'static str> {
        let count = self.count(4)?;
        let mut sections = Vec::with_capacity(count);
        for _ in 0..count {
            sections.push(ArchivedSection {
                name: self
                    .string()?
                    .ok_or("a section without a name")?
                    .to_string(),
                start: Svma(self.uint()?),
                end: Svma(self.uint()?),
                bytes: self.blob()?.to_vec(),
            });
        }
        let count = self.count(3)?;
        let mut segments = Vec::with_capacity(count);
        for _ in 0..count {
            segments.push((FileOffset(self.uint()?), self.uint()?, Svma(self.uint()?)));
        }
        Ok(ArchivedUnwind { sections, segments })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn frame(function: &str, file: &str, line: u32) -> Frame {
        Frame {
            function: Some(function.into()),
            linkage_name: None,
            file: Some(file.into()),
            line: Some(line),
        }
    }

    /// A frame of C++'s `ns::hot()`.
    fn hot_frame(line: u32) -> Frame {
        Frame {
            linkage_name: Some("_ZN2ns3hotEv".into()),
            ..frame("ns::hot()", "/src/a.cc", line)
        }
    }

    pub(crate) fn module() -> ModuleArchive {
        let hot = ArchivedFunction {
            name: Some("ns::hot()".into()),
            linkage_name: Some("_ZN2ns3hotEv".into()),
            offset: FileOffset(0x1130),
            len: 0x40,
            svma: Svma(0x40_1130),
            start: RelativeAddress(0x1130),
        };
        let unnamed = ArchivedFunction {
            name: None,
            linkage_name: None,
            offset: FileOffset(0x2000),
            len: 0x10,
            svma: Svma(0x40_2000),
            start: RelativeAddress(0x2000),
        };
        let symbol = |offset: u64, frames: Vec<Frame>, function: &ArchivedFunction| AddressSymbol {
            svma: Some(Svma(0x40_0000 + offset)),
            relative: Some(RelativeAddress(offset)),
            function: Some(FunctionSymbol {
                name: function.name.clone(),
                linkage_name: function.linkage_name.clone(),
                start: function.start,
            }),
            frames,
        };
        ModuleArchive {
            path: "/bin/app".into(),
            build_id: Some(BuildId(vec![0xab; 20])),
            pid: None,
            addresses: vec![
                (
                    FileOffset(0x1134),
                    symbol(
                        0x1134,
                        vec![frame("inner", "/src/a.h", 3), hot_frame(9)],
                        &hot,
                    ),
                ),
                (
                    FileOffset(0x1150),
                    symbol(0x1150, vec![hot_frame(10)], &hot),
                ),
                (FileOffset(0x2004), symbol(0x2004, vec![], &unnamed)),
                (FileOffset(0x9000), AddressSymbol::default()),
            ],
            functions: vec![hot, unnamed],
            code: vec![ArchivedCode {
                svma: Svma(0x40_1130),
                offset: FileOffset(0x1130),
                bitness: 64,
                bytes: vec![0x90, 0xc3],
                name: Some("ns::hot()".into()),
                has_lines: true,
                frames: vec![(0, vec![hot_frame(9)]), (1, vec![])],
                callees: vec![(Svma(0x40_2000), "other".into())],
            }],
            unwind: Some(ArchivedUnwind {
                sections: vec![ArchivedSection {
                    name: ".eh_frame".into(),
                    start: Svma(0x40_3000),
                    end: Svma(0x40_3004),
                    bytes: vec![1, 2, 3, 4],
                }],
                segments: vec![(FileOffset(0x1000), 0x2000, Svma(0x40_1000))],
            }),
        }
    }

    #[test]
    fn a_module_and_the_kernels_names_round_trip() {
        let module = module();
        let bytes = encode_module(&module);
        assert_eq!(decode(&bytes), Ok(ArchivePart::Module(module)));
        let names: Vec<(Avma, Arc<str>)> = vec![
            (Avma(0xffff_ffff_8100_0000), "do_syscall_64".into()),
            (Avma(0xffff_ffff_8100_0040), "entry_SYSCALL_64".into()),
        ];
        assert_eq!(
            decode(&encode_kernel(&names)),
            Ok(ArchivePart::Kernel(names))
        );
    }

    #[test]
    fn a_mangled_name_costs_its_string_and_a_byte_where_named() {
        let module = module();
        let mut unmangled = module.clone();
        unmangled.functions[0].linkage_name = None;
        for (_, symbol) in &mut unmangled.addresses {
            if let Some(function) = &mut symbol.function {
                function.linkage_name = None;
            }
            symbol.frames.iter_mut().for_each(|f| f.linkage_name = None);
        }
        for code in &mut unmangled.code {
            for (_, frames) in &mut code.frames {
                frames.iter_mut().for_each(|f| f.linkage_name = None);
            }
        }
        let plain = encode_module(&unmangled);
        assert_eq!(decode(&plain), Ok(ArchivePart::Module(unmangled)));
        // The mangled name's string once, then a one-byte reference per
        // function and frame that names it.
        let mangled = encode_module(&module);
        assert_eq!(mangled.len(), plain.len() + 1 + "_ZN2ns3hotEv".len() + 4);
    }

    #[test]
    fn a_module_archived_before_mangled_names_is_refused() {
        let mut bytes = encode_module(&module());
        bytes[0] = KIND_MODULE_UNMANGLED;
        assert_eq!(decode(&bytes), Err("an archive part of an older format"));
    }

    #[test]
    fn every_cut_and_flipped_byte_decodes_to_an_error_or_a_module() {
        let bytes = encode_module(&module());
        for len in 0..bytes.len() {
            assert!(decode(&bytes[..len]).is_err(), "cut at {len}");
        }
        for at in 0..bytes.len() {
            for value in [0x00, 0xff, 0x80, 0x7f] {
                let mut flipped = bytes.clone();
                flipped[at] = value;
                let _ = decode(&flipped);
            }
        }
    }
}
