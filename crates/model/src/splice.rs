//! Frame-pointer call chains that keep the sampled function's caller.
//!
//! The kernel walks the frame pointers from the sampled thread's `rbp`. A
//! function that sets up no frame of its own (GCC omits it in leaf
//! functions even with `-fno-omit-frame-pointer`), and any function sampled
//! in its prologue or epilogue or in a PLT stub, leaves `rbp` pointing at
//! its caller's frame: the walk goes on from the caller's return address,
//! and the caller itself is lost. So with frame-pointer call graphs the
//! sampler also copies the user registers and the top of the stack; one
//! step by the unwind tables of the sampled code finds where it returns
//! to, and that address goes back into the chain, right after the sampled
//! instruction.
//!
//! [`CallerSplicer`] does this while recording, so that a recording keeps
//! a chain one address longer instead of the stack copy. A sample whose
//! code it has not seen mapped (its mapping record still on its way from
//! another CPU's ring) keeps its copy, for the report to splice when it
//! walks the stack, by the same rule ([`missing_caller`]).

use std::collections::HashMap;
use std::io;

use crate::address::Avma;
use crate::process::{LiveMappings, Location, side_band_order};
use crate::record::{CallchainEntry, CpuMode, Record, Sample, UserStack};
use crate::unwind::{CallerRegisters, ProcessUnwinder, StackUnwinder};
use crate::writer::RecordSink;

/// Where the kernel's frame-pointer `callchain` lacks the sampled
/// function's caller: the index at which `caller.return_address` belongs.
/// `None` when it is there already, when the sampled function had set up
/// its own frame (the kernel's walk began with its return address), when
/// `stack` is not of the chain's user context, or when `is_code` says the
/// return address lies in no code.
pub fn missing_caller(
    callchain: &[CallchainEntry],
    stack: &UserStack,
    caller: &CallerRegisters,
    is_code: impl FnOnce(Avma) -> bool,
) -> Option<usize> {
    let mut in_user = false;
    let first = callchain.iter().position(|&entry| match entry {
        CallchainEntry::Context(mode) => {
            in_user = mode == CpuMode::User;
            false
        }
        CallchainEntry::Address(_) => in_user,
    })?;
    // The registers are those of the user context the chain starts from:
    // the sampled instruction, or where the thread entered the kernel.
    if callchain[first] != CallchainEntry::Address(stack.ip) {
        return None;
    }
    // Had the function set up its frame, `rbp` would point at it, and the
    // caller's `rbp` would have been restored from it.
    if caller.bp != stack.bp {
        return None;
    }
    let return_address = caller.return_address;
    let entry = CallchainEntry::Address(return_address);
    if return_address.0 == 0 || callchain.get(first + 1) == Some(&entry) {
        return None;
    }
    is_code(return_address).then_some(first + 1)
}

/// The callers to splice into `callchain` at `index` (where
/// [`missing_caller`] put `caller`): `caller` alone, or, where the stack
/// copy `unwound` (the sampled address, then each return address the
/// unwind tables found) meets the kernel's chain again further up, every
/// return address before that. Several functions without frames in a row
/// (a libc function calling another to make a system call, as a thread
/// does before it waits) each left `rbp` to the first caller that has a
/// frame, and the kernel's walk skipped them all.
pub fn skipped_callers(
    callchain: &[CallchainEntry],
    index: usize,
    caller: Avma,
    unwound: &[Avma],
) -> Vec<Avma> {
    let next = match callchain.get(index) {
        Some(CallchainEntry::Address(next)) => *next,
        _ => return vec![caller],
    };
    let rejoins = (unwound.iter().skip(2)).position(|&address| address == next);
    match (unwound.get(1), rejoins) {
        (Some(&first), Some(at)) if first == caller => unwound[1..at + 2].to_vec(),
        _ => vec![caller],
    }
}

/// Whether `callchain` holds user-space addresses: a frame-pointer chain
/// of the user stack, which a stack copy completes rather than replaces.
pub fn has_user_chain(callchain: &[CallchainEntry]) -> bool {
    callchain.contains(&CallchainEntry::Context(CpuMode::User))
}

