//! Events: the generic hardware and software events the kernel defines,
//! and [`EventSpec`], an event as `perf_event_open` takes it (its encoding,
//! where to count it, how precisely). The `-e` syntax that produces one,
//! and [`EventSpec::parse`], are in `event_parse`.

pub const PERF_TYPE_HARDWARE: u32 = 0;
pub const PERF_TYPE_SOFTWARE: u32 = 1;
/// A raw hardware event code (`rNNNN`), which the CPU's PMU interprets.
pub const PERF_TYPE_RAW: u32 = 4;

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
    /// (`cycles`, `cpu-clock`, `L1-dcache-load-misses`, `r01c2`,
    /// `cpu/event=0x3c,umask=0x0/`, `cpu/mem-loads,ldlat=30/`).
    pub base: String,
    pub perf_type: u32,
    pub config: u64,
    pub config1: u64,
    pub config2: u64,
    /// What one occurrence is (`ns` for the clocks, `events` otherwise).
    pub unit: &'static str,
    /// Whether it needs the CPU's performance-monitoring unit: generic
    /// hardware, cache and raw events, and those of the core PMU (`cpu/`).
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

    /// Whether the event is one of the kernel's software events, which
    /// have no skid for `:p` to reduce.
    pub fn is_software(&self) -> bool {
        self.perf_type == PERF_TYPE_SOFTWARE
    }

    /// The encoding as libpfm prints it: `type 4 config 0x1c2`, with
    /// `config1` and `config2` where set.
    pub fn encoding(&self) -> String {
        let mut text = format!("type {} config {:#x}", self.perf_type, self.config);
        if self.config1 != 0 {
            text.push_str(&format!(" config1 {:#x}", self.config1));
        }
        if self.config2 != 0 {
            text.push_str(&format!(" config2 {:#x}", self.config2));
        }
        text
    }
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
