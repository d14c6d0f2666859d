//! Every event a machine knows, grouped as `perf list` groups them
//! (hardware, software, hardware cache, kernel PMU events, and the raw
//! syntax lines), each with its encoding, or why it has none. Whether the
//! kernel will count one is for the sampler to learn, by opening it.

use crate::cache_events;
use crate::error::{EventsError, missing_value};
use crate::event::{EventSpec, KNOWN_EVENTS};
use crate::event_parse::pmu_event;
use crate::pmu::Pmus;

/// The groups of `perf list`, in its order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ListGroup {
    Hardware,
    Software,
    HardwareCache,
    KernelPmu,
    RawDescriptor,
}

impl ListGroup {
    /// The group's name, as `perf list` prints it.
    pub fn label(self) -> &'static str {
        match self {
            ListGroup::Hardware => "Hardware event",
            ListGroup::Software => "Software event",
            ListGroup::HardwareCache => "Hardware cache event",
            ListGroup::KernelPmu => "Kernel PMU event",
            ListGroup::RawDescriptor => "Raw event descriptor",
        }
    }
}

/// Whether an event can be counted on this machine now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Usability {
    Usable,
    /// Why not, and what to change where there is something.
    Unusable(String),
    /// Not opened: a syntax line (nothing to open), or an event with an
    /// encoding that has not been tried yet.
    NotProbed,
}

/// One line of the list.
#[derive(Clone, Debug, PartialEq)]
pub struct ListedEvent {
    /// What `-e` takes (`cycles`, `L1-dcache-load-misses`, `cpu/mem-loads/`,
    /// `rNNNN`).
    pub name: String,
    /// Other names for the same event (`cpu-cycles` for `cycles`).
    pub aliases: Vec<String>,
    pub group: ListGroup,
    /// The encoding, where the name resolves to one.
    pub spec: Option<EventSpec>,
    pub usability: Usability,
    /// A PMU event's `.scale`: what one count is worth in `unit`.
    pub scale: Option<String>,
    /// A PMU event's `.unit`.
    pub unit: Option<String>,
    /// For a syntax line: what it takes.
    pub description: Option<String>,
    /// Whether its PMU counts whole CPUs for the whole system (uncore,
    /// RAPL), not one process.
    pub system_wide: bool,
}

impl ListedEvent {
    fn new(name: String, group: ListGroup) -> ListedEvent {
        ListedEvent {
            name,
            aliases: Vec::new(),
            group,
            spec: None,
            usability: Usability::NotProbed,
            scale: None,
            unit: None,
            description: None,
            system_wide: false,
        }
    }

    /// An event with its encoding, not probed yet; or why it has none.
    fn resolved(
        name: String,
        group: ListGroup,
        spec: Result<EventSpec, EventsError>,
    ) -> ListedEvent {
        let mut listed = ListedEvent::new(name, group);
        match spec {
            Ok(spec) => listed.spec = Some(spec),
            Err(EventsError::MissingValue { field, .. }) => {
                listed.usability =
                    Usability::Unusable(format!("needs {} in its terms", missing_value(&field)));
            }
            Err(error) => listed.usability = Usability::Unusable(error.to_string()),
        }
        listed
    }
}