/// A record sink that splices the sampled function's caller into each
/// frame-pointer chain and drops the stack copy that found it, before
/// handing the records on.
///
/// The rings of different CPUs are drained in turn, so a sample can arrive
/// before the mapping record its code depends on: each drain cycle is put
/// in time order before it is applied.
pub struct CallerSplicer<'u, S> {
    sink: S,
    unwinder: &'u dyn StackUnwinder,
    mappings: LiveMappings,
    /// Each process's unwinder, over its mappings as they were when it was
    /// made: dropped when they change.
    processes: HashMap<u32, Box<dyn ProcessUnwinder + 'u>>,
    /// The current drain cycle's records.
    batch: Vec<Record>,
}

impl<'u, S: RecordSink> CallerSplicer<'u, S> {
    /// Passes records on to `sink`, unwinding with `unwinder`.
    pub fn new(sink: S, unwinder: &'u dyn StackUnwinder) -> CallerSplicer<'u, S> {
        CallerSplicer {
            sink,
            unwinder,
            mappings: LiveMappings::new(),
            processes: HashMap::new(),
            batch: Vec::new(),
        }
    }

    /// The sink the records go to.
    pub fn sink(&self) -> &S {
        &self.sink
    }

    /// Passes on every record held back, and hands the sink back.
    pub fn finish(mut self) -> io::Result<S> {
        self.end_batch()?;
        Ok(self.sink)
    }

    fn apply(&mut self, record: Record) -> io::Result<()> {
        let changed = match &record {
            Record::Mmap(m) => Some(m.pid),
            Record::Comm(c) if c.exec => Some(c.pid),
            Record::Fork(f) if f.pid != f.ppid => Some(f.pid),
            Record::Exit(e) if e.pid == e.tid => {
                self.processes.remove(&e.pid);
                None
            }
            _ => None,
        };
        if let Some(pid) = changed {
            self.mappings.apply(&record);
            self.processes.remove(&pid);
        }
        let Record::Sample(mut sample) = record else {
            return self.sink.push(&record);
        };
        if let Some(stack) = &sample.user_stack
            && self.mappings.resolve_address(sample.pid, stack.ip) != Location::Unmapped
        {
            self.splice(&mut sample);
            sample.user_stack = None;
        }
        self.sink.push(&Record::Sample(sample))
    }

    /// Inserts the sampled function's caller where the chain lacks it.
    fn splice(&mut self, sample: &mut Sample) {
        let Some(stack) = &sample.user_stack else {
            return;
        };
        let (unwinder, mappings) = (self.unwinder, &self.mappings);
        let process = self.processes.entry(sample.pid).or_insert_with(|| {
            unwinder.process(mappings.modules(), &mappings.mappings(sample.pid))
        });
        let Some(caller) = process.caller(stack) else {
            return;
        };
        let is_code = |address| mappings.resolve_address(sample.pid, address) != Location::Unmapped;
        if let Some(index) = missing_caller(&sample.callchain, stack, &caller, is_code) {
            let mut unwound = Vec::new();
            process.unwind(stack, &mut unwound);
            let callers =
                skipped_callers(&sample.callchain, index, caller.return_address, &unwound);
            let entries = callers.into_iter().map(CallchainEntry::Address);
            sample.callchain.splice(index..index, entries);
        }
    }
}

impl<S: RecordSink> RecordSink for CallerSplicer<'_, S> {
    fn push(&mut self, record: &Record) -> io::Result<()> {
        self.batch.push(record.clone());
        Ok(())
    }

    fn end_batch(&mut self) -> io::Result<()> {
        let mut cycle = std::mem::take(&mut self.batch);
        cycle.sort_by_key(side_band_order);
        for record in cycle {
            self.apply(record)?;
        }
        self.sink.end_batch()
    }
}

#[cfg(test)]
mod tests {
    use crate::address::FileOffset;
    use crate::module::ModuleTable;
    use crate::record::Mmap;
    use crate::unwind::MappedRange;

    use super::*;

    const USER: u64 = u64::MAX - 511;
    const KERNEL: u64 = u64::MAX - 127;
    /// The sampled instruction, in a function without a frame.
    const IP: u64 = 0x40_1010;
    /// Its caller's return address, on the stack at `sp`.
    const CALLER: u64 = 0x40_1234;
    /// The caller's caller's return address, at `bp + 8`: where the
    /// kernel's walk begins.
    const GRANDCALLER: u64 = 0x40_1567;

