//! Group members' counts, as each sample of their leader carries them:
//! running totals of one thread's counter on one CPU, turned into what each
//! member counted since that counter's previous sample, and so attributed
//! to where the leader's sample was taken (as `perf report --group` does).

use std::collections::HashMap;

use crate::event::EventIndex;
use crate::record::Sample;

#[derive(Default)]
pub struct MemberDeltas {
    last: HashMap<(u32, u32, EventIndex), u64>,
}

impl MemberDeltas {
    /// Each member's count since the previous sample of the same counter.
    pub fn of(&mut self, sample: &Sample) -> Vec<(EventIndex, u64)> {
        if sample.read.is_empty() {
            return Vec::new();
        }
        sample
            .read
            .iter()
            .map(|&(member, total)| {
                let last = self.last.insert((sample.tid, sample.cpu, member), total);
                // A total below the last one is a new counter (a new thread
                // reusing the id): all of it is new.
                let delta = match last {
                    Some(last) if last <= total => total - last,
                    _ => total,
                };
                (member, delta)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address::Avma;
    use crate::record::CpuMode;

    fn sample(tid: u32, cpu: u32, read: Vec<(EventIndex, u64)>) -> Sample {
        Sample {
            time: 0,
            pid: 1,
            tid,
            cpu,
            event: 0,
            mode: CpuMode::User,
            ip: Avma(0x1000),
            period: 1,
            callchain: Vec::new(),
            user_stack: None,
            read,
        }
    }

    #[test]
    fn each_counter_counts_from_its_own_previous_sample() {
        let mut deltas = MemberDeltas::default();
        assert_eq!(deltas.of(&sample(7, 0, vec![(1, 10)])), [(1, 10)]);
        assert_eq!(deltas.of(&sample(7, 0, vec![(1, 25)])), [(1, 15)]);
        // Another CPU's counter of the same thread starts on its own.
        assert_eq!(deltas.of(&sample(7, 1, vec![(1, 4)])), [(1, 4)]);
        assert_eq!(deltas.of(&sample(8, 0, vec![(1, 3)])), [(1, 3)]);
        assert_eq!(deltas.of(&sample(7, 0, vec![(1, 5)])), [(1, 5)]);
    }
}
