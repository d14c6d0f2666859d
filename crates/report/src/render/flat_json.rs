//! The flat profile as JSON:
//! `{"events":[{"name","samples","lost",...}], "functions":[{"name","module","self",
//! "self_percent","total","total_percent","inlined_self","inlined":[{"name","samples",
//! "percent","innermost","direct"}],...}], "commands":[{"comm","self","self_percent",...}],
//! ...}`, and sorted by line or address `"lines"` or `"addresses"`:
//! `[{"module","function","file","line","address","offset","self","self_percent",...}]`,
//! by command, process or state alone `"tasks"`. Rows carry `"comm"`,
//! `"pid"`, `"state"` and `"rank"` when the sort keys tell commands,
//! processes, threads' states and ranks apart. Without call graphs, `total`
//! is `self` and the code inlined into the function. The recordings of a job
//! read together add `"ranks": [{"rank","host"}]`.

use std::io::{self, Write};

use serde_json::{Value, json};

use profiler_model::Sampling;

use crate::views::flat::{EventProfile, FlatProfile, FunctionRow, ModuleRow};
use crate::views::places::PlaceRow;
use crate::views::sort::{PlaceKind, RowKind, row_kind};
use crate::views::tasks::{Task, TaskRow};

pub fn render_json(profile: &FlatProfile, out: &mut impl Write) -> io::Result<()> {
    let threads: Vec<Value> = profile
        .threads
        .iter()
        .map(|t| json!({"pid": t.pid, "tid": t.tid, "name": t.name, "samples": t.samples}))
        .collect();
    let mut document = json!({
        "command": profile.header.command,
        "duration_ns": profile.duration_ns,
        "outcome": profile.outcome,
        "processes": profile.processes,
        "threads_seen": profile.thread_count,
        "events": rows(profile, |e| std::iter::once(event_json(e))),
        "functions": rows(profile, |e| e.functions.iter().map(|f| function_json(e, f))),
        "modules": rows(profile, |e| e.modules.iter().map(|m| module_json(e, m))),
        "commands": rows(profile, |e| e.commands.iter().map(|t| task_json(e, t))),
        "threads": threads,
        "problems": profile.problems,
        "histogram": profile.histogram.as_ref().map(|(settings, totals)| json!({
            "bucket_bits": settings.bucket_bits,
            "scale": settings.scale,
            "outside": totals.iter().map(|t| t.outside).collect::<Vec<_>>(),
        })),
    });
    if !profile.thread_times.is_empty() {
        document["thread_times"] = thread_times(profile).into();
    }
    if !profile.ranks.is_empty() {
        document["ranks"] = ranks_json(profile.ranks.iter().map(|r| (r.rank, r.host.as_str())));
    }
    let places = || rows(profile, |e| e.places.iter().map(|p| place_json(e, p)));
    match row_kind(&profile.sort) {
        RowKind::Places(PlaceKind::Line) => document["lines"] = places(),
        RowKind::Places(PlaceKind::Address) => document["addresses"] = places(),
        RowKind::Tasks => {
            document["tasks"] = rows(profile, |e| e.tasks.iter().map(|t| task_json(e, t)));
        }
        RowKind::Functions | RowKind::Modules => {}
    }
    serde_json::to_writer_pretty(&mut *out, &document)?;
    writeln!(out)
}

/// With `record --off-cpu`, each thread's
/// `{"pid","tid","name","on_cpu_ns","blocked_ns","preempted_ns","total_ns","lifetime_ns"}`.
fn thread_times(profile: &FlatProfile) -> Vec<Value> {
    (profile.thread_times.iter())
        .map(|t| {
            let times = &t.times;
            json!({
                "pid": times.pid,
                "tid": times.tid,
                "name": t.name,
                "on_cpu_ns": times.on_cpu,
                "blocked_ns": times.blocked,
                "preempted_ns": times.preempted,
                "total_ns": times.total(),
                "lifetime_ns": times.lifetime(),
            })
        })
        .collect()
}

/// The rows `each` makes of every event, one array.
fn rows<'a, I: Iterator<Item = Value>>(
    profile: &'a FlatProfile,
    each: impl Fn(&'a EventProfile) -> I,
) -> Value {
    Value::Array(profile.events.iter().flat_map(each).collect())
}

