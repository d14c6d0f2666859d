//! A sample's call stack as locations, leaf first: from the kernel's call
//! chain (frame pointers, and the kernel's own frames), with the caller it
//! may have skipped spliced in (by the rule the recorder's `CallerSplicer`
//! follows), from the unwound copy of the user stack, or the sampled
//! address alone.
//!
//! Callers' return addresses are looked up one byte back, inside the call
//! instruction: the return address itself can belong to the next line, or
//! to the next function when the call was the last instruction.

use rustc_hash::FxHashMap;

use profiler_model::{
    Avma, CallchainEntry, CpuMode, LastMapping, Location, ProcessModel, ProcessUnwinder, Sample,
    StackUnwinder, UserStack, has_user_chain, missing_caller, skipped_callers,
};

/// Walks the stacks of a recording's samples, one unwinder per process.
pub(crate) struct StackWalker<'a> {
    model: &'a ProcessModel,
    unwinder: &'a dyn StackUnwinder,
    processes: FxHashMap<u32, Box<dyn ProcessUnwinder + 'a>>,
    addresses: Vec<Avma>,
    /// Where the last frame was found.
    last: LastMapping,
}

impl<'a> StackWalker<'a> {
    pub(crate) fn new(model: &'a ProcessModel, unwinder: &'a dyn StackUnwinder) -> StackWalker<'a> {
        StackWalker {
            model,
            unwinder,
            processes: FxHashMap::default(),
            addresses: Vec::new(),
            last: LastMapping::default(),
        }
    }

    /// The sample's stack, leaf first.
    pub(crate) fn frames(&mut self, sample: &Sample) -> Vec<Location> {
        let mut frames = Vec::new();
        self.frames_into(sample, &mut frames);
        frames
    }

    /// The sample's stack, leaf first, in `frames` (emptied first): one
    /// buffer serves every sample.
    pub(crate) fn frames_into(&mut self, sample: &Sample, frames: &mut Vec<Location>) {
        frames.clear();
        let mut spliced;
        let mut callchain = &sample.callchain;
        let mut user_stack = sample.user_stack.as_ref();
        // A frame-pointer chain with its stack copy: the copy only finds
        // the caller the chain may have skipped.
        if let Some(stack) = user_stack
            && has_user_chain(callchain)
        {
            user_stack = None;
            if let Some((index, callers)) = self.missing_callers(sample, stack) {
                spliced = callchain.clone();
                let entries = callers.into_iter().map(CallchainEntry::Address);
                spliced.splice(index..index, entries);
                callchain = &spliced;
            }
        }
        let mut mode = CpuMode::Unknown;
        let mut first_of_context = true;
        for &entry in callchain {
            match entry {
                CallchainEntry::Context(context) => {
                    mode = context;
                    first_of_context = true;
                }
                CallchainEntry::Address(address) => {
                    let address = match first_of_context {
                        true => address,
                        false => Avma(address.0.saturating_sub(1)),
                    };
                    first_of_context = false;
                    frames.push(match mode {
                        CpuMode::Kernel | CpuMode::GuestKernel => Location::Kernel { address },
                        _ => (self.model).resolve_address_after(
                            sample.pid,
                            address,
                            sample.time,
                            &mut self.last,
                        ),
                    });
                }
            }
        }
        if let Some(stack) = user_stack {
            let mut addresses = std::mem::take(&mut self.addresses);
            addresses.clear();
            self.process(sample.pid).unwind(stack, &mut addresses);
            for (index, address) in addresses.iter().enumerate() {
                let address = match index {
                    0 => *address,
                    _ => Avma(address.0.saturating_sub(1)),
                };
                frames.push((self.model).resolve_address_after(
                    sample.pid,
                    address,
                    sample.time,
                    &mut self.last,
                ));
            }
            self.addresses = addresses;
        }
        if frames.is_empty() {
            frames.push(self.model.resolve_after(sample, &mut self.last));
        }
    }

    /// Where the sample's frame-pointer chain lacks the sampled function's
    /// caller (the recorder splices most such samples itself), and the
    /// return addresses of the callers it skipped.
    fn missing_callers(
        &mut self,
        sample: &Sample,
        stack: &UserStack,
    ) -> Option<(usize, Vec<Avma>)> {
        let caller = self.process(sample.pid).caller(stack)?;
        let model = self.model;
        let is_code =
            |address| model.resolve_address(sample.pid, address, sample.time) != Location::Unmapped;
        let index = missing_caller(&sample.callchain, stack, &caller, is_code)?;
        let mut unwound = std::mem::take(&mut self.addresses);
        unwound.clear();
        self.process(sample.pid).unwind(stack, &mut unwound);
        let callers = skipped_callers(&sample.callchain, index, caller.return_address, &unwound);
        self.addresses = unwound;
        Some((index, callers))
    }

    fn process(&mut self, pid: u32) -> &mut (dyn ProcessUnwinder + 'a) {
        let (model, unwinder) = (self.model, self.unwinder);
        self.processes
            .entry(pid)
            .or_insert_with(|| unwinder.process(model.modules(), &model.mappings(pid)))
            .as_mut()
    }
}