    fn stack() -> UserStack {
        UserStack {
            ip: Avma(IP),
            sp: Avma(0x7ff0),
            bp: Avma(0x8000),
            bytes: CALLER.to_le_bytes().to_vec(),
        }
    }

    /// What the unwind tables say of a function without a frame: the
    /// return address at `sp`, `bp` unchanged.
    fn frameless() -> CallerRegisters {
        CallerRegisters {
            return_address: Avma(CALLER),
            sp: Avma(0x7ff8),
            bp: Avma(0x8000),
        }
    }

    fn code(_: Avma) -> bool {
        true
    }

    /// A chain as the kernel writes it.
    fn entries(raw: &[u64]) -> Vec<CallchainEntry> {
        raw.iter()
            .map(|&raw| CallchainEntry::from_raw(raw))
            .collect()
    }

    fn missing_caller(
        raw: &[u64],
        stack: &UserStack,
        caller: &CallerRegisters,
        is_code: impl FnOnce(Avma) -> bool,
    ) -> Option<usize> {
        super::missing_caller(&entries(raw), stack, caller, is_code)
    }

    fn has_user_chain(raw: &[u64]) -> bool {
        super::has_user_chain(&entries(raw))
    }

    #[test]
    fn several_frameless_callers_are_spliced_where_the_unwinding_meets_the_chain() {
        let skipped = |chain: &[u64], unwound: &[u64]| -> Vec<u64> {
            let unwound: Vec<Avma> = unwound.iter().map(|&a| Avma(a)).collect();
            skipped_callers(&entries(chain), 2, Avma(CALLER), &unwound)
                .into_iter()
                .map(|a| a.0)
                .collect()
        };
        let chain = [USER, IP, GRANDCALLER, 0x40_1800];
        // The unwinding found two callers before the chain's next.
        assert_eq!(
            skipped(&chain, &[IP, CALLER, 0x40_1300, GRANDCALLER, 0x40_1800]),
            [CALLER, 0x40_1300]
        );
        // Where it never meets the chain, or stops short, or starts
        // elsewhere, the one caller stands.
        assert_eq!(
            skipped(&chain, &[IP, CALLER, 0x40_1300, 0x40_1400]),
            [CALLER]
        );
        assert_eq!(skipped(&chain, &[IP]), [CALLER]);
        assert_eq!(skipped(&chain, &[IP, 0x40_1300, GRANDCALLER]), [CALLER]);
        // A chain that ends after the sampled address gains the caller.
        assert_eq!(skipped(&[USER, IP], &[IP, CALLER, GRANDCALLER]), [CALLER]);
    }

    #[test]
    fn a_caller_the_chain_skipped_goes_right_after_the_sampled_instruction() {
        let chain = [USER, IP, GRANDCALLER, 0x40_1800];
        assert_eq!(
            missing_caller(&chain, &stack(), &frameless(), code),
            Some(2)
        );
        // A chain that ends at once (`bp` held no frame) gains the caller.
        assert_eq!(
            missing_caller(&[USER, IP], &stack(), &frameless(), code),
            Some(2)
        );
        // In the kernel: the user part begins where the thread entered it.
        let chain = [KERNEL, 0xffff_ffff_8100_0000, USER, IP, GRANDCALLER];
        assert_eq!(
            missing_caller(&chain, &stack(), &frameless(), code),
            Some(4)
        );
    }

    #[test]
    fn a_chain_that_has_its_caller_is_left_as_it_is() {
        // The function set up its frame: the kernel began with its return
        // address, and the tables restore the caller's `bp` from the stack.
        let framed = CallerRegisters {
            return_address: Avma(CALLER),
            sp: Avma(0x8010),
            bp: Avma(0x8100),
        };
        let chain = [USER, IP, CALLER, GRANDCALLER];
        assert_eq!(missing_caller(&chain, &stack(), &framed, code), None);
        // The same return address found without a frame is no news either.
        assert_eq!(missing_caller(&chain, &stack(), &frameless(), code), None);
        // Tables that restore `bp` yet disagree with the chain: the chain
        // stands.
        let chain = [USER, IP, GRANDCALLER];
        assert_eq!(missing_caller(&chain, &stack(), &framed, code), None);
    }

