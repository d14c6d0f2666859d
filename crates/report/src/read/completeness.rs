//! How whole a recording's call stacks are: how many reached a function a
//! stack starts from (`main`, a thread's start, `_start`). `record` says so
//! as soon as it has written the recording.
//!
//! Only what that needs is read: the stacks, walked as the views walk them
//! (so that the line agrees with what `report` shows), and, for each module
//! a stack passes through, where its root functions lie, looked up once by
//! name in its symbol tables. Nothing is named.

use rustc_hash::FxHashMap;
use std::ops::Range;

use profiler_model::{
    EventDescription, EventRole, FileOffset, Location, ModuleId, Recording, StackUnwinder,
    Symbolizer,
};

use crate::error::ReportError;
use crate::read::walk::StackWalker;

/// Functions a complete stack starts from: the program's entry, `main`,
/// the places threads start, and the dynamic loader's entry (samples taken
/// while it loads the program); glibc's, musl's, Rust's and Go's (whose
/// goroutines start at `runtime.goexit`, its threads at `runtime.mstart`,
/// the program at `runtime.rt0_go`, its assembly named `.abi0`).
pub(crate) const ROOTS: &[&str] = &[
    "_start",
    "_dl_start",
    "_dl_start_user",
    "__libc_start_main",
    "__libc_start_call_main",
    "main",
    "start_thread",
    "clone",
    "clone3",
    "__clone",
    "__clone3",
    "thread_start",
    // musl: the program's entry, and where its threads start.
    "_start_c",
    "libc_start_main_stage2",
    "start",
    "start_c11",
    // Rust, where `main` is not reached.
    "std::rt::lang_start",
    "std::rt::lang_start_internal",
    // Go.
    "runtime.goexit",
    "runtime.goexit.abi0",
    "runtime.main",
    "runtime.mstart",
    "runtime.mstart.abi0",
    "runtime.rt0_go",
    "runtime.rt0_go.abi0",
    "_rt0_amd64_linux",
];

/// How whole the call stacks of one event are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StackCompleteness {
    pub event: String,
    /// Samples whose stack reached the start of their program or thread.
    pub rooted: u64,
    pub samples: u64,
}

/// For each event of `recording`, how many of its samples' stacks reached
/// a root; stack copies are unwound with `unwinder`, and `symbolizer` says
/// where each module's root functions lie. The wall event, whose samples
/// are the others', is left out, and so are the samples taken as threads
/// left the CPU, which are the off-CPU event's.
pub fn stack_completeness(
    recording: &Recording,
    symbolizer: &dyn Symbolizer,
    unwinder: &dyn StackUnwinder,
) -> Result<Vec<StackCompleteness>, ReportError> {
    let events = &recording.header.events;
    let mut counts = vec![(0, 0); events.len()];
    let (model, samples) = recording.replay()?;
    let mut walker = StackWalker::new(&model, unwinder);
    let mut roots: FxHashMap<ModuleId, Vec<Range<FileOffset>>> = FxHashMap::default();
    let shown = |e: &EventDescription| !matches!(e.role, EventRole::SwitchOut | EventRole::Wall);
    for sample in samples {
        let sample = sample?;
        let event = usize::from(sample.event);
        let Some((rooted, all)) = counts.get_mut(event).filter(|_| shown(&events[event])) else {
            continue;
        };
        let reaches_root = walker.frames(&sample).iter().any(|frame| match frame {
            Location::Module { module, offset } => roots
                .entry(*module)
                .or_insert_with(|| symbolizer.find_functions(model.modules().get(*module), ROOTS))
                .iter()
                .any(|root| root.contains(offset)),
            _ => false,
        });
        *all += 1;
        *rooted += u64::from(reaches_root);
    }
    let completeness = events.iter().zip(counts).filter(|(e, _)| shown(e));
    Ok(completeness
        .map(|(event, (rooted, samples))| StackCompleteness {
            event: event.name.clone(),
            rooted,
            samples,
        })
        .collect())
}
