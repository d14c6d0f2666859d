//! Event names to `perf_event_open` encodings: the one place the C library
//! reaches the event parser.

use std::ffi::c_int;
use std::sync::OnceLock;

use profiler_events::{EventSpec, EventsError, Pmus};

use crate::types::ProfEncoding;

/// This machine's PMUs, read from sysfs once.
pub(crate) fn system_pmus() -> &'static Pmus {
    static PMUS: OnceLock<Pmus> = OnceLock::new();
    PMUS.get_or_init(Pmus::system)
}

/// `event` as `-e` takes it, encoded against `pmus`. Without modifiers
/// only user space is counted, as `profiler record` counts it.
pub(crate) fn encode(event: &str, pmus: &Pmus) -> Result<ProfEncoding, EventsError> {
    let spec = EventSpec::parse_with(event, pmus)?;
    Ok(ProfEncoding {
        type_: spec.perf_type,
        config: spec.config,
        config1: spec.config1,
        config2: spec.config2,
        exclude_user: c_int::from(!spec.user),
        exclude_kernel: c_int::from(!spec.kernel),
        exclude_hv: c_int::from(!spec.hypervisor),
        precise_ip: c_int::from(spec.precise),
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use profiler_events::list_events;

    use super::*;

    fn fixture(machine: &str) -> Pmus {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/sysfs");
        Pmus::load(&root.join(machine)).unwrap()
    }

    /// Every event `profiler list` shows with an encoding is encoded alike,
    /// on each machine kept in fixtures/sysfs.
    #[test]
    fn every_listed_event_of_the_fixture_machines_is_encoded_as_listed() {
        for machine in ["amd-zen2", "intel-skylake-sp", "power9-lpar"] {
            let pmus = fixture(machine);
            let mut compared = 0;
            for listed in list_events(&pmus) {
                let Some(spec) = listed.spec else { continue };
                let encoding = encode(&listed.name, &pmus)
                    .unwrap_or_else(|error| panic!("{machine}: {}: {error}", listed.name));
                assert_eq!(
                    (
                        encoding.type_,
                        encoding.config,
                        encoding.config1,
                        encoding.config2
                    ),
                    (spec.perf_type, spec.config, spec.config1, spec.config2),
                    "{machine}: {}",
                    listed.name
                );
                compared += 1;
            }
            assert!(compared >= 40, "{machine}: only {compared} events encoded");
        }
    }

    #[test]
    fn modifiers_become_the_exclude_bits_and_precision() {
        let pmus = fixture("intel-skylake-sp");
        let plain = encode("cycles", &pmus).unwrap();
        assert_eq!(
            (plain.type_, plain.config),
            (0, 0),
            "PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES"
        );
        assert_eq!(
            (plain.exclude_user, plain.exclude_kernel, plain.exclude_hv),
            (0, 1, 1)
        );
        let precise = encode("cpu/event=0xc0,umask=0x1/ukpp", &pmus).unwrap();
        assert_eq!((precise.type_, precise.config), (4, 0x1c0));
        assert_eq!((precise.exclude_user, precise.exclude_kernel), (0, 0));
        assert_eq!(precise.precise_ip, 2);
        let error = encode("cpu/evnt=1/", &pmus).unwrap_err().to_string();
        assert!(error.contains("did you mean 'event'"), "{error}");
    }
}
