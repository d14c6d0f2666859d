//! A set's counters as the signal handler reaches them: the kernel's
//! groups, and the counts at the last reset, read and reset by plain
//! calls and by overflow handlers alike. Nothing here allocates or takes
//! a lock.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use profiler_events::Count;

use super::group::{KernelGroup, MAX_EVENTS, read_group};
use crate::error::SamplerError;

/// The set, where the signal handler can reach it.
pub(crate) struct Shared {
    pub(super) names: Vec<String>,
    pub(super) groups: Vec<KernelGroup>,
    /// Per event: the raw count and times at the last reset.
    pub(super) baselines: Vec<[AtomicU64; 3]>,
    pub(super) running: AtomicBool,
    /// The counted thread, for [`Scope::Thread`](super::Scope::Thread).
    pub(super) thread: Option<libc::pid_t>,
}

impl Shared {
    pub(super) fn len(&self) -> usize {
        self.names.len()
    }

    pub(super) fn name(&self, index: usize) -> &str {
        &self.names[index]
    }

    pub(super) fn thread(&self) -> Option<libc::pid_t> {
        self.thread
    }

    /// Event `index`'s fd on the counted thread, and whether it samples.
    pub(super) fn event_fd(&self, index: usize) -> (std::os::fd::RawFd, bool) {
        use std::os::fd::AsRawFd;
        self.groups
            .iter()
            .find_map(|group| {
                let position = group.events.iter().position(|&e| e == index)?;
                Some((group.fds[position].as_raw_fd(), group.sampling[position]))
            })
            .unwrap_or((-1, false))
    }

    /// The counters as the kernel holds them, summed over the groups: the
    /// raw counts and times, no reset subtracted. Async-signal-safe.
    pub(super) fn totals(&self, totals: &mut [Count]) -> Result<(), SamplerError> {
        totals.iter_mut().for_each(|t| *t = Count::default());
        for group in &self.groups {
            let read = read_group(group)?;
            for (&event, &value) in group.events.iter().zip(read.values()) {
                let total = &mut totals[event];
                total.raw = total.raw.wrapping_add(value);
                total.enabled_ns = total.enabled_ns.wrapping_add(read.enabled_ns);
                total.running_ns = total.running_ns.wrapping_add(read.running_ns);
            }
        }
        Ok(())
    }

    pub(super) fn check_len(&self, len: usize) -> Result<(), SamplerError> {
        match len >= self.len() {
            true => Ok(()),
            false => Err(SamplerError::CountersMisuse {
                problem: "the array for the values is shorter than the set: give one element per \
                          event",
            }),
        }
    }

    pub(super) fn read_counts_into(&self, counts: &mut [Count]) -> Result<(), SamplerError> {
        self.check_len(counts.len())?;
        let mut totals = [Count::default(); MAX_EVENTS];
        self.totals(&mut totals[..self.len()])?;
        for ((count, total), base) in counts.iter_mut().zip(&totals).zip(&self.baselines) {
            let since = |i: usize, now: u64| now.saturating_sub(base[i].load(Ordering::Acquire));
            *count = Count::new(
                since(0, total.raw),
                since(1, total.enabled_ns),
                since(2, total.running_ns),
            );
        }
        Ok(())
    }

    pub(super) fn read_into(&self, values: &mut [u64]) -> Result<(), SamplerError> {
        self.check_len(values.len())?;
        let mut counts = [Count::default(); MAX_EVENTS];
        self.read_counts_into(&mut counts[..self.len()])?;
        for (value, count) in values.iter_mut().zip(&counts[..self.len()]) {
            *value = count.scaled;
        }
        Ok(())
    }

    pub(super) fn read_and_reset_into(&self, values: &mut [u64]) -> Result<(), SamplerError> {
        self.check_len(values.len())?;
        let mut totals = [Count::default(); MAX_EVENTS];
        self.totals(&mut totals[..self.len()])?;
        for ((value, total), base) in values.iter_mut().zip(&totals).zip(&self.baselines) {
            let now = [total.raw, total.enabled_ns, total.running_ns];
            let [raw, enabled, running] = std::array::from_fn(|i| {
                now[i].saturating_sub(base[i].swap(now[i], Ordering::AcqRel))
            });
            *value = Count::new(raw, enabled, running).scaled;
        }
        Ok(())
    }

    pub(super) fn reset(&self) -> Result<(), SamplerError> {
        let mut totals = [Count::default(); MAX_EVENTS];
        self.totals(&mut totals[..self.len()])?;
        for (total, base) in totals.iter().zip(&self.baselines) {
            base[0].store(total.raw, Ordering::Release);
            base[1].store(total.enabled_ns, Ordering::Release);
            base[2].store(total.running_ns, Ordering::Release);
        }
        Ok(())
    }
}
