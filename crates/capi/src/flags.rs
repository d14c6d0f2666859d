//! The `flags` argument: PAPI's bits, checked and turned into the
//! histogram's settings.

use std::ffi::c_int;

use profiler_histogram::{BucketWidth, Flags};

use crate::errors::CallError;
use crate::types::*;

const KNOWN: c_int = PROF_RANDOM
    | PROF_WEIGHTED
    | PROF_COMPRESS
    | PROF_BUCKET_16
    | PROF_BUCKET_32
    | PROF_BUCKET_64
    | PROF_FORCE_SW;

/// What the flags ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ProfFlags {
    pub(crate) width: BucketWidth,
    pub(crate) flags: Flags,
    /// `PROF_FORCE_SW`: sample cpu-clock when the event cannot be sampled.
    pub(crate) software_fallback: bool,
}

/// Reads `bits`: at most one bucket width (16 bits when none is given),
/// and no bits the header does not define.
pub(crate) fn parse_flags(bits: c_int) -> Result<ProfFlags, CallError> {
    let unknown = bits & !KNOWN;
    if unknown != 0 {
        return Err(CallError::invalid(format!(
            "flags {bits:#x}: {unknown:#x} is no flag of libprofiler's; combine PROF_RANDOM, \
             PROF_WEIGHTED, PROF_COMPRESS, PROF_FORCE_SW and one of PROF_BUCKET_16, \
             PROF_BUCKET_32 and PROF_BUCKET_64"
        )));
    }
    let widths: Vec<(&str, BucketWidth)> = [
        (PROF_BUCKET_16, "PROF_BUCKET_16", BucketWidth::Bits16),
        (PROF_BUCKET_32, "PROF_BUCKET_32", BucketWidth::Bits32),
        (PROF_BUCKET_64, "PROF_BUCKET_64", BucketWidth::Bits64),
    ]
    .into_iter()
    .filter(|&(bit, _, _)| bits & bit != 0)
    .map(|(_, name, width)| (name, width))
    .collect();
    let width = match widths[..] {
        [] => BucketWidth::Bits16,
        [(_, width)] => width,
        _ => {
            let names: Vec<&str> = widths.iter().map(|&(name, _)| name).collect();
            return Err(CallError::invalid(format!(
                "flags {bits:#x} ask for {} bucket widths at once; give one",
                names.join(" and ")
            )));
        }
    };
    Ok(ProfFlags {
        width,
        flags: Flags {
            random: bits & PROF_RANDOM != 0,
            compress: bits & PROF_COMPRESS != 0,
            weighted: bits & PROF_WEIGHTED != 0,
        },
        software_fallback: bits & PROF_FORCE_SW != 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn papis_flags_and_the_default_width() {
        let posix = parse_flags(PROF_POSIX).unwrap();
        assert_eq!(posix.width, BucketWidth::Bits16);
        assert_eq!(posix.flags, Flags::default());
        assert!(!posix.software_fallback);
        let all = parse_flags(
            PROF_RANDOM | PROF_WEIGHTED | PROF_COMPRESS | PROF_BUCKET_64 | PROF_FORCE_SW,
        )
        .unwrap();
        assert_eq!(all.width, BucketWidth::Bits64);
        assert!(all.flags.random && all.flags.weighted && all.flags.compress);
        assert!(all.software_fallback);
        assert_eq!(
            parse_flags(PROF_BUCKET_32).unwrap().width,
            BucketWidth::Bits32
        );
    }

    #[test]
    fn two_widths_or_unknown_bits_are_refused() {
        let error = parse_flags(PROF_BUCKET_16 | PROF_BUCKET_32).unwrap_err();
        assert_eq!(error.code, PROF_EINVAL);
        assert!(
            error
                .message
                .contains("PROF_BUCKET_16 and PROF_BUCKET_32 bucket widths"),
            "{error:?}"
        );
        // PAPI's DATA_EAR: Itanium's, not ours.
        let error = parse_flags(0x80 | PROF_BUCKET_16).unwrap_err();
        assert!(
            error.message.starts_with("flags 0x88: 0x80 is no flag"),
            "{error:?}"
        );
        assert_eq!(parse_flags(-1).unwrap_err().code, PROF_EINVAL);
    }
}
