//! The processes a launched command started, told by the fork and exit
//! records on their way to the sink: which still run once the command has
//! exited, when the recording stops with it.

use std::collections::BTreeSet;
use std::io;

use profiler_model::{Record, RecordSink};

use crate::tasks;

/// A record sink that passes every record on and notes the processes
/// forked and ended among the followed tasks.
pub(crate) struct Descendants<'a> {
    sink: &'a mut dyn RecordSink,
    /// Processes seen forked and not seen to end.
    started: BTreeSet<u32>,
}

impl<'a> Descendants<'a> {
    pub(crate) fn new(sink: &'a mut dyn RecordSink) -> Descendants<'a> {
        Descendants {
            sink,
            started: BTreeSet::new(),
        }
    }

    /// The processes started during the recording that still run. The
    /// records of different CPUs come in no set order (a process's exit
    /// can come before its fork), and the kernel drops records when a
    /// ring overflows: /proc has the last word.
    pub(crate) fn running(&self) -> Vec<u32> {
        self.started
            .iter()
            .copied()
            .filter(|&pid| tasks::has_running_thread(pid))
            .collect()
    }
}

impl RecordSink for Descendants<'_> {
    fn push(&mut self, record: &Record) -> io::Result<()> {
        match record {
            Record::Fork(fork) if fork.pid != fork.ppid => {
                self.started.insert(fork.pid);
            }
            Record::Exit(exit) if exit.pid == exit.tid => {
                self.started.remove(&exit.pid);
            }
            _ => {}
        }
        self.sink.push(record)
    }

    fn end_batch(&mut self) -> io::Result<()> {
        self.sink.end_batch()
    }
}

#[cfg(test)]
mod tests {
    use profiler_model::TaskEvent;

    use super::*;

    struct Count(usize);

    impl RecordSink for Count {
        fn push(&mut self, _: &Record) -> io::Result<()> {
            self.0 += 1;
            Ok(())
        }
    }

    fn task(pid: u32, ppid: u32, tid: u32) -> TaskEvent {
        TaskEvent {
            time: 1,
            pid,
            ppid,
            tid,
            ptid: ppid,
        }
    }

    #[test]
    fn processes_forked_and_still_running_are_found() {
        let mut count = Count(0);
        let mut descendants = Descendants::new(&mut count);
        let me = std::process::id();
        // This process, as if forked; a thread of it; a process that ended;
        // one whose exit came first; one that is not there.
        let records = [
            Record::Fork(task(me, 1, me)),
            Record::Fork(task(me, me, me + 1)),
            Record::Fork(task(u32::MAX - 1, me, u32::MAX - 1)),
            Record::Exit(task(u32::MAX - 1, me, u32::MAX - 1)),
            Record::Exit(task(u32::MAX - 2, me, u32::MAX - 2)),
            Record::Fork(task(u32::MAX - 2, me, u32::MAX - 2)),
            Record::Fork(task(u32::MAX - 3, me, u32::MAX - 3)),
        ];
        for record in &records {
            descendants.push(record).unwrap();
        }
        assert_eq!(descendants.running(), [me]);
        drop(descendants);
        assert_eq!(count.0, records.len());
    }
}
