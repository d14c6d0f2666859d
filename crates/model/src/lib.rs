//! The profiler's data model: the address vocabulary, the recording format and
//! the process model. Every other crate speaks these types; this one performs
//! no system calls beyond reading and writing files.
//!
//! Data flow: the sampler turns kernel records into [`Record`]s and pushes them
//! into a [`RecordingOutput`]: the [`RecordingWriter`], which writes them in
//! checksummed chunks to any `Write` (behind the [`CallerSplicer`]
//! where frame-pointer chains come with the top of the stack), or the
//! [`HistogramRecorder`], which pours the samples into [`ModuleHistograms`]
//! and writes those. A
//! report opens the file with [`Recording::open`] (a file cut short or damaged
//! is read as far as its chunks are good, and [`Recording::damage`] says what
//! was lost), [replays](Recording::replay) its side-band records into a
//! [`ProcessModel`], and resolves every [`Sample`] to a [`Location`].
//!
//! ```
//! use profiler_model::*;
//!
//! let header = RecordingHeader {
//!     events: vec![],
//!     command: vec!["./app".into()],
//!     program: None,
//!     user: None,
//!     histogram: None,
//!     call_graph: None,
//!     host: HostInfo::default(),
//!     job: None,
//!     start_unix_ns: 0,
//!     profiler_version: "0".into(),
//! };
//! let mut writer = RecordingWriter::new(Vec::new(), &header).unwrap();
//! writer.push(&Record::Mmap(Mmap {
//!     time: 1, pid: 7, tid: 7, start: Avma(0x40_1000), len: 0x1000,
//!     offset: FileOffset(0x1000), path: "/bin/app".into(), build_id: None,
//! })).unwrap();
//! let bytes = writer.finish(Trailer::default()).unwrap();
//! assert!(bytes.ends_with(b"PROFEND1"));
//! ```

mod address;
mod archive;
mod archive_codec;
mod archive_file;
mod chunk;
mod chunk_order;
mod codec;
mod compression;
mod damage;
mod error;
mod event;
mod group_counts;
mod header;
mod job;
mod layout;
mod listing;
mod live_histograms;
mod module;
mod module_histograms;
mod off_cpu;
mod printable;
mod process;
mod reader;
mod record;
mod recording_output;
mod regular_file;
mod resolved_samples;
mod scan;
mod source;
mod splice;
mod stats;
mod symbolize;
mod unwind;
mod writer;

pub use address::{Avma, FileOffset, RelativeAddress, Svma};
pub use archive::{
    Archive, ArchivedCode, ArchivedFunction, ArchivedSection, ArchivedUnwind, ModuleArchive,
};
pub use archive_file::{ArchiveError, ReadArchive, read_archive, write_archived};
pub use compression::{DEFAULT_COMPRESSION_LEVEL, MAX_COMPRESSION_LEVEL};
pub use damage::Damage;
pub use error::RecordingError;
pub use event::{EventDescription, EventIndex, EventRole, Sampling};
pub use group_counts::MemberDeltas;
pub use header::{
    CallGraph, HistogramSettings, HistogramTotals, HostInfo, ModuleEntry, RecordingHeader, Trailer,
};
pub use job::JobInfo;
pub use layout::FORMAT_VERSION;
pub use listing::{
    AsmSyntax, Disassembler, Flow, FunctionListing, Instruction, SourceReader, SourceText,
};
pub use live_histograms::HistogramRecorder;
pub use module::{Module, ModuleId, ModuleTable};
pub use module_histograms::{
    HistogramOptions, HistogramSet, ModuleHistograms, ModuleRegion, ProgramRegion, pour,
};
pub use off_cpu::{OffCpuStretch, ThreadTimes};
pub use printable::{make_printable, printable, printable_arc, printable_bytes, printable_line};
pub use process::{
    LastMapping, LiveMappings, Location, ProcessModel, ProcessModelBuilder, side_band_order,
};
pub use reader::{RecordStream, Recording, Records};
pub use record::{
    BuildId, CallchainEntry, Comm, CpuMode, HistogramRecord, Lost, Mmap, Record, Sample, Switch,
    TaskEvent, Throttle, UserStack,
};
pub use recording_output::RecordingOutput;
pub use regular_file::{open_regular, open_regular_with_owner, read_regular};
pub use resolved_samples::Samples;
pub use source::{RecordSource, SourceRecords, count_records};
pub use splice::{CallerSplicer, has_user_chain, missing_caller, skipped_callers};
pub use stats::{EventStats, RecordingStats};
pub use symbolize::{
    AddressSymbol, Detail, Frame, FunctionSymbol, ModuleSymbols, NoSymbols, Symbolizer,
};
pub use unwind::{CallerRegisters, MappedRange, NoUnwinder, ProcessUnwinder, StackUnwinder};
pub use writer::{ChunkLimits, RecordSink, RecordingWriter};
