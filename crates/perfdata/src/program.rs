//! Which program perf ran. perf.data keeps perf's own command line, not the
//! program it started; the views need it to tell the program's code from
//! its libraries' (a flame graph's colours, the exports' categories,
//! pprof's main mapping).

use std::collections::HashMap;

use profiler_model::Record;

/// Watches the records for the first program executed: the first
/// executable mapping of a process, after its `exec`, of a file whose name
/// starts as the process is now named (the kernel keeps 15 bytes of it).
/// A recording of running processes (`perf record -p`) names none.
#[derive(Debug, Default)]
pub(crate) struct ProgramFinder {
    /// Processes that executed a program, with the name they took.
    executed: HashMap<u32, String>,
    pub(crate) program: Option<String>,
}

impl ProgramFinder {
    pub(crate) fn see(&mut self, record: &Record) {
        if self.program.is_some() {
            return;
        }
        match record {
            Record::Comm(comm) if comm.exec => {
                self.executed.insert(comm.pid, comm.name.clone());
            }
            Record::Mmap(mmap) => {
                let file_name = mmap.path.rsplit('/').next().unwrap_or_default();
                if (self.executed.get(&mmap.pid)).is_some_and(|name| file_name.starts_with(name)) {
                    self.program = Some(mmap.path.clone());
                }
            }
            _ => {}
        }
    }
}
