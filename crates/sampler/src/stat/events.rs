//! The events `stat` counts: each `-e` list taken apart (the members of a
//! `{...}` group counted each on its own, with the group's modifiers), each
//! event parsed and tried once on the profiler itself, to learn whether
//! this machine can count it; without modifiers of its own an event counts
//! the kernel's side too, where the kernel allows.

use profiler_events::{EventSpec, Pmus, own_modifiers, split_event_list};

use crate::builder::counter_builder;
use crate::error::SamplerError;
use crate::privileges::Privileges;
use crate::refusal;

/// The events counted when none is named: those `perf stat` shows.
pub const DEFAULT_STAT_EVENTS: &[&str] = &[
    "task-clock",
    "context-switches",
    "cpu-migrations",
    "page-faults",
    "cycles",
    "instructions",
];

/// An event to count, checked against the kernel.
#[derive(Clone, Debug)]
pub(super) struct StatEvent {
    /// The event as the user named it (its canonical name by default).
    pub label: String,
    pub spec: EventSpec,
    /// Why the machine cannot count it, if it cannot.
    pub unsupported: Option<String>,
}

/// The events of the `-e` values `lists` (empty: the defaults, with a
/// CPU's clock for `cpu_wide` counts), each checked with a trial open on
/// this process.
pub(super) fn resolve_events(
    lists: &[String],
    cpu_wide: bool,
    privileges: &Privileges,
    notices: &mut Vec<String>,
) -> Result<Vec<StatEvent>, SamplerError> {
    let pmus = Pmus::system();
    let mut events = Vec::new();
    let mut user_only = false;
    for text in event_texts(lists, cpu_wide, notices)? {
        let mut spec = EventSpec::parse_with(&text, &pmus)?;
        let explicit = own_modifiers(&text).is_some();
        // Unlike sampling, counting looks at the kernel's side of a program
        // too where it may: context switches and migrations happen there.
        if !explicit {
            spec.kernel = privileges.may_count_kernel();
            user_only |= !spec.kernel;
        }
        let label = match explicit {
            true => text.trim().to_owned(),
            false => spec.base.clone(),
        };
        let unsupported = match refusal::probe(&mut counter_builder(&spec), &spec) {
            Ok(()) => None,
            Err(SamplerError::EventNotSupported { reason, .. }) => Some(reason),
            Err(error) => return Err(error),
        };
        events.push(StatEvent {
            label,
            spec,
            unsupported,
        });
    }
    note_unsupported(&events, notices)?;
    if user_only {
        notices.push(format!(
            "counting user space only{}, as the kernel allows no more; context switches and \
             migrations happen in the kernel and read 0: run as root, grant CAP_PERFMON, or \
             `sysctl kernel.perf_event_paranoid=1`",
            privileges
                .paranoid
                .map(|p| format!(" (kernel.perf_event_paranoid is {p})"))
                .unwrap_or_default()
        ));
    }
    Ok(events)
}

/// The event texts of the `-e` values, or the defaults.
fn event_texts(
    lists: &[String],
    cpu_wide: bool,
    notices: &mut Vec<String>,
) -> Result<Vec<String>, SamplerError> {
    if lists.is_empty() {
        return Ok(DEFAULT_STAT_EVENTS
            .iter()
            // A CPU's clock, not a task's, is what runs on a whole CPU.
            .map(|&name| match (name, cpu_wide) {
                ("task-clock", true) => "cpu-clock".to_owned(),
                _ => name.to_owned(),
            })
            .collect());
    }
    let mut texts = Vec::new();
    for list in lists {
        texts.extend(expand_event_list(list, notices)?);
    }
    Ok(texts)
}

/// One notice per reason some events cannot be counted here; an error if
/// none can.
fn note_unsupported(events: &[StatEvent], notices: &mut Vec<String>) -> Result<(), SamplerError> {
    if events.iter().all(|e| e.unsupported.is_some()) {
        let reasons: Vec<String> = events
            .iter()
            .map(|e| format!("'{}': {}", e.label, e.unsupported.as_deref().unwrap_or("")))
            .collect();
        return Err(SamplerError::InvalidStat {
            problem: format!(
                "no event can be counted here ({}); count a software event instead, e.g. \
                 -e task-clock",
                reasons.join("; ")
            ),
        });
    }
    let mut reasons: Vec<&str> = events
        .iter()
        .filter_map(|e| e.unsupported.as_deref())
        .collect();
    reasons.dedup();
    for reason in reasons {
        let names: Vec<&str> = events
            .iter()
            .filter(|e| e.unsupported.as_deref() == Some(reason))
            .map(|e| e.label.as_str())
            .collect();
        notices.push(format!("{} not supported: {reason}", names.join(", ")));
    }
    Ok(())
}

/// Splits one `-e` value into events at the commas outside `pmu/.../`
/// terms; the members of a `{...}` group are counted each on its own, the
/// group's modifiers added to each.
fn expand_event_list(list: &str, notices: &mut Vec<String>) -> Result<Vec<String>, SamplerError> {
    let mut events = Vec::new();
    for item in split_event_list(list) {
        let item = item.trim();
        if item.is_empty() {
            return Err(SamplerError::InvalidStat {
                problem: format!("-e '{list}' names an empty event; separate events by one comma"),
            });
        }
        let Some(group) = item.strip_prefix('{') else {
            events.push(item.to_owned());
            continue;
        };
        let (members, modifiers) = match group.rsplit_once('}') {
            Some((members, modifiers)) => (members, modifiers),
            None => {
                return Err(SamplerError::InvalidStat {
                    problem: format!("-e '{list}': the group '{item}' has no closing '}}'"),
                });
            }
        };
        let note = "the events of a {...} group are counted each on its own";
        if !notices.iter().any(|n| n == note) {
            notices.push(note.to_owned());
        }
        for member in expand_event_list(members, notices)? {
            match (modifiers.is_empty(), own_modifiers(&member).is_some()) {
                // A PMU term takes its modifiers right after its slash.
                (false, false) if member.ends_with('/') => {
                    events.push(format!("{member}{}", modifiers.trim_start_matches(':')))
                }
                (false, false) => events.push(format!("{member}{modifiers}")),
                _ => events.push(member),
            }
        }
    }
    Ok(events)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_expanded_with_their_modifiers() {
        let mut notices = Vec::new();
        let events = expand_event_list("{task-clock,page-faults:k}:u,cs", &mut notices).unwrap();
        assert_eq!(events, ["task-clock:u", "page-faults:k", "cs"]);
        let events = expand_event_list("{cpu/event=0x3c/,cs}:k", &mut notices).unwrap();
        assert_eq!(events, ["cpu/event=0x3c/k", "cs:k"]);
        assert_eq!(notices.len(), 1);
        let error = expand_event_list("task-clock,", &mut notices).unwrap_err();
        assert!(error.to_string().contains("empty event"), "{error}");
    }
}
