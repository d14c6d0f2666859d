//! Processes that were running before the recording began, as records: the
//! kernel reports mappings and names only as they change, so a recording
//! that starts late is told the state they are in (executable mappings from
//! `/proc/PID/maps`, thread names from `/proc/PID/task/TID/comm`), timed
//! before any sample.

use profiler_model::{Comm, Record};

use crate::build_id::BuildIds;
use crate::{proc_maps, tasks};

/// The records that describe process `pid` as it stands: its executable
/// mappings and the names of `threads` (of every thread when `None`). Empty when the process has gone or
/// its mappings cannot be read.
pub(crate) fn process(pid: u32, threads: Option<&[u32]>) -> Vec<Record> {
    let Ok(mappings) = proc_maps::executable_mappings(pid, &mut BuildIds::default()) else {
        return Vec::new();
    };
    let mut records = names(pid, threads);
    records.extend(mappings.into_iter().map(Record::Mmap));
    records
}

/// The records of every process now running, those that vanish or cannot
/// be read left out. Kernel threads (with no mappings) are named only when
/// `kernel_threads`, for recordings that sample the kernel.
pub(crate) fn every_process(kernel_threads: bool) -> Vec<Record> {
    let Ok(pids) = tasks::processes() else {
        return Vec::new();
    };
    let mut records = Vec::new();
    let mut build_ids = BuildIds::default();
    for pid in pids {
        let Ok(mappings) = proc_maps::executable_mappings(pid, &mut build_ids) else {
            continue;
        };
        if mappings.is_empty() && !kernel_threads {
            continue;
        }
        records.extend(names(pid, None));
        records.extend(mappings.into_iter().map(Record::Mmap));
    }
    records
}

/// The names of `threads` of `pid` (of all of them when `None`).
fn names(pid: u32, threads: Option<&[u32]>) -> Vec<Record> {
    let tids: Vec<u32> = match threads {
        Some(threads) => threads.to_vec(),
        None => tasks::threads_of(pid).unwrap_or_default(),
    };
    tids.into_iter()
        .filter_map(|tid| {
            let name = tasks::thread_name(pid, tid)?;
            Some(Record::Comm(Comm {
                time: 0,
                pid,
                tid,
                name,
                exec: false,
            }))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_described_by_its_names_and_mappings() {
        let pid = std::process::id();
        let records = process(pid, None);
        let names: Vec<&Comm> = records
            .iter()
            .filter_map(|r| match r {
                Record::Comm(c) => Some(c),
                _ => None,
            })
            .collect();
        assert!(names.iter().any(|c| c.tid == pid), "{names:?}");
        assert!(names.iter().all(|c| c.pid == pid && !c.exec && c.time == 0));
        assert!(records.iter().any(|r| matches!(r, Record::Mmap(_))));
        assert!(process(u32::MAX, None).is_empty());

        let everyone = every_process(false);
        assert!(
            everyone
                .iter()
                .any(|r| matches!(r, Record::Mmap(m) if m.pid == pid))
        );
    }
}
