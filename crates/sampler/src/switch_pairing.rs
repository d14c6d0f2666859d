//! A ring's switch-out samples as `record --off-cpu` keeps them: each
//! placed where its thread left user space, and paired with the switch
//! record the kernel writes right after it, in the same ring, so that a
//! report finds the one from the other.

use profiler_model::{CallchainEntry, CpuMode, EventIndex, Record, Sample};

/// The event whose samples are taken as threads leave the CPU, and what
/// they keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SwitchOutSamples {
    pub event: EventIndex,
    /// Without call stacks: the address where the thread left user space
    /// alone (the kernel gives a chain of it, cut there).
    pub leaf_only: bool,
}

impl SwitchOutSamples {
    /// `sample`, taken in the kernel where the thread switched, placed at
    /// its user-space address: the head of the user chain, or of the stack
    /// copy.
    pub(crate) fn place(&self, sample: &mut Sample) {
        let mut user = false;
        let head = sample.callchain.iter().find_map(|&entry| match entry {
            CallchainEntry::Context(mode) => {
                user = mode == CpuMode::User;
                None
            }
            CallchainEntry::Address(address) => user.then_some(address),
        });
        if let Some(address) = head.or(sample.user_stack.as_ref().map(|s| s.ip)) {
            sample.ip = address;
            sample.mode = CpuMode::User;
        }
        if self.leaf_only {
            sample.callchain.clear();
        }
    }
}

/// A ring's switch-out sample, held until the record after it says
/// whether it is its switch's.
#[derive(Debug, Default)]
pub(crate) struct Pairing {
    held: Option<Sample>,
}

impl Pairing {
    /// What to write for `record`, the ring's next (in order, each whole):
    /// a switch-out sample is held back; the switch out that follows it,
    /// of its thread, gets its time and says it has it.
    pub(crate) fn pass(
        &mut self,
        record: Record,
        samples: SwitchOutSamples,
        out: &mut Vec<Record>,
    ) {
        match record {
            Record::Sample(mut sample) if sample.event == samples.event => {
                samples.place(&mut sample);
                out.extend(self.held.replace(sample).map(Record::Sample));
            }
            Record::Switch(mut switch) if switch.out => {
                if let Some(mut held) = self.held.take() {
                    if held.tid == switch.tid && held.pid == switch.pid {
                        held.time = switch.time;
                        switch.sampled = true;
                    }
                    out.push(Record::Sample(held));
                }
                out.push(Record::Switch(switch));
            }
            other => {
                out.extend(self.held.take().map(Record::Sample));
                out.push(other);
            }
        }
    }

    /// The sample held, if any: the recording ends before its switch.
    pub(crate) fn flush(&mut self) -> Option<Record> {
        self.held.take().map(Record::Sample)
    }
}

#[cfg(test)]
mod tests {
    use profiler_model::{Avma, Switch, UserStack};

    use super::*;

    const USER: u64 = u64::MAX - 511;
    const KERNEL: u64 = u64::MAX - 127;

    fn switch_out(time: u64, tid: u32) -> Record {
        Record::Switch(Switch {
            time,
            pid: 1,
            tid,
            out: true,
            preempt: false,
            sampled: false,
        })
    }

    fn sample(time: u64, event: EventIndex, chain: &[u64]) -> Sample {
        Sample {
            time,
            pid: 1,
            tid: 1,
            event,
            mode: CpuMode::Kernel,
            ip: Avma(0xffff_ffff_8100_0000),
            callchain: chain
                .iter()
                .map(|&raw| CallchainEntry::from_raw(raw))
                .collect(),
            ..Sample::default()
        }
    }

    #[test]
    fn a_switch_out_sample_is_placed_at_its_user_address() {
        let kernel_too = [KERNEL, 0xffff_ffff_8100_0000, USER, 0x40_1000, 0x40_2000];
        let whole = SwitchOutSamples {
            event: 1,
            leaf_only: false,
        };
        let mut s = sample(1, 1, &kernel_too);
        whole.place(&mut s);
        assert_eq!(
            (s.ip, s.mode, s.callchain.len()),
            (Avma(0x40_1000), CpuMode::User, 5)
        );
        let leaf = SwitchOutSamples {
            leaf_only: true,
            ..whole
        };
        let mut s = sample(1, 1, &[USER, 0x40_1000]);
        leaf.place(&mut s);
        assert_eq!((s.ip, s.callchain.len()), (Avma(0x40_1000), 0));
        // A stack copy's registers, where there is no user chain.
        let mut s = sample(1, 1, &[]);
        s.user_stack = Some(UserStack {
            ip: Avma(0x40_3000),
            ..UserStack::default()
        });
        whole.place(&mut s);
        assert_eq!(s.ip, Avma(0x40_3000));
    }

    #[test]
    fn a_sample_pairs_only_with_the_switch_right_after_it() {
        let samples = SwitchOutSamples {
            event: 1,
            leaf_only: true,
        };
        let mut pairing = Pairing::default();
        let mut out = Vec::new();
        let records = [
            Record::Sample(sample(10, 1, &[USER, 0x40_1000])),
            switch_out(12, 1),
            // Another event's sample passes through.
            Record::Sample(sample(20, 0, &[])),
            // A sample whose switch was lost, then one of another thread.
            Record::Sample(sample(30, 1, &[USER, 0x40_1000])),
            Record::Sample(sample(40, 1, &[USER, 0x40_1000])),
            switch_out(41, 2),
            Record::Sample(sample(50, 1, &[USER, 0x40_1000])),
        ];
        for record in records {
            pairing.pass(record, samples, &mut out);
        }
        out.extend(pairing.flush());
        let summary: Vec<(u64, bool)> = (out.iter())
            .map(|r| match r {
                Record::Sample(s) => (s.time, false),
                Record::Switch(w) => (w.time, w.sampled),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            summary,
            [
                (12, false),
                (12, true),
                (20, false),
                (30, false),
                (40, false),
                (41, false),
                (50, false)
            ]
        );
    }
}
