//! Symbolization: sampled file offsets -> functions, inline chains and source
//! lines, from ELF symbol tables, PLT, unwind tables and DWARF (in the file or
//! in its separate debug file, compressed or not), read at report time from
//! the binaries on disk; the vdso, JIT maps and kallsyms for code without
//! files.
//!
//! It implements the [`Symbolizer`](profiler_model::Symbolizer) contract of
//! the model, so reports never open ELF files themselves:
//!
//! ```no_run
//! use profiler_model::{Detail, FileOffset, Module, Symbolizer};
//! use profiler_symbols::ElfSymbolizer;
//!
//! let module = Module { path: "/usr/bin/ls".into(), build_id: None, pid: None };
//! let symbols = ElfSymbolizer::default().symbolize(&module, &[FileOffset(0x4a10)], Detail::Functions);
//! if let Some(function) = &symbols.addresses[0].function {
//!     println!("{:?} at +{:#x}", function.name, function.start.0);
//! }
//! ```
//!
//! For annotated listings it implements the
//! [`Disassembler`](profiler_model::Disassembler) contract too (one
//! function's x86 code, each instruction with its inline chain and line),
//! and [`SourceFiles`] reads the sources the debug info names.
//!
//! What a module with a build-id was named may be kept on disk between
//! runs ([`SymbolizerOptions::cache_dir`], under [`default_cache_dir`]),
//! checked against the files' identity: naming it again then reads no
//! symbol table or debug info, and gives the same names.
//!
//! Binaries and debug files are mapped read-only: only the pages used are
//! loaded, and handed back once read (see `image`); a file truncated while
//! it is read ends the process with SIGBUS, as it would perf or gdb.

mod archived_symbolizer;
mod archiver;
mod build_id_cache;
mod cache_dir;
mod debug_file;
mod demangle;
mod disassemble;
mod dwarf;
mod dwarf_abbrev;
mod dwarf_roots;
mod dwarf_units;
mod elf_module;
mod error;
mod file_identity;
mod functions;
mod image;
mod jit;
mod jitdump;
mod kept_modules;
mod kernel;
mod naming_cache;
mod naming_codec;
mod plt;
mod regions;
mod sources;
mod symbol_table;
mod symbolizer;
mod threads;
mod unwind;
mod vdso;

pub use archived_symbolizer::ArchivedSymbolizer;
pub use archiver::{Archived, Archiver};
pub use demangle::demangle;
pub use error::SymbolsError;
pub use naming_cache::default_cache_dir;
pub use regions::file_offsets;
pub use sources::SourceFiles;
pub use symbol_table::{SymbolTable, symbol_table};
pub use symbolizer::{ElfSymbolizer, SymbolizerOptions, symbolize_file};
pub use unwind::ElfUnwinder;
