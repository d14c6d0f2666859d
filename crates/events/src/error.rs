//! What can be wrong with an event as written, each said with what to do
//! instead: the event (or the whole `-e` text), and the part at fault.

#[derive(Debug, thiserror::Error)]
pub enum EventsError {
    #[error("'{text}' is not a list of CPUs; give numbers and ranges, e.g. 0,2-3")]
    BadCpuList { text: String },

    #[error(
        "unknown event '{name}'{}; known events: {known}, and the cache, raw and PMU events \
         `profiler list` shows",
        suggestion.as_ref().map(|s| format!(" (did you mean '{s}'?)")).unwrap_or_default()
    )]
    UnknownEvent {
        name: String,
        suggestion: Option<String>,
        known: String,
    },

    #[error(
        "event '{event}': modifier '{modifier}' is not supported; use u (user space), k (kernel), \
         h (hypervisor) and p, pp or ppp (precision), e.g. :uk or :upp"
    )]
    UnsupportedModifier { event: String, modifier: char },

    #[error("event '{event}': {problem}")]
    InvalidEvent { event: String, problem: String },

    #[error("cannot parse events '{text}': {problem}")]
    EventSyntax { text: String, problem: String },

    #[error("event '{event}': unknown PMU '{pmu}'; {known}")]
    UnknownPmu {
        event: String,
        pmu: String,
        known: String,
    },

    /// `term` says what was asked for, with a suggestion where one is near:
    /// `field 'evnt' (did you mean 'event'?)`.
    #[error("event '{event}': PMU '{pmu}' has no {term}; {known}")]
    UnknownPmuField {
        event: String,
        pmu: String,
        term: String,
        known: String,
    },

    #[error(
        "event '{event}': {field}={value:#x} does not fit: {field} is {} ({bits}), so its \
         largest value is {max:#x}",
        match max.count_ones() { 1 => "1 bit".to_owned(), n => format!("{n} bits") }
    )]
    ValueOutOfRange {
        event: String,
        field: String,
        value: u64,
        bits: String,
        max: u64,
    },

    #[error(
        "event '{event}' needs {}; add it to the event's terms, e.g. {},{field}=VALUE/",
        missing_value(field),
        event.trim_end_matches('/')
    )]
    MissingValue { event: String, field: String },
}

/// What a missing `?` term asks for: a unit mask, or a value.
pub(crate) fn missing_value(field: &str) -> String {
    match field {
        "umask" => "a unit mask (umask=...)".to_owned(),
        field => format!("a value for {field} ({field}=...)"),
    }
}