    #[test]
    fn registers_of_another_context_or_an_address_outside_code_splice_nothing() {
        let chain = [USER, IP, GRANDCALLER];
        assert_eq!(
            missing_caller(&chain, &stack(), &frameless(), |_| false),
            None
        );
        // A kernel-only chain, or a chain of other user registers.
        assert_eq!(
            missing_caller(
                &[KERNEL, 0xffff_ffff_8100_0000],
                &stack(),
                &frameless(),
                code
            ),
            None
        );
        assert_eq!(
            missing_caller(&[USER, IP + 1, GRANDCALLER], &stack(), &frameless(), code),
            None
        );
        let zero = CallerRegisters {
            return_address: Avma(0),
            ..frameless()
        };
        assert_eq!(missing_caller(&chain, &stack(), &zero, code), None);
        assert!(has_user_chain(&chain) && !has_user_chain(&[KERNEL, 1]) && !has_user_chain(&[]));
    }

    /// An unwinder that finds `frameless()` for any code it knows.
    struct Tables;

    impl StackUnwinder for Tables {
        fn process<'a>(
            &'a self,
            _: &ModuleTable,
            mappings: &[MappedRange],
        ) -> Box<dyn ProcessUnwinder + 'a> {
            Box::new(TablesOf(mappings.to_vec()))
        }
    }

    struct TablesOf(Vec<MappedRange>);

    impl ProcessUnwinder for TablesOf {
        fn unwind(&mut self, _: &UserStack, _: &mut Vec<Avma>) -> bool {
            false
        }
        fn caller(&mut self, stack: &UserStack) -> Option<CallerRegisters> {
            let known = self.0.iter().any(|m| (m.start..m.end).contains(&stack.ip));
            known.then(frameless)
        }
    }

    fn sample(time: u64, callchain: Vec<u64>) -> Record {
        Record::Sample(Sample {
            time,
            pid: 7,
            tid: 7,
            cpu: 0,
            event: 0,
            mode: CpuMode::User,
            ip: Avma(IP),
            period: 1,
            callchain: entries(&callchain),
            user_stack: Some(stack()),
            read: Vec::new(),
        })
    }

    #[derive(Default)]
    struct Kept(Vec<Record>);

    impl RecordSink for Kept {
        fn push(&mut self, record: &Record) -> io::Result<()> {
            self.0.push(record.clone());
            Ok(())
        }
    }

    #[test]
    fn the_splicer_completes_chains_once_their_code_is_mapped_and_drops_the_copies() {
        let mut splicer = CallerSplicer::new(Kept::default(), &Tables);
        let mapping = Record::Mmap(Mmap {
            time: 2,
            pid: 7,
            tid: 7,
            start: Avma(0x40_0000),
            len: 0x2000,
            offset: FileOffset(0),
            path: "/bin/app".into(),
            build_id: None,
        });
        // Before its mapping: passed on as it came.
        splicer
            .push(&sample(1, vec![USER, IP, GRANDCALLER]))
            .unwrap();
        // The mapping comes after the sample that needs it, from another
        // CPU's ring: the batch is put in time order first.
        splicer
            .push(&sample(4, vec![USER, IP, GRANDCALLER]))
            .unwrap();
        splicer.push(&mapping).unwrap();
        splicer.end_batch().unwrap();
        splicer
            .push(&sample(5, vec![USER, IP, CALLER, GRANDCALLER]))
            .unwrap();
        let Kept(records) = splicer.finish().unwrap();
        let chains: Vec<(&[CallchainEntry], bool)> = records
            .iter()
            .filter_map(|r| match r {
                Record::Sample(s) => Some((&s.callchain[..], s.user_stack.is_some())),
                _ => None,
            })
            .collect();
        assert_eq!(
            chains,
            [
                (&entries(&[USER, IP, GRANDCALLER])[..], true),
                (&entries(&[USER, IP, CALLER, GRANDCALLER])[..], false),
                (&entries(&[USER, IP, CALLER, GRANDCALLER])[..], false),
            ]
        );
        assert!(matches!(records[1], Record::Mmap(_)));
    }
}
