//! speedscope's own file format, as its published schema
//! (`https://www.speedscope.app/file-format-schema.json`) states it: one
//! sampled profile per thread, its samples in time order (runs of one stack
//! merged) with their weights, nanoseconds for the clocks; frames shared by
//! every profile, one per function, an inlined function a frame of its own
//! named as folded stacks name it.

use std::collections::HashMap;
use std::io::{BufWriter, Write};

use profiler_model::Recording;
use serde::Serialize;

use crate::error::ReportError;
use crate::folded::INLINED_SUFFIX;
use crate::replay::{ThreadSamples, shown_event, thread_samples};
use crate::stacks::StackProfile;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct File {
    #[serde(rename = "$schema")]
    schema: &'static str,
    exporter: String,
    name: String,
    active_profile_index: usize,
    shared: Shared,
    profiles: Vec<Profile>,
}

#[derive(Serialize)]
struct Shared {
    frames: Vec<Frame>,
}

#[derive(Serialize)]
struct Frame {
    name: String,
    /// The source file, or the module where none is known.
    file: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Profile {
    r#type: &'static str,
    name: String,
    unit: &'static str,
    start_value: u64,
    end_value: u64,
    /// Indices into the shared frames, root first.
    samples: Vec<Vec<u32>>,
    weights: Vec<u64>,
}

/// Writes the samples of the first event read (with their times, where
/// the stacks were read with [`StackOptions::timeline`](crate::StackOptions::timeline))
/// as a speedscope file.
pub fn render_speedscope(
    recording: &Recording,
    stacks: &StackProfile,
    out: impl Write,
) -> Result<(), ReportError> {
    let mut frames = Frames::new(stacks);
    let mut profiles = Vec::new();
    if let Some(event) = shown_event(stacks) {
        let unit = match recording.header.events[event].unit.as_str() {
            "ns" => "nanoseconds",
            _ => "none",
        };
        for thread in thread_samples(recording, stacks, event) {
            profiles.push(profile(stacks, event, &thread, unit, &mut frames));
        }
    }
    let active_profile_index = (profiles.iter().enumerate())
        .max_by_key(|(i, p)| (p.end_value, std::cmp::Reverse(*i)))
        .map_or(0, |(i, _)| i);
    let file = File {
        schema: "https://www.speedscope.app/file-format-schema.json",
        exporter: format!("profiler@{}", env!("CARGO_PKG_VERSION")),
        name: recording.header.command.join(" "),
        active_profile_index,
        shared: Shared {
            frames: frames.frames,
        },
        profiles,
    };
    let mut out = BufWriter::new(out);
    serde_json::to_writer(&mut out, &file).map_err(std::io::Error::from)?;
    out.flush()?;
    Ok(())
}

/// One thread's samples, consecutive samples of one stack merged.
fn profile(
    stacks: &StackProfile,
    event: usize,
    thread: &ThreadSamples,
    unit: &'static str,
    frames: &mut Frames,
) -> Profile {
    let named = &stacks.events[event];
    let mut samples: Vec<Vec<u32>> = Vec::new();
    let mut weights: Vec<u64> = Vec::new();
    let mut last = None;
    for sample in &thread.samples {
        if last == Some(sample.stack)
            && let Some(weight) = weights.last_mut()
        {
            *weight += sample.weight;
            continue;
        }
        last = Some(sample.stack);
        let stack = &named[sample.stack as usize];
        samples.push(stack.frames.iter().rev().map(|&f| frames.id(f)).collect());
        weights.push(sample.weight);
    }
    let name = match (thread.pid, thread.tid) {
        (0, 0) => thread.name.clone(),
        (pid, tid) => format!("{} (pid {pid}, tid {tid})", thread.name),
    };
    Profile {
        r#type: "sampled",
        name,
        unit,
        start_value: 0,
        end_value: weights.iter().sum(),
        samples,
        weights,
    }
}

/// The shared frames: the functions the samples have, each once.
struct Frames<'a> {
    stacks: &'a StackProfile,
    frames: Vec<Frame>,
    ids: HashMap<u32, u32>,
}

impl<'a> Frames<'a> {
    fn new(stacks: &'a StackProfile) -> Self {
        Frames {
            stacks,
            frames: Vec::new(),
            ids: HashMap::new(),
        }
    }

    fn id(&mut self, function: u32) -> u32 {
        if let Some(&id) = self.ids.get(&function) {
            return id;
        }
        let key = &self.stacks.functions[function as usize];
        let detail = &self.stacks.details[function as usize];
        let name = match key.inlined {
            true => format!("{}{INLINED_SUFFIX}", key.name),
            false => key.name.clone(),
        };
        let file = match &detail.file {
            Some(file) => file.to_string(),
            None => self.stacks.module_names(key.module).1,
        };
        self.frames.push(Frame { name, file });
        let id = self.frames.len() as u32 - 1;
        self.ids.insert(function, id);
        id
    }
}