#[cfg(test)]
mod tests {
    use profiler_model::{
        CallerRegisters, FileOffset, MappedRange, Mmap, ModuleTable, ProcessModelBuilder, Record,
    };

    use super::*;

    const USER: u64 = u64::MAX - 511;

    /// Unwind tables for which every function has no frame: its caller's
    /// return address is at `sp`.
    struct Frameless;

    impl StackUnwinder for Frameless {
        fn process<'a>(
            &'a self,
            _: &ModuleTable,
            _: &[MappedRange],
        ) -> Box<dyn ProcessUnwinder + 'a> {
            Box::new(Frameless)
        }
    }

    impl ProcessUnwinder for Frameless {
        fn unwind(&mut self, stack: &UserStack, frames: &mut Vec<Avma>) -> bool {
            frames.push(stack.ip);
            frames.extend(self.caller(stack).map(|c| c.return_address));
            true
        }
        fn caller(&mut self, stack: &UserStack) -> Option<CallerRegisters> {
            Some(CallerRegisters {
                return_address: Avma(stack.read_u64(stack.sp.0)?),
                sp: Avma(stack.sp.0 + 8),
                bp: stack.bp,
            })
        }
    }

    fn model() -> ProcessModel {
        let mut builder = ProcessModelBuilder::new();
        builder.add(&Record::Mmap(Mmap {
            time: 0,
            pid: 7,
            tid: 7,
            start: Avma(0x40_0000),
            len: 0x1000,
            offset: FileOffset(0),
            path: "/bin/app".into(),
            build_id: None,
        }));
        builder.build()
    }

    fn sample(callchain: &[u64]) -> Sample {
        Sample {
            time: 1,
            pid: 7,
            tid: 7,
            cpu: 0,
            event: 0,
            mode: CpuMode::User,
            ip: Avma(0x40_0010),
            period: 1,
            callchain: callchain
                .iter()
                .map(|&raw| CallchainEntry::from_raw(raw))
                .collect(),
            user_stack: Some(UserStack {
                ip: Avma(0x40_0010),
                sp: Avma(0x7000),
                bp: Avma(0x7100),
                bytes: 0x40_0200u64.to_le_bytes().to_vec(),
            }),
            read: Vec::new(),
        }
    }

    fn offsets(frames: &[Location]) -> Vec<u64> {
        frames
            .iter()
            .map(|frame| match frame {
                Location::Module { offset, .. } => offset.0,
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn a_frame_pointer_chain_gains_the_caller_it_skipped_and_only_once() {
        let model = model();
        let mut walker = StackWalker::new(&model, &Frameless);
        let frames = walker.frames(&sample(&[USER, 0x40_0010, 0x40_0300]));
        assert_eq!(offsets(&frames), [0x10, 0x1ff, 0x2ff]);
        let frames = walker.frames(&sample(&[USER, 0x40_0010, 0x40_0200, 0x40_0300]));
        assert_eq!(offsets(&frames), [0x10, 0x1ff, 0x2ff]);
        // A stack copy alone is unwound.
        let frames = walker.frames(&sample(&[]));
        assert_eq!(offsets(&frames), [0x10, 0x1ff]);
    }
}
