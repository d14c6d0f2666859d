//! Named call stacks with their weights: what flame graphs and the
//! collapsed-stack export (Brendan Gregg's `root;...;leaf count`) are made
//! of. Frames are kept once each; stacks refer to them by index. A function
//! inlined into its caller is a frame of its own, named with an
//! ` (inlined)` suffix as `perf report` marks it.

use rustc_hash::FxHashMap;

use profiler_model::EventRole;

use crate::read::naming::ModuleKey;
use crate::read::stacks::StackProfile;
use crate::read::weight::total;

/// What kind of code a frame is, for colouring.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FrameKind {
    /// The profiled program's own executable.
    Program,
    /// A shared library.
    Library,
    /// The kernel.
    Kernel,
    /// Anonymous memory (JIT code), the vdso, or no mapping at all.
    Other,
}

/// One frame of a stack: a function of a module.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FoldedFrame {
    pub name: String,
    /// The module's short name (file name), or a bracketed pseudo-module.
    pub module: String,
    pub kind: FrameKind,
    /// A function inlined into the frame below it (no call happened).
    pub inlined: bool,
}

/// What a folded line appends to the name of an inlined function.
pub const INLINED_SUFFIX: &str = " (inlined)";

impl FoldedFrame {
    /// The frame as a folded line names it: its name, with ` (inlined)` for
    /// an inlined function, and `:` for any `;` (rare: C++ and Rust names
    /// have none), so that readers split frames where they should.
    pub fn label(&self) -> String {
        let name = self.name.replace(';', ":");
        match self.inlined {
            true => name + INLINED_SUFFIX,
            false => name,
        }
    }
}

/// Distinct stacks, root first, with what they weigh.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FoldedStacks {
    pub frames: Vec<FoldedFrame>,
    /// Frame indices from the root to the leaf, and the stack's weight
    /// (samples or period, as the caller chose). Each stack appears once.
    pub stacks: Vec<(Vec<u32>, u64)>,
    pub weight: StackWeight,
}

/// What the weights of folded stacks count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StackWeight {
    /// Samples.
    #[default]
    Samples,
    /// Nanoseconds off the CPU (`--event off-cpu`).
    OffCpu,
    /// Nanoseconds on the CPU and off it (`--event wall`).
    Wall,
}

impl StackWeight {
    /// What one unit of weight is, for tooltips and summaries.
    pub fn unit(self) -> &'static str {
        match self {
            StackWeight::Samples => "samples",
            StackWeight::OffCpu | StackWeight::Wall => "ns",
        }
    }
}

impl FoldedStacks {
    /// The frames of `stack`, root first.
    pub fn frames_of<'a>(&'a self, stack: &'a [u32]) -> impl Iterator<Item = &'a FoldedFrame> {
        stack.iter().map(|&i| &self.frames[i as usize])
    }

    /// The total weight of every stack.
    pub fn total(&self) -> u64 {
        total(self.stacks.iter().map(|(_, w)| *w))
    }
}

/// Extra root frames naming where each stack was sampled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThreadFrames {
    /// `command-PID`
    pub process: bool,
    /// `command-PID/TID`
    pub thread: bool,
}

impl StackProfile {
    /// The stacks of the first event read, root first, weighted by samples
    /// (the off-CPU and wall events by nanoseconds, as off-CPU flame graphs
    /// are); with `thread_frames`, each stack starts with its process
    /// (`name-PID`) and/or thread (`name-PID/TID`) as extra root frames.
    pub fn folded(&self, thread_frames: ThreadFrames) -> FoldedStacks {
        let Some(event) = self.wanted.iter().position(|&w| w) else {
            return FoldedStacks::default();
        };
        let mut folded = FoldedStacks {
            weight: match self.roles.get(event) {
                Some(EventRole::OffCpu) => StackWeight::OffCpu,
                Some(EventRole::Wall) => StackWeight::Wall,
                _ => StackWeight::Samples,
            },
            ..FoldedStacks::default()
        };
        let mut merged: FxHashMap<Vec<u32>, u64> = FxHashMap::default();
        let mut frame_ids: FxHashMap<FoldedFrame, u32> = FxHashMap::default();
        let mut intern = |frame: FoldedFrame, frames: &mut Vec<FoldedFrame>| -> u32 {
            *frame_ids.entry(frame.clone()).or_insert_with(|| {
                frames.push(frame);
                frames.len() as u32 - 1
            })
        };
        let function_frames: Vec<FoldedFrame> = self
            .functions
            .iter()
            .map(|f| FoldedFrame {
                name: f.name.clone(),
                module: self.module_names(f.module).0,
                kind: self.frame_kind(f.module),
                inlined: f.inlined,
            })
            .collect();
        for stack in &self.events[event] {
            let mut ids = Vec::with_capacity(stack.frames.len() + 2);
            let name = self.thread_name(stack.pid, stack.tid);
            let process_name = self.process_name(stack.pid, stack.tid);
            let thread_frame = |label: String| FoldedFrame {
                name: label,
                module: String::new(),
                kind: FrameKind::Other,
                inlined: false,
            };
            if thread_frames.process {
                let label = format!("{process_name}-{}", stack.pid);
                ids.push(intern(thread_frame(label), &mut folded.frames));
            }
            if thread_frames.thread {
                let label = format!("{name}-{}/{}", stack.pid, stack.tid);
                ids.push(intern(thread_frame(label), &mut folded.frames));
            }
            for &f in stack.frames.iter().rev() {
                ids.push(intern(
                    function_frames[f.index()].clone(),
                    &mut folded.frames,
                ));
            }
            let weight = match folded.weight {
                StackWeight::Samples => stack.weight.samples,
                StackWeight::OffCpu | StackWeight::Wall => stack.weight.period,
            };
            let count = merged.entry(ids).or_default();
            *count = count.saturating_add(weight);
        }
        folded.stacks = merged.into_iter().collect();
        folded.stacks.sort();
        folded
    }

    /// What kind of code a module holds.
    pub(crate) fn frame_kind(&self, key: ModuleKey) -> FrameKind {
        match key {
            ModuleKey::Module(id) => {
                let module = self.modules.get(id);
                if self.program.as_deref() == Some(module.path.as_str()) {
                    FrameKind::Program
                } else if module.has_file() {
                    FrameKind::Library
                } else {
                    FrameKind::Other
                }
            }
            ModuleKey::Kernel => FrameKind::Kernel,
            ModuleKey::Unmapped => FrameKind::Other,
        }
    }
}
