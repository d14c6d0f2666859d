//! Event names: what `-e` accepts, and what each means to `perf_event_open`.

use crate::error::SamplerError;

const PERF_TYPE_HARDWARE: u32 = 0;
const PERF_TYPE_SOFTWARE: u32 = 1;

/// A named event the profiler knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KnownEvent {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub perf_type: u32,
    pub config: u64,
    /// What one occurrence is (`ns` for the clocks).
    pub unit: &'static str,
}

impl KnownEvent {
    /// Whether the event needs a hardware performance-monitoring unit.
    pub fn is_hardware(&self) -> bool {
        self.perf_type == PERF_TYPE_HARDWARE
    }
}

const fn hardware(name: &'static str, aliases: &'static [&'static str], config: u64) -> KnownEvent {
    KnownEvent {
        name,
        aliases,
        perf_type: PERF_TYPE_HARDWARE,
        config,
        unit: "events",
    }
}

const fn software(
    name: &'static str,
    aliases: &'static [&'static str],
    config: u64,
    unit: &'static str,
) -> KnownEvent {
    KnownEvent {
        name,
        aliases,
        perf_type: PERF_TYPE_SOFTWARE,
        config,
        unit,
    }
}

/// The generic hardware and software events (`PERF_COUNT_HW_*`, `PERF_COUNT_SW_*`).
pub const KNOWN_EVENTS: &[KnownEvent] = &[
    hardware("cycles", &["cpu-cycles"], 0),
    hardware("instructions", &[], 1),
    hardware("cache-references", &[], 2),
    hardware("cache-misses", &[], 3),
    hardware("branch-instructions", &["branches"], 4),
    hardware("branch-misses", &[], 5),
    hardware("bus-cycles", &[], 6),
    hardware("stalled-cycles-frontend", &["idle-cycles-frontend"], 7),
    hardware("stalled-cycles-backend", &["idle-cycles-backend"], 8),
    hardware("ref-cycles", &[], 9),
    software("cpu-clock", &[], 0, "ns"),
    software("task-clock", &[], 1, "ns"),
    software("page-faults", &["faults"], 2, "events"),
    software("context-switches", &["cs"], 3, "events"),
    software("cpu-migrations", &["migrations"], 4, "events"),
    software("minor-faults", &[], 5, "events"),
    software("major-faults", &[], 6, "events"),
    software("alignment-faults", &[], 7, "events"),
    software("emulation-faults", &[], 8, "events"),
];

/// The default event where the machine has a PMU.
pub const CYCLES: &KnownEvent = &KNOWN_EVENTS[0];
/// The default event where it has none.
pub const CPU_CLOCK: &KnownEvent = &KNOWN_EVENTS[10];

/// An event as the user asked for it, encoded for `perf_event_open`: which
/// counter (`type`, `config`, `config1`, `config2`), where to count it, and
/// how precisely.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventSpec {
    /// The event's name without modifiers, as the user will see it again
    /// (`cycles`, `cpu-clock`, `r01c2`, `cpu/event=0x3c,umask=0x0/`).
    pub base: String,
    pub perf_type: u32,
    pub config: u64,
    pub config1: u64,
    pub config2: u64,
    /// What one occurrence is (`ns` for the clocks, `events` otherwise).
    pub unit: &'static str,
    /// Whether it needs a hardware performance-monitoring unit.
    pub hardware: bool,
    pub user: bool,
    pub kernel: bool,
    pub hypervisor: bool,
    /// `precise_ip`: 0 (any skid) to 3 (`:ppp`, no skid).
    pub precise: u8,
}

impl EventSpec {
    /// A known event counting user-space execution only: what an
    /// unprivileged user may sample, and where a program's own code runs.
    pub fn user_only(event: &KnownEvent) -> EventSpec {
        EventSpec {
            base: event.name.to_owned(),
            perf_type: event.perf_type,
            config: event.config,
            config1: 0,
            config2: 0,
            unit: event.unit,
            hardware: event.is_hardware(),
            user: true,
            kernel: false,
            hypervisor: false,
            precise: 0,
        }
    }

