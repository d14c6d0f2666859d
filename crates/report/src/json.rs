//! The flat profile as JSON:
//! `{"events":[{"name","samples","lost",...}], "functions":[{"name","module","self",
//! "self_percent","total","total_percent",...}], ...}`, and sorted by line
//! or address `"lines"` or `"addresses"`: `[{"module","function","file",
//! "line","address","offset","self","self_percent",...}]`. Without call
//! graphs, `total` equals `self`.

use std::io::{self, Write};

use serde_json::{Value, json};

use profiler_model::Sampling;

use crate::profile::{FlatProfile, SortKey};

pub fn render_json(profile: &FlatProfile, out: &mut impl Write) -> io::Result<()> {
    let events: Vec<Value> = profile
        .events
        .iter()
        .map(|e| {
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
        })
        .collect();
    let functions: Vec<Value> = profile
        .events
        .iter()
        .flat_map(|e| {
            e.functions.iter().map(|f| {
                let mut row = json!({
                    "name": f.name,
                    "module": f.module,
                    "event": e.description.name,
                    "self": f.weight.samples,
                    "self_percent": round(f.percent),
                    "total": f.total.samples,
                    "total_percent": round(f.total_percent),
                    "period": f.weight.period,
                });
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
            })
        })
        .collect();
    let modules: Vec<Value> = profile
        .events
        .iter()
        .flat_map(|e| {
            e.modules.iter().map(|m| {
                json!({
                    "module": m.module,
                    "path": m.path,
                    "event": e.description.name,
                    "self": m.weight.samples,
                    "self_percent": round(m.percent),
                    "period": m.weight.period,
                })
            })
        })
        .collect();
    let places: Vec<Value> = profile
        .events
        .iter()
        .flat_map(|e| {
            e.places.iter().map(|p| {
                json!({
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
                })
            })
        })
        .collect();
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
        "events": events,
        "functions": functions,
        "modules": modules,
        "threads": threads,
        "problems": profile.problems,
        "histogram": profile.histogram.as_ref().map(|(settings, totals)| json!({
            "bucket_bits": settings.bucket_bits,
            "scale": settings.scale,
            "outside": totals.iter().map(|t| t.outside).collect::<Vec<_>>(),
        })),
    });
    match profile.sort {
        SortKey::Line => document["lines"] = Value::Array(places),
        SortKey::Address => document["addresses"] = Value::Array(places),
        SortKey::Symbol | SortKey::Module => {}
    }
    serde_json::to_writer_pretty(&mut *out, &document)?;
    writeln!(out)
}

/// Percentages with four decimals: enough, and stable in golden files.
fn round(percent: f64) -> f64 {
    (percent * 10_000.0).round() / 10_000.0
}
