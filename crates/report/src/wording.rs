//! Phrases that several views and renderers share, and that `record`
//! prints too: an event's description, the advice when samples were lost
//! or stacks cut short, and the width of a text column.

use profiler_model::{CallGraph, EventDescription, EventRole, EventStats, Sampling};

use crate::read::job::rank_list;
use crate::read::stacks::RankInfo;

/// `cpu-clock, 4000 Hz, user space` or `page-faults, every 1 events, user space and kernel`;
/// `off-cpu, ns off the CPU, at the stack each thread left from`.
pub(crate) fn event_phrase(event: &EventDescription) -> String {
    let clock_rate = |sampling| match sampling {
        Sampling::Frequency(hz) => format!("{hz} Hz"),
        Sampling::Period(n) => format!("every {n} {}", event.unit),
    };
    let rate = match (event.role, event.leader) {
        (EventRole::OffCpu, _) => {
            return format!(
                "{}, ns off the CPU (blocked or preempted), at the stack each thread left from",
                event.name
            );
        }
        (EventRole::Wall, _) => format!(
            "ns on the CPU (its samples, {}) and off it",
            clock_rate(event.sampling)
        ),
        (_, Some(_)) => "read with each sample of its group's leader".to_owned(),
        (_, None) => clock_rate(event.sampling),
    };
    let scope = match (event.user, event.kernel) {
        (true, false) => "user space",
        (false, true) => "kernel",
        _ => "user space and kernel",
    };
    format!("{}, {rate}, {scope}", event.name)
}

/// What to do when more than 1% of an event's samples were lost, or its
/// sampling was throttled that often.
pub fn loss_advice(stats: &EventStats) -> Vec<String> {
    let mut advice = Vec::new();
    let lost_share = stats.lost as f64 / stats.samples.saturating_add(stats.lost).max(1) as f64;
    if lost_share > 0.01 {
        advice.push(format!(
            "{:.1}% of the samples were lost (the ring buffers filled up); record with a \
             lower -F, a higher -c or a bigger --mmap-pages",
            lost_share * 100.0
        ));
    }
    if stats.throttled as f64 > stats.samples as f64 * 0.01 {
        advice.push(format!(
            "the kernel throttled sampling {} times (more samples per second than \
             kernel.perf_event_max_sample_rate and perf_cpu_time_max_percent allow): the \
             samples undercount the busiest stretches; record with a lower -F or a higher -c",
            stats.throttled
        ));
    }
    advice
}

/// `frame pointers: 97.2% reached the start of their program or thread (1234 of 1270 samples)`.
pub fn stack_phrase(call_graph: CallGraph, rooted: u64, samples: u64) -> String {
    let how = match call_graph {
        CallGraph::FramePointer => "frame pointers".to_owned(),
        CallGraph::Dwarf { stack_bytes } => format!("dwarf, {stack_bytes}-byte stack copies"),
    };
    format!(
        "{how}: {:.1}% reached the start of their program or thread ({rooted} of {samples} samples)",
        rooted as f64 * 100.0 / samples.max(1) as f64
    )
}

/// What to do when too few stacks were whole (among enough samples to
/// tell).
pub fn stack_advice(call_graph: CallGraph, rooted: u64, samples: u64) -> Option<String> {
    if samples < 50 || rooted as f64 >= samples as f64 * 0.9 {
        return None;
    }
    Some(match call_graph {
        CallGraph::FramePointer => "many stacks are cut short: code built without frame \
            pointers breaks the chain; record with --call-graph dwarf, or build with \
            -fno-omit-frame-pointer"
            .to_owned(),
        CallGraph::Dwarf { stack_bytes } => format!(
            "many stacks are cut short: deep stacks need a bigger copy; record with \
             --call-graph dwarf,{}",
            (stack_bytes.saturating_mul(4)).min(65528)
        ),
    })
}

/// The width of a column: its widest value, or its heading if wider.
pub(crate) fn column_width(widths: impl Iterator<Item = usize>, heading: &str) -> usize {
    widths.max().unwrap_or(0).max(heading.len())
}

/// `4 recordings, ranks 0 to 3, on 2 hosts (node1, node2)`: the recordings
/// of a job read together.
pub(crate) fn job_phrase(ranks: &[RankInfo]) -> String {
    let mut hosts: Vec<&str> = ranks.iter().map(|r| r.host.as_str()).collect();
    hosts.sort_unstable();
    hosts.dedup();
    const NAMED: usize = 4;
    let named = hosts
        .iter()
        .take(NAMED)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    let more = match hosts.len() > NAMED {
        true => format!(" and {} more", hosts.len() - NAMED),
        false => String::new(),
    };
    let numbers: Vec<u32> = ranks.iter().map(|r| r.rank).collect();
    let recordings = match ranks.len() {
        1 => "1 recording".to_owned(),
        n => format!("{n} recordings"),
    };
    let on = match hosts.len() {
        1 => format!("1 host ({named})"),
        n => format!("{n} hosts ({named}{more})"),
    };
    format!("{recordings}, {}, on {on}", rank_list(&numbers))
}
