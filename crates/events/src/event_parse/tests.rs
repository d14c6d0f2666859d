//! The event grammar against sysfs trees kept in fixtures/.

use std::path::{Path, PathBuf};

use super::*;

fn fixture(machine: &str) -> Pmus {
    Pmus::load(&fixture_root().join(machine)).unwrap()
}

fn fixture_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/sysfs")
}

fn intel() -> Pmus {
    fixture("intel-skylake-sp")
}

fn one(text: &str, pmus: &Pmus) -> EventSpec {
    EventSpec::parse_with(text, pmus).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn error(text: &str, pmus: &Pmus) -> String {
    let error = parse_events(text, pmus, false)
        .err()
        .unwrap_or_else(|| panic!("{text} parsed"))
        .to_string();
    assert!(!error.contains('\n'), "{error}");
    error
}

fn encoding(spec: &EventSpec) -> (u32, u64, u64, u64) {
    (spec.perf_type, spec.config, spec.config1, spec.config2)
}

#[test]
fn pmu_fields_encode_through_the_format_bit_ranges() {
    let pmus = intel();
    let spec = one("cpu/event=0x3c,umask=0x0/", &pmus);
    assert_eq!(encoding(&spec), (4, 0x3c, 0, 0));
    assert_eq!(spec.base, "cpu/event=0x3c,umask=0x0/");
    assert!(spec.hardware && spec.user && !spec.kernel);
    // event 0x2e at 0-7, umask 0x41 at 8-15, edge bit 18, inv bit 23,
    // cmask 2 at 24-31.
    let spec = one("cpu/event=0x2e,umask=0x41,cmask=2,inv,edge/", &pmus);
    assert_eq!(spec.config, 0x2e | 0x41 << 8 | 1 << 18 | 1 << 23 | 2 << 24);
    assert_eq!(spec.config, 0x0284_412e);
    // Decimal values; in_tx at 32; offcore_rsp fills config1.
    let spec = one(
        "cpu/event=183,umask=1,in_tx=1,offcore_rsp=0x3fbfc00001/",
        &pmus,
    );
    assert_eq!(encoding(&spec), (4, 0x1_0000_01b7, 0x3f_bfc0_0001, 0));
    let spec = one("cpu/event=0xc6,umask=0x1,frontend=0x400406/", &pmus);
    assert_eq!(encoding(&spec), (4, 0x01c6, 0x40_0406, 0));
    let spec = one("cpu/config=0x1234,config1=5/", &pmus);
    assert_eq!(encoding(&spec), (4, 0x1234, 5, 0));
}

#[test]
fn named_pmu_events_expand_and_take_more_terms() {
    let pmus = intel();
    let spec = one("cpu/mem-loads/", &pmus);
    assert_eq!(encoding(&spec), (4, 0x01cd, 3, 0));
    let spec = one("cpu/mem-loads,ldlat=30/", &pmus);
    assert_eq!(encoding(&spec), (4, 0x01cd, 30, 0));
    assert_eq!(spec.base, "cpu/mem-loads,ldlat=30/");
    assert_eq!(encoding(&one("cpu/mem-stores/", &pmus)), (4, 0x82d0, 0, 0));
    assert_eq!(encoding(&one("cpu/cpu-cycles/", &pmus)), (4, 0x3c, 0, 0));
    assert_eq!(
        encoding(&one("cpu/cache-misses/", &pmus)),
        (4, 0x412e, 0, 0)
    );
    assert_eq!(encoding(&one("cpu/ref-cycles/", &pmus)), (4, 0x0300, 0, 0));
    // any=1 at 21; cmask=1 at 24.
    assert_eq!(
        encoding(&one("cpu/topdown-recovery-bubbles/", &pmus)),
        (4, 0x0d | 0x3 << 8 | 1 << 21 | 1 << 24, 0, 0)
    );
    assert_eq!(
        encoding(&one("cpu/cycles-ct/", &pmus)),
        (4, 0x3c | 1 << 32 | 1 << 33, 0, 0)
    );
    // A named event alone finds its PMU; the user's term overrides.
    let spec = one("mem-loads:pp", &pmus);
    assert_eq!((spec.base.as_str(), spec.precise), ("cpu/mem-loads/", 2));
    assert_eq!(
        encoding(&one("cpu/cpu-cycles,umask=0x1/", &pmus)),
        (4, 0x013c, 0, 0)
    );
}

#[test]
fn uncore_scales_and_units_reach_the_event() {
    let pmus = intel();
    let spec = one("uncore_imc_0/cas_count_read/", &pmus);
    assert_eq!(
        (spec.perf_type, spec.config, spec.unit),
        (10, 0x0304, "MiB")
    );
    assert!(!spec.hardware);
    let spec = one("power/energy-pkg/", &pmus);
    assert_eq!((spec.perf_type, spec.config, spec.unit), (9, 2, "Joules"));
    let spec = one("uncore_imc_0/event=0x04,umask=0x03,thresh=1/", &pmus);
    assert_eq!(spec.config, 0x0100_0304);
}

#[test]
fn amd_split_ranges_carry_the_high_event_bits() {
    let pmus = fixture("amd-zen2");
    // Event 0x1c7: 0xc7 at 0-7, 0x1 at 32-35.
    let spec = one("cpu/event=0x1c7,umask=0x2/", &pmus);
    assert_eq!(encoding(&spec), (4, 0x1_0000_02c7, 0, 0));
    let spec = one("cpu/event=0xfff/", &pmus);
    assert_eq!(spec.config, 0xf_0000_00ff);
    let error = error("cpu/event=0x1000/", &pmus);
    assert!(error.contains("config:0-7,32-35"), "{error}");
    assert!(error.contains("0xfff"), "{error}");
    assert_eq!(
        encoding(&one("cpu/stalled-cycles-frontend/", &pmus)),
        (4, 0x0287, 0, 0)
    );
    // The data fabric's event spans three ranges.
    let spec = one("amd_df/event=0x3fff,umask=0x38/", &pmus);
    assert_eq!(spec.config, (3 << 59) | (0xf << 32) | 0x38ff);
}

#[test]
fn cache_raw_generic_and_software_events() {
    let pmus = intel();
    let spec = one("L1-dcache-load-misses", &pmus);
    assert_eq!(encoding(&spec), (3, 0x10000, 0, 0));
    assert!(spec.hardware);
    assert_eq!(encoding(&one("LLC-loads", &pmus)), (3, 2, 0, 0));
    assert_eq!(
        encoding(&one("dTLB-load-misses", &pmus)),
        (3, 0x10003, 0, 0)
    );
    assert_eq!(encoding(&one("branch-loads", &pmus)), (3, 5, 0, 0));
    assert_eq!(
        encoding(&one("branch-load-misses", &pmus)),
        (3, 0x10005, 0, 0)
    );
    let spec = one("r01c2", &pmus);
    assert_eq!(encoding(&spec), (4, 0x1c2, 0, 0));
    assert_eq!(spec.base, "r01c2");
    assert_eq!(encoding(&one("rc0:u", &pmus)), (4, 0xc0, 0, 0));
    assert_eq!(encoding(&one("cycles", &pmus)), (0, 0, 0, 0));
    assert_eq!(encoding(&one("branch-misses", &pmus)), (0, 5, 0, 0));
    for (name, config) in [
        ("cpu-clock", 0),
        ("task-clock", 1),
        ("page-faults", 2),
        ("context-switches", 3),
        ("cpu-migrations", 4),
        ("minor-faults", 5),
        ("major-faults", 6),
        ("alignment-faults", 7),
        ("emulation-faults", 8),
    ] {
        let spec = one(name, &pmus);
        assert_eq!(encoding(&spec), (1, config, 0, 0), "{name}");
        assert!(!spec.hardware && spec.is_software());
    }
    // The software PMU's own syntax reaches the same counter.
    assert_eq!(encoding(&one("software/config=2/", &pmus)), (1, 2, 0, 0));
}

#[test]
fn modifiers_combine_and_groups_lend_theirs() {
    let pmus = intel();
    let spec = one("cycles:upp", &pmus);
    assert!(spec.user && !spec.kernel && !spec.hypervisor);
    assert_eq!(spec.precise, 2);
    assert_eq!(spec.name(), "cycles:pp");
    let spec = one("cycles:kh", &pmus);
    assert!(!spec.user && spec.kernel && spec.hypervisor);
    let spec = one("cycles:p", &pmus);
    assert!(spec.user && !spec.kernel && spec.precise == 1);
    let spec = one("cpu/event=0x3c/ku", &pmus);
    assert!(spec.user && spec.kernel);
    assert_eq!(spec.name(), "cpu/event=0x3c/:uk");
    assert!(one("cpu/event=0x3c/:k", &pmus).kernel);
    let groups = parse_events(
        "{cycles,instructions:k,page-faults}:u,cpu-clock",
        &pmus,
        false,
    )
    .unwrap();
    assert_eq!(groups.len(), 2);
    assert!(groups[0].braced && !groups[1].braced);
    let members = &groups[0].events;
    assert_eq!(members.len(), 3);
    assert!(members[0].user && !members[0].kernel);
    assert!(!members[1].user && members[1].kernel);
    assert_eq!(groups[1].events[0].base, "cpu-clock");
    let groups = parse_events("{cycles,instructions}:ppp", &pmus, false).unwrap();
    assert!(groups[0].events.iter().all(|e| e.precise == 3));
}

#[test]
fn commas_split_only_at_the_top_level() {
    let pmus = intel();
    let groups = parse_events(
        "cpu-clock, cpu/event=0x2e,umask=0x41/,{cycles,cpu/mem-loads,ldlat=30/}:u,faults",
        &pmus,
        false,
    )
    .unwrap();
    let names: Vec<Vec<String>> = groups
        .iter()
        .map(|g| g.events.iter().map(EventSpec::name).collect())
        .collect();
    assert_eq!(
        names,
        [
            vec!["cpu-clock".to_owned()],
            vec!["cpu/event=0x2e,umask=0x41/".to_owned()],
            vec!["cycles".to_owned(), "cpu/mem-loads,ldlat=30/".to_owned()],
            vec!["page-faults".to_owned()],
        ]
    );
}

#[test]
fn unknown_events_suggest_and_unknown_pmus_list_the_pmus() {
    let pmus = intel();
    let e = error("cpu-clok", &pmus);
    assert!(
        e.contains("unknown event 'cpu-clok'") && e.contains("did you mean 'cpu-clock'"),
        "{e}"
    );
    let e = error("L1-dcache-lod-misses", &pmus);
    assert!(e.contains("did you mean 'L1-dcache-load-misses'"), "{e}");
    let e = error("mem-lods", &pmus);
    assert!(e.contains("did you mean 'mem-loads'"), "{e}");
    let e = error("sched:sched_switch", &pmus);
    assert!(e.contains("unknown event 'sched:sched_switch'"), "{e}");
    let e = error("nosuch/event=1/", &pmus);
    assert!(
        e.contains("unknown PMU 'nosuch'") && e.contains("nosuch/event=1/"),
        "{e}"
    );
    assert!(
        e.contains("breakpoint, cpu, kprobe, msr, power, software"),
        "{e}"
    );
    let e = error("cpu/evnt=1/", &pmus);
    assert!(
        e.contains("has no field 'evnt'") && e.contains("did you mean 'event'"),
        "{e}"
    );
    assert!(e.contains("its fields are any, cmask, edge, event"), "{e}");
    let e = error("cpu/nosuchevent/", &pmus);
    assert!(e.contains("no event or field 'nosuchevent'"), "{e}");
    assert!(e.contains("profiler list"), "{e}");
    let e = error("iTLB-stores", &pmus);
    assert!(e.contains("iTLB-stores") && e.contains("only loads"), "{e}");
}

#[test]
fn values_beyond_a_field_name_its_bits_and_largest_value() {
    let pmus = intel();
    let e = error("cpu/event=0x3c,umask=0x100/", &pmus);
    assert_eq!(
        e,
        "event 'cpu/event=0x3c,umask=0x100/': umask=0x100 does not fit: umask is 8 bits \
         (config:8-15), so its largest value is 0xff"
    );
    let e = error("cpu/edge=2/", &pmus);
    assert!(
        e.contains("edge is 1 bit (config:18)") && e.contains("0x1"),
        "{e}"
    );
    let e = error("r10000000000000000", &pmus);
    assert!(e.contains("16 hexadecimal digits"), "{e}");
}

#[test]
fn required_terms_name_what_is_missing() {
    let pmus = fixture("power9-lpar");
    let e = error("hv_24x7/PM_PB_CYC__PHYS_CHIP/", &pmus);
    assert_eq!(
        e,
        "event 'hv_24x7/PM_PB_CYC__PHYS_CHIP/' needs a value for core (core=...); add it \
         to the event's terms, e.g. hv_24x7/PM_PB_CYC__PHYS_CHIP,core=VALUE/"
    );
    let spec = one("hv_24x7/PM_PB_CYC__PHYS_CHIP,core=2/", &pmus);
    assert_eq!(spec.config, 0x1 | 2 << 16 | 0x10 << 32);
    assert_eq!(spec.config1, 0);
    let e = error(
        "hv_24x7/HPM_0THRD_NON_IDLE_CCYC__VCPU_HOME_CORE,vcpu=1/",
        &pmus,
    );
    assert!(e.contains("a value for lpar (lpar=...)"), "{e}");
    // A unit mask the user must give, in a tree written here.
    let root = std::env::temp_dir().join(format!("profiler-pmu-umask-{}", std::process::id()));
    let pmu = root.join("uncore_test");
    std::fs::create_dir_all(pmu.join("format")).unwrap();
    std::fs::create_dir_all(pmu.join("events")).unwrap();
    std::fs::write(pmu.join("type"), "12\n").unwrap();
    std::fs::write(pmu.join("format/event"), "config:0-7\n").unwrap();
    std::fs::write(pmu.join("format/umask"), "config:8-15\n").unwrap();
    std::fs::write(pmu.join("events/requests"), "event=0x2e,umask=?\n").unwrap();
    let pmus = Pmus::load(&root).unwrap();
    std::fs::remove_dir_all(&root).unwrap();
    let e = error("uncore_test/requests/", &pmus);
    assert!(
        e.starts_with("event 'uncore_test/requests/' needs a unit mask (umask=...)"),
        "{e}"
    );
    assert_eq!(
        one("uncore_test/requests,umask=0x41/", &pmus).config,
        0x412e
    );
}

#[test]
fn bad_modifiers_are_refused_with_the_reason() {
    let pmus = intel();
    let e = error("cycles:z", &pmus);
    assert!(e.contains("modifier 'z' is not supported"), "{e}");
    let e = error("cpu-clock:p", &pmus);
    assert!(
        e.contains("'cpu-clock:p'") && e.contains("software events have none"),
        "{e}"
    );
    let e = error("{cpu-clock,cycles}:p", &pmus);
    assert!(e.contains("'cpu-clock:p'"), "{e}");
    let e = error("cycles:pppp", &pmus);
    assert!(e.contains("up to :ppp"), "{e}");
    let e = error("cycles:", &pmus);
    assert!(e.contains("no modifiers"), "{e}");
}

#[test]
fn malformed_syntax_says_what_is_unbalanced_or_empty() {
    let pmus = intel();
    for (text, expected) in [
        ("", "no event given"),
        ("{cycles,instructions", "'{' without a '}'"),
        ("cycles}", "'}' without a '{'"),
        ("{}", "is empty"),
        ("{ }:u", "is empty"),
        ("cpu/event=0x3c", "unbalanced '/'"),
        ("cpu/event=0x3c/u/", "unbalanced '/'"),
        ("cpu//", "no terms between the slashes"),
        ("cycles,,instructions", "an empty event"),
        ("cycles,", "an empty event"),
        ("{cycles,{instructions}}", "cannot be nested"),
        ("{cycles}x", "after the group"),
        ("cpu/event=0x3c/k/event=1/", "only modifiers may follow"),
        ("cpu/event=zz/", "must be a number"),
        ("cpu/mem-loads,mem-stores/", "both named events"),
    ] {
        let e = error(text, &pmus);
        assert!(e.contains(expected), "{text}: {e}");
    }
}

#[test]
fn lists_split_at_commas_outside_terms_and_groups() {
    assert_eq!(split_event_list("a,b:u,c"), ["a", "b:u", "c"]);
    assert_eq!(
        split_event_list("cpu/event=0x3c,umask=0x1/u,task-clock"),
        ["cpu/event=0x3c,umask=0x1/u", "task-clock"]
    );
    assert_eq!(split_event_list("{a,b}:u,c"), ["{a,b}:u", "c"]);
    assert_eq!(split_event_list("a,,b"), ["a", "", "b"]);
}

#[test]
fn modifiers_are_told_from_names() {
    assert!(own_modifiers("cycles:u").is_some());
    assert!(own_modifiers("cpu/event=0x3c/u").is_some());
    assert!(own_modifiers("cpu/event=0x3c/").is_none());
    assert!(own_modifiers("page-faults").is_none());
    assert_eq!(own_modifiers("cpu/event=0x3c,umask=0x1/:uk"), Some("uk"));
    assert_eq!(own_modifiers("cycles:"), Some(""));
}

#[test]
fn the_kernel_by_default_goes_to_events_that_choose_no_privilege_level() {
    let pmus = intel();
    let kernel: Vec<(String, bool)> = parse_events(
        "cpu-clock,task-clock:u,cycles:pp,{cycles,instructions:k}:u,{page-faults,cs}",
        &pmus,
        true,
    )
    .unwrap()
    .into_iter()
    .flat_map(|group| group.events)
    .map(|spec| (spec.base.clone(), spec.kernel))
    .collect();
    let expected = [
        ("cpu-clock", true),
        ("task-clock", false),
        ("cycles", true),
        ("cycles", false),
        ("instructions", true),
        ("page-faults", true),
        ("context-switches", true),
    ];
    let expected: Vec<(String, bool)> = expected.iter().map(|(n, k)| (n.to_string(), *k)).collect();
    assert_eq!(kernel, expected);
    let user_only = parse_events("cpu-clock", &pmus, false).unwrap();
    assert!(!user_only[0].events[0].kernel);
}
