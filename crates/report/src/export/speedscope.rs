//! speedscope's own file format, as its published schema
//! (`https://www.speedscope.app/file-format-schema.json`) states it: one
//! sampled profile per thread, its samples in time order (runs of one stack
//! merged) with their weights, nanoseconds for the clocks; frames shared by
//! every profile, one per function, an inlined function a frame of its own
//! named as folded stacks name it.

use rustc_hash::FxHashMap;
use std::io::{BufWriter, Write};

use profiler_model::Recording;
use serde::Serialize;

use crate::error::ReportError;
use crate::export::thread_timelines::{Replay, shown_event};
use crate::read::naming::FunctionId;
use crate::read::stacks::StackProfile;
use crate::views::folded::INLINED_SUFFIX;

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
    let profiles = match shown_event(stacks) {
        Some(event) => profiles(recording, stacks, event, &mut frames),
        None => Vec::new(),
    };
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

/// A profile per thread, its samples in time order, consecutive samples of
/// one stack merged.
fn profiles(
    recording: &Recording,
    stacks: &StackProfile,
    event: usize,
    frames: &mut Frames,
) -> Vec<Profile> {
    let unit = match recording.header.events[event].unit.as_str() {
        "ns" => "nanoseconds",
        _ => "none",
    };
    let replay = Replay::new(recording, stacks, event);
    let mut profiles: Vec<Profile> = (replay.threads.iter())
        .map(|thread| Profile {
            r#type: "sampled",
            name: match (thread.pid, thread.tid) {
                (0, 0) => thread.name.clone(),
                (pid, tid) => format!("{} (pid {pid}, tid {tid})", thread.name),
            },
            unit,
            start_value: 0,
            end_value: 0,
            samples: Vec::new(),
            weights: Vec::new(),
        })
        .collect();
    let named = &stacks.events[event];
    let mut last: Vec<Option<u32>> = vec![None; profiles.len()];
    for sample in replay.samples() {
        let profile = &mut profiles[sample.thread];
        profile.end_value = profile.end_value.saturating_add(sample.weight);
        if last[sample.thread] == Some(sample.stack)
            && let Some(weight) = profile.weights.last_mut()
        {
            *weight = weight.saturating_add(sample.weight);
            continue;
        }
        last[sample.thread] = Some(sample.stack);
        let stack = &named[sample.stack as usize];
        let ids = stack.frames.iter().rev().map(|&f| frames.id(f)).collect();
        profile.samples.push(ids);
        profile.weights.push(sample.weight);
    }
    profiles
}

/// The shared frames: the functions the samples have, each once.
struct Frames<'a> {
    stacks: &'a StackProfile,
    frames: Vec<Frame>,
    ids: FxHashMap<FunctionId, u32>,
}

impl<'a> Frames<'a> {
    fn new(stacks: &'a StackProfile) -> Self {
        Frames {
            stacks,
            frames: Vec::new(),
            ids: FxHashMap::default(),
        }
    }

    fn id(&mut self, function: FunctionId) -> u32 {
        if let Some(&id) = self.ids.get(&function) {
            return id;
        }
        let key = &self.stacks.functions[function.index()];
        let detail = &self.stacks.details[function.index()];
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