    /// The canonical name, with the modifiers that differ from the default
    /// (user space only, any skid).
    pub fn name(&self) -> String {
        let mut modifiers = String::new();
        if !(self.user && !self.kernel && !self.hypervisor) {
            for (on, letter) in [(self.user, 'u'), (self.kernel, 'k'), (self.hypervisor, 'h')] {
                if on {
                    modifiers.push(letter);
                }
            }
        }
        modifiers.extend(std::iter::repeat_n('p', usize::from(self.precise)));
        match modifiers.is_empty() {
            true => self.base.clone(),
            false => format!("{}:{modifiers}", self.base),
        }
    }

    /// Parses `NAME[:MODIFIERS]`, where the modifiers are `u` (user space)
    /// and `k` (kernel). Without modifiers only user space is counted.
    pub fn parse(text: &str) -> Result<EventSpec, SamplerError> {
        let (name, modifiers) = text.split_once(':').unwrap_or((text, ""));
        let event = KNOWN_EVENTS
            .iter()
            .find(|e| e.name == name || e.aliases.contains(&name))
            .ok_or_else(|| unknown_event(name))?;
        let mut spec = EventSpec::user_only(event);
        if modifiers.is_empty() {
            return Ok(spec);
        }
        spec.user = false;
        for modifier in modifiers.chars() {
            match modifier {
                'u' => spec.user = true,
                'k' => spec.kernel = true,
                _ => {
                    return Err(SamplerError::UnsupportedModifier {
                        event: text.to_owned(),
                        modifier,
                    });
                }
            }
        }
        Ok(spec)
    }
}

fn unknown_event(name: &str) -> SamplerError {
    let suggestion = KNOWN_EVENTS
        .iter()
        .flat_map(|e| std::iter::once(&e.name).chain(e.aliases))
        .map(|candidate| (edit_distance(name, candidate), *candidate))
        .filter(|(distance, _)| *distance <= 2)
        .min()
        .map(|(_, candidate)| candidate);
    SamplerError::UnknownEvent {
        name: name.to_owned(),
        suggestion,
        known: KNOWN_EVENTS
            .iter()
            .map(|e| e.name)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_aliases_and_modifiers_parse() {
        let spec = EventSpec::parse("cpu-clock").unwrap();
        assert_eq!((spec.perf_type, spec.config), (1, 0));
        assert!(spec.user && !spec.kernel);
        assert_eq!(EventSpec::parse("cpu-cycles").unwrap().base, CYCLES.name);
        let spec = EventSpec::parse("faults:uk").unwrap();
        assert_eq!(spec.base, "page-faults");
        assert!(spec.user && spec.kernel);
        assert_eq!(spec.name(), "page-faults:uk");
        assert_eq!(EventSpec::parse("cycles:k").unwrap().name(), "cycles:k");
        assert!(CYCLES.is_hardware() && !CPU_CLOCK.is_hardware());
        assert_eq!(CPU_CLOCK.name, "cpu-clock");
    }

    #[test]
    fn every_event_the_issue_names_is_known() {
        for name in [
            "cycles",
            "instructions",
            "cache-misses",
            "branch-misses",
            "cpu-clock",
            "task-clock",
            "page-faults",
        ] {
            assert_eq!(EventSpec::parse(name).unwrap().base, name);
        }
    }

    #[test]
    fn unknown_names_get_a_suggestion_and_the_list() {
        let error = EventSpec::parse("cpu-clok").unwrap_err().to_string();
        assert!(error.contains("unknown event 'cpu-clok'"), "{error}");
        assert!(error.contains("did you mean 'cpu-clock'"), "{error}");
        let error = EventSpec::parse("frobnicate").unwrap_err().to_string();
        assert!(!error.contains("did you mean"), "{error}");
        assert!(error.contains("task-clock"), "{error}");
        let error = EventSpec::parse("cycles:z").unwrap_err().to_string();
        assert!(error.contains("modifier 'z'"), "{error}");
    }
}
