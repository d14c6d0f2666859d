//! The address spaces, named once.
//!
//! A sampled program counter travels through four spaces on its way to a
//! function name. Each has its own type so that one can never be passed where
//! another is meant:
//!
//! - [`Avma`]: an *actual virtual memory address* in the running process, as
//!   the kernel reports it in a sample or a mapping record.
//! - [`FileOffset`]: a byte offset into the mapped file. A mapping of a file at
//!   `start` with page offset `pgoff` turns `avma` into
//!   `avma - start + pgoff`. This is the key the recording can compute without
//!   opening the file.
//! - [`Svma`]: a *stated virtual memory address*, as written in the ELF file's
//!   program headers, symbol table and DWARF. Only the file knows how file
//!   offsets map to it (through its `PT_LOAD` segments).
//! - [`RelativeAddress`]: an address relative to the module's image base (the
//!   lowest `PT_LOAD` address). It is what users see for code without a name
//!   (`module+0x1139`): the same number for a PIE and a non-PIE build.
//!
//! In a simple PIE executable the last three coincide; in a non-PIE executable
//! (`Svma` 0x401136, file offset 0x1136), or a library whose text segment is
//! placed at an odd base, they do not.

use std::fmt;

macro_rules! address_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(pub u64);

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!(stringify!($name), "({:#x})"), self.0)
            }
        }

        impl fmt::LowerHex for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::LowerHex::fmt(&self.0, f)
            }
        }
    };
}

address_type!(
    /// An address in the address space of the running process.
    Avma
);
address_type!(
    /// A byte offset into a mapped file.
    FileOffset
);
address_type!(
    /// An address as stated in the ELF file (program headers, symbols, DWARF).
    Svma
);
address_type!(
    /// An address relative to the module's image base.
    RelativeAddress
);

/// The first address of the kernel half of the x86-64 and AArch64 address
/// spaces; a sampled `Avma` at or above it lies in the kernel.
const KERNEL_SPACE_START: Avma = Avma(0xffff_8000_0000_0000);

impl Avma {
    /// Whether this address lies in the kernel half of the address space.
    pub fn is_kernel(self) -> bool {
        self >= KERNEL_SPACE_START
    }
}
