//! Function names from DWARF, for code the symbol tables do not name.
//! The DWARF is parsed only when such an address turns up.

use std::borrow::Cow;
use std::cell::OnceCell;

use gimli::{EndianSlice, RunTimeEndian};
use object::{Object, ObjectSection};

use crate::demangle::demangle;
use crate::image::Image;

type Slice<'a> = EndianSlice<'a, RunTimeEndian>;

/// The debug sections of a module, loaded (and decompressed) on first use.
pub(crate) struct DebugInfo<'image, 'data> {
    image: &'image Image<'data>,
    sections: OnceCell<Option<gimli::DwarfSections<Cow<'data, [u8]>>>>,
}

impl<'image, 'data> DebugInfo<'image, 'data> {
    pub fn new(image: &'image Image<'data>) -> Self {
        DebugInfo {
            image,
            sections: OnceCell::new(),
        }
    }

    fn sections(&self) -> Option<&gimli::DwarfSections<Cow<'data, [u8]>>> {
        self.sections
            .get_or_init(|| {
                let object = &self.image.object;
                object.section_by_name(".debug_info")?;
                gimli::DwarfSections::load(|id| -> Result<_, gimli::Error> {
                    Ok(object
                        .section_by_name(id.name())
                        .and_then(|s| s.uncompressed_data().ok())
                        .unwrap_or(Cow::Borrowed(&[])))
                })
                .ok()
            })
            .as_ref()
    }

    /// Builds a lookup context over the loaded sections.
    pub fn context(&self) -> Option<addr2line::Context<Slice<'_>>> {
        let endian = if self.image.object.is_little_endian() {
            RunTimeEndian::Little
        } else {
            RunTimeEndian::Big
        };
        let dwarf = self
            .sections()?
            .borrow(|section| EndianSlice::new(section, endian));
        addr2line::Context::from_dwarf(dwarf).ok()
    }
}

/// The outermost (not inlined) function containing `address`, demangled.
pub(crate) fn function_name(
    context: &addr2line::Context<Slice<'_>>,
    address: u64,
) -> Option<String> {
    let mut frames = context.find_frames(address).skip_all_loads().ok()?;
    let mut outermost = None;
    while let Ok(Some(frame)) = frames.next() {
        if let Some(function) = frame.function {
            outermost = function.raw_name().ok().map(|name| demangle(&name));
        }
    }
    outermost
}
