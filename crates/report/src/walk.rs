//! A sample's call stack as locations, leaf first: from the kernel's call
//! chain (frame pointers, and the kernel's own frames), from the unwound
//! copy of the user stack, or the sampled address alone.
//!
//! Callers' return addresses are looked up one byte back, inside the call
//! instruction: the return address itself can belong to the next line, or
//! to the next function when the call was the last instruction.

use std::collections::HashMap;

use profiler_model::{
    Avma, CallchainEntry, CpuMode, Location, ProcessModel, ProcessUnwinder, Sample, StackUnwinder,
};

/// Walks the stacks of a recording's samples, one unwinder per process.
pub(crate) struct StackWalker<'a> {
    model: &'a ProcessModel,
    unwinder: &'a dyn StackUnwinder,
    processes: HashMap<u32, Box<dyn ProcessUnwinder + 'a>>,
    addresses: Vec<Avma>,
}

impl<'a> StackWalker<'a> {
    pub fn new(model: &'a ProcessModel, unwinder: &'a dyn StackUnwinder) -> StackWalker<'a> {
        StackWalker {
            model,
            unwinder,
            processes: HashMap::new(),
            addresses: Vec::new(),
        }
    }

    /// The sample's stack, leaf first.
    pub fn frames(&mut self, sample: &Sample) -> Vec<Location> {
        let mut frames = Vec::new();
        let mut mode = CpuMode::Unknown;
        let mut first_of_context = true;
        for &entry in &sample.callchain {
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
                        _ => self.model.resolve_address(sample.pid, address, sample.time),
                    });
                }
            }
        }
        if let Some(stack) = &sample.user_stack {
            let (model, unwinder) = (self.model, self.unwinder);
            let process = self
                .processes
                .entry(sample.pid)
                .or_insert_with(|| unwinder.process(model.modules(), &model.mappings(sample.pid)));
            self.addresses.clear();
            process.unwind(stack, &mut self.addresses);
            for (index, address) in self.addresses.iter().enumerate() {
                let address = match index {
                    0 => *address,
                    _ => Avma(address.0.saturating_sub(1)),
                };
                frames.push(self.model.resolve_address(sample.pid, address, sample.time));
            }
        }
        if frames.is_empty() {
            frames.push(self.model.resolve(sample));
        }
        frames
    }
}