fn event_json(e: &EventProfile) -> Value {
    let (key, value) = match e.description.sampling {
        Sampling::Frequency(hz) => ("frequency", hz),
        Sampling::Period(n) => ("period", n),
    };
    json!({
        "name": e.description.name,
        "samples": e.stats.samples,
        "lost": e.stats.lost,
        "throttled": e.stats.throttled,
        "period": e.stats.period,
        "unit": e.description.unit,
        "sampling": { key: value },
        "group": e.group,
        "stacks": e.call_stacks.map(|(rooted, samples)| json!({
            "rooted": rooted,
            "samples": samples,
        })),
    })
}

fn function_json(e: &EventProfile, f: &FunctionRow) -> Value {
    let mut row = json!({
        "name": f.name,
        "module": f.module,
        "event": e.description.name,
        "self": f.weight.samples,
        "self_percent": round(f.percent),
        "total": f.total.samples,
        "total_percent": round(f.total_percent),
        "period": f.weight.period,
        "inlined_self": f.inlined_weight.samples,
        "inlined": inlined_json(f),
    });
    add_task(&mut row, &f.task);
    if !e.group.is_empty() {
        let counted: serde_json::Map<String, Value> = (e.group.iter())
            .zip(&f.group)
            .map(|(name, count)| (name.clone(), json!(count)))
            .collect();
        row["group"] = Value::Object(counted);
    }
    if let Some(thread) = &e.thread {
        row["pid"] = json!(thread.pid);
        row["tid"] = json!(thread.tid);
    }
    row
}

fn module_json(e: &EventProfile, m: &ModuleRow) -> Value {
    let mut row = json!({
        "module": m.module,
        "path": m.path,
        "event": e.description.name,
        "self": m.weight.samples,
        "self_percent": round(m.percent),
        "period": m.weight.period,
    });
    add_task(&mut row, &m.task);
    row
}

fn place_json(e: &EventProfile, p: &PlaceRow) -> Value {
    let mut row = json!({
        "module": p.module,
        "function": p.function,
        "file": p.file.as_deref(),
        "line": p.line,
        "address": p.address,
        "offset": p.function_offset,
        "event": e.description.name,
        "self": p.weight.samples,
        "self_percent": round(p.percent),
        "period": p.weight.period,
    });
    add_task(&mut row, &p.task);
    row
}

fn task_json(e: &EventProfile, t: &TaskRow) -> Value {
    let mut row = json!({
        "event": e.description.name,
        "self": t.weight.samples,
        "self_percent": round(t.percent),
        "period": t.weight.period,
    });
    add_task(&mut row, &t.task);
    row
}

/// The functions inlined into `row`'s, with their samples and share of
/// its own.
fn inlined_json(row: &FunctionRow) -> Vec<Value> {
    let own = row.weight.period.max(1) as f64;
    (row.inlined.iter())
        .map(|i| {
            json!({
                "name": i.name,
                "samples": i.weight.samples,
                "percent": round(i.weight.period as f64 * 100.0 / own),
                "innermost": i.innermost.samples,
                "direct": i.direct.samples,
            })
        })
        .collect()
}

/// `"rank"`, `"comm"`, and `"pid"` with `"process"` (its name), where the
/// sort keys tell them apart.
fn add_task(row: &mut Value, task: &Task) {
    if let Some(rank) = task.rank {
        row["rank"] = json!(rank);
    }
    if let Some(command) = &task.command {
        row["comm"] = json!(command);
    }
    if let Some((pid, process)) = &task.process {
        row["pid"] = json!(pid);
        row["process"] = json!(process);
    }
    if let Some(state) = task.state {
        row["state"] = json!(state.name());
    }
}

/// `[{"rank", "host"}, ...]`: the recordings of a job read together.
pub(crate) fn ranks_json<'a>(ranks: impl Iterator<Item = (u32, &'a str)>) -> Value {
    ranks
        .map(|(rank, host)| json!({"rank": rank, "host": host}))
        .collect()
}

/// Percentages with four decimals: enough, and stable in golden files.
fn round(percent: f64) -> f64 {
    (percent * 10_000.0).round() / 10_000.0
}
