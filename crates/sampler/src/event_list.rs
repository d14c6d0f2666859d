//! Every event this machine knows, grouped as `perf list` groups them
//! (hardware, software, hardware cache, kernel PMU events, and the raw
//! syntax lines), each probed: opened for a moment as a counter on this
//! process, user space only, then closed, and said usable or not and why.

use crate::cache_events;
use crate::error::{SamplerError, missing_value};
use crate::event::{EventSpec, KNOWN_EVENTS};
use crate::event_parse::pmu_event;
use crate::pmu::Pmus;
use crate::refusal;

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
    /// A syntax line, not an event: nothing to open.
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
        }
    }

    /// Resolves the event and probes it.
    fn resolved(
        name: String,
        group: ListGroup,
        spec: Result<EventSpec, SamplerError>,
        system_wide: bool,
    ) -> ListedEvent {
        let mut listed = ListedEvent::new(name, group);
        match spec {
            Ok(spec) => {
                listed.usability = probe(&spec, system_wide);
                listed.spec = Some(spec);
            }
            Err(SamplerError::MissingValue { field, .. }) => {
                listed.usability =
                    Usability::Unusable(format!("needs {} in its terms", missing_value(&field)));
            }
            Err(error) => listed.usability = Usability::Unusable(error.to_string()),
        }
        listed
    }
}

/// Every event `pmus` and the kernel's tables define, in `perf list`'s
/// groups, each probed on this process.
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
                false,
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
            false,
        ));
    }
    for pmu in pmus.iter() {
        for alias in &pmu.aliases {
            let name = format!("{}/{}/", pmu.name, alias.name);
            let spec = pmu_event(&name, &pmu.name, &alias.name, pmus);
            let mut listed =
                ListedEvent::resolved(name, ListGroup::KernelPmu, spec, pmu.system_wide);
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

/// Opens `spec` as a counter on this process, user space only, and closes
/// it again.
fn probe(spec: &EventSpec, system_wide: bool) -> Usability {
    let mut builder = spec.builder();
    builder
        .exclude_user(false)
        .exclude_kernel(true)
        .exclude_hv(true);
    match refusal::probe(&mut builder, spec) {
        Ok(()) => Usability::Usable,
        Err(_) if system_wide => Usability::Unusable(
            "its PMU counts whole CPUs for the whole system, not one process".to_owned(),
        ),
        Err(error) => Usability::Unusable(refusal::reason(error)),
    }
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
        let read = find(&events, "uncore_imc_0/cas_count_read/");
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
    fn software_events_can_be_counted_here() {
        let events = list_events(&Pmus::default());
        assert_eq!(find(&events, "cpu-clock").usability, Usability::Usable);
        assert_eq!(find(&events, "page-faults").aliases, ["faults"]);
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
