//! Events as perf and libpfm spell them, turned into what
//! `perf_event_open` takes: the first step of a recording or a count,
//! before anything is opened.
//!
//! It owns the string -> encoding step of the data flow: perf's `-e`
//! syntax ([`parse_events`]: generic, cache, raw and sysfs PMU events,
//! groups, modifiers), the PMU formats and named events the kernel
//! describes in /sys/bus/event_source/devices ([`Pmus`]), the hardware
//! cache events, and the list `profiler list` prints ([`list_events`]).
//! Each event becomes an [`EventSpec`]: type, config, config1, config2,
//! and where and how precisely to count. Nothing here talks to the kernel:
//! the sampler opens the counters, and the tests read copies of sysfs
//! trees (fixtures/sysfs).
//!
//! ```
//! use profiler_events::{Pmus, parse_events};
//!
//! // No PMU directories are needed for the generic events.
//! let groups = parse_events("{cycles,instructions}:u,cpu-clock", &Pmus::default(), false)?;
//! assert_eq!(groups.len(), 2);
//! assert!(groups[0].braced);
//! let clock = &groups[1].events[0];
//! assert_eq!((clock.perf_type, clock.config), (1, 0));
//! assert_eq!(clock.encoding(), "type 1 config 0x0");
//! # Ok::<(), profiler_events::EventsError>(())
//! ```
//!
//! Beside the encodings, the plain facts the sampler finds about events and
//! hands to the views: what counters counted ([`StatCounts`]), what the
//! kernel's rules let this process do ([`Privileges`]), and what `doctor`
//! found ([`Checkup`]).
//!
//! Every error is one line that names the event and the part at fault,
//! with what to write instead.

mod cache_events;
mod checkup;
mod counts;
mod cpu_list;
mod error;
mod event;
mod event_parse;
mod list;
mod pmu;
mod privileges;
mod suggest;

pub use cache_events::PERF_TYPE_HW_CACHE;
pub use checkup::{Checkup, EventCheck, EventSource};
pub use counts::{Count, EventCount, EventValue, StatCounts, ThreadCount};
pub use cpu_list::{format_cpu_list, parse_cpu_list};
pub use error::EventsError;
pub use event::{
    CPU_CLOCK, CYCLES, EventSpec, KNOWN_EVENTS, KnownEvent, PERF_TYPE_HARDWARE, PERF_TYPE_RAW,
    PERF_TYPE_SOFTWARE,
};
pub use event_parse::{EventGroup, own_modifiers, parse_events, split_event_list};
pub use list::{ListGroup, ListedEvent, Usability, list_events};
pub use pmu::{FormatField, Pmu, PmuAlias, Pmus, SYSFS_PMUS, is_core_pmu};
pub use privileges::{
    CAP_IPC_LOCK, CAP_PERFMON, CAP_SYS_ADMIN, Privileges, effective_capabilities, grant_perfmon,
    paranoid_meaning,
};
