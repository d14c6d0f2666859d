//! Invalid histogram settings, each said with the valid choices.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HistogramError {
    #[error(
        "scale {scale} is not valid: use 131072 (one bucket per byte of text), or 2 to 65536 \
         (65536: one bucket per 2 bytes, 32768: per 4 bytes, 2: one bucket for everything)"
    )]
    InvalidScale { scale: u64 },

    #[error("bucket width {bits} is not valid: use 16, 32 or 64 bits")]
    InvalidWidth { bits: u64 },

    #[error("the region at {offset:#x} is empty: give it at least one byte")]
    EmptyRegion { offset: u64 },

    #[error(
        "the region at {offset:#x} would need {buckets} buckets, more than the {limit} allowed; \
         use a smaller scale (fewer buckets per byte) or a smaller region"
    )]
    TooManyBuckets {
        offset: u64,
        buckets: u64,
        limit: u64,
    },

    #[error(
        "the region at {offset:#x} has {buckets} {bits}-bit buckets, but {given} {given_bits}-bit \
         counts were given for it"
    )]
    CountsMismatch {
        offset: u64,
        buckets: usize,
        bits: u32,
        given: usize,
        given_bits: u32,
    },
}
