//! Symbolization: sampled file offsets -> functions, from ELF symbol tables,
//! unwind tables and DWARF, read at report time from the binaries on disk.
//!
//! It implements the [`Symbolizer`](profiler_model::Symbolizer) contract of
//! the model, so reports never open ELF files themselves:
//!
//! ```no_run
//! use profiler_model::{FileOffset, Module, Symbolizer};
//! use profiler_symbols::ElfSymbolizer;
//!
//! let module = Module { path: "/usr/bin/ls".into(), build_id: None };
//! let symbols = ElfSymbolizer.symbolize(&module, &[FileOffset(0x4a10)]);
//! if let Some(function) = &symbols.addresses[0].function {
//!     println!("{:?} at +{:#x}", function.name, function.start.0);
//! }
//! ```
//!
//! Files are read into memory rather than mapped: mapping a file is `unsafe`
//! (another process may truncate it under us), and reading costs one copy.

mod demangle;
mod dwarf;
mod error;
mod functions;
mod image;
mod regions;
mod symbolizer;

pub use demangle::demangle;
pub use error::SymbolsError;
pub use regions::file_offsets;
pub use symbolizer::ElfSymbolizer;
