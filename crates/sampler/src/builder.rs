//! The counter builder every open of an event starts from: an
//! [`EventSpec`]'s encoding and where it counts, as perf-event2 takes them.

use perf_event::events::Event;
use perf_event::{Builder, ReadFormat};
use perf_event_open_sys::bindings::perf_event_attr;
use profiler_events::EventSpec;

/// The builder for `spec`: its encoding and where it counts (user space,
/// kernel, hypervisor); disabled, reading its enabled and running times,
/// and bound to no task or CPU yet, with the precision (`precise_ip`) its
/// `p`s ask for.
pub(crate) fn counter_builder(spec: &EventSpec) -> Builder<'static> {
    let mut builder = Builder::new(Encoding(spec));
    builder
        .exclude_user(!spec.user)
        .exclude_kernel(!spec.kernel)
        .exclude_hv(!spec.hypervisor)
        .read_format(ReadFormat::TOTAL_TIME_ENABLED | ReadFormat::TOTAL_TIME_RUNNING)
        .enabled(false);
    if spec.precise > 0 {
        builder.attrs_mut().set_precise_ip(u64::from(spec.precise));
    }
    builder
}

/// An event's encoding, as perf-event2 takes it.
struct Encoding<'a>(&'a EventSpec);

impl Event for Encoding<'_> {
    fn update_attrs(self, attr: &mut perf_event_attr) {
        attr.type_ = self.0.perf_type;
        attr.config = self.0.config;
        attr.__bindgen_anon_3.config1 = self.0.config1;
        attr.__bindgen_anon_4.config2 = self.0.config2;
    }
}