/// Every event `pmus` and the kernel's tables define, in `perf list`'s
/// groups; those with an encoding are [`Usability::NotProbed`].
pub fn list_events(pmus: &Pmus) -> Vec<ListedEvent> {
    let mut events = Vec::new();
    for group in [ListGroup::Hardware, ListGroup::Software] {
        let mut known: Vec<_> = KNOWN_EVENTS
            .iter()
            .filter(|e| e.is_hardware() == (group == ListGroup::Hardware))
            .collect();
        known.sort_by_key(|e| e.name);
        for event in known {
            let mut listed = ListedEvent::resolved(
                event.name.to_owned(),
                group,
                Ok(EventSpec::user_only(event)),
            );
            listed.aliases = event.aliases.iter().map(|a| (*a).to_owned()).collect();
            events.push(listed);
        }
    }
    for cache in cache_events::all() {
        let spec = EventSpec::parse_with(&cache.name, pmus);
        events.push(ListedEvent::resolved(
            cache.name,
            ListGroup::HardwareCache,
            spec,
        ));
    }
    for pmu in pmus.iter() {
        for alias in &pmu.aliases {
            let name = format!("{}/{}/", pmu.name, alias.name);
            let spec = pmu_event(&name, &pmu.name, &alias.name, pmus);
            let mut listed = ListedEvent::resolved(name, ListGroup::KernelPmu, spec);
            listed.system_wide = pmu.system_wide;
            listed.scale = alias.scale.clone();
            listed.unit = alias.unit.clone();
            events.push(listed);
        }
    }
    let mut raw = ListedEvent::new("rNNNN".to_owned(), ListGroup::RawDescriptor);
    raw.description = Some(
        "a raw event code for the CPU's PMU, in hexadecimal (PERF_TYPE_RAW), e.g. r01c2".to_owned(),
    );
    events.push(raw);
    for pmu in pmus.iter().filter(|p| !p.formats.is_empty()) {
        let mut line = ListedEvent::new(
            format!("{}/FIELD=VALUE,.../", pmu.name),
            ListGroup::RawDescriptor,
        );
        let fields = pmu
            .formats
            .iter()
            .map(|f| format!("{} ({})", f.name, f.spec))
            .collect::<Vec<_>>()
            .join(", ");
        line.description = Some(format!("type {}; fields: {fields}", pmu.perf_type));
        events.push(line);
    }
    events
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn intel() -> Pmus {
        Pmus::load(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/sysfs/intel-skylake-sp"),
        )
        .unwrap()
    }

    fn find<'a>(events: &'a [ListedEvent], name: &str) -> &'a ListedEvent {
        events
            .iter()
            .find(|e| e.name == name)
            .unwrap_or_else(|| panic!("{name} is not listed"))
    }

    #[test]
    fn every_group_is_listed_in_perf_order() {
        let events = list_events(&intel());
        let mut groups: Vec<ListGroup> = events.iter().map(|e| e.group).collect();
        groups.dedup();
        assert_eq!(
            groups,
            [
                ListGroup::Hardware,
                ListGroup::Software,
                ListGroup::HardwareCache,
                ListGroup::KernelPmu,
                ListGroup::RawDescriptor
            ]
        );
        assert_eq!(find(&events, "cycles").aliases, ["cpu-cycles"]);
        assert_eq!(
            events
                .iter()
                .filter(|e| e.group == ListGroup::HardwareCache)
                .count(),
            32
        );
        let loads = find(&events, "cpu/mem-loads/");
        assert_eq!(loads.spec.as_ref().unwrap().config1, 3);
        assert_eq!(loads.usability, Usability::NotProbed);
        assert!(!loads.system_wide);
        let read = find(&events, "uncore_imc_0/cas_count_read/");
        assert!(read.system_wide);
        assert_eq!(read.unit.as_deref(), Some("MiB"));
        assert_eq!(read.scale.as_deref(), Some("6.103515625e-5"));
        let raw = find(&events, "cpu/FIELD=VALUE,.../");
        assert_eq!(raw.usability, Usability::NotProbed);
        assert!(
            raw.description
                .as_ref()
                .unwrap()
                .contains("umask (config:8-15)")
        );
        assert!(
            events
                .iter()
                .all(|e| e.group != ListGroup::RawDescriptor || e.spec.is_none())
        );
    }

    #[test]
    fn a_required_term_is_the_reason_an_event_is_unusable() {
        let pmus = Pmus::load(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/sysfs/power9-lpar"),
        )
        .unwrap();
        let events = list_events(&pmus);
        let chip = find(&events, "hv_24x7/PM_PB_CYC__PHYS_CHIP/");
        assert_eq!(
            chip.usability,
            Usability::Unusable("needs a value for core (core=...) in its terms".to_owned())
        );
    }
}
