//! The event-syntax target: strings as `-e` takes them, parsed against no
//! PMUs and against the sysfs trees of fixtures/sysfs; the same text also
//! as a CPU list and as a PMU format field, as sysfs spells them.

use std::sync::OnceLock;

use profiler_events::{
    EventSpec, FormatField, Pmus, own_modifiers, parse_cpu_list, parse_events, split_event_list,
};

use crate::target::{Scratch, Target, repository};

pub(crate) const TARGET: Target = Target {
    name: "events",
    // Event strings, and the files of fixtures/sysfs (format fields, named
    // events), which end in a newline.
    accepts: |bytes| {
        let text = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        !text.is_empty() && text.len() <= 256 && text.iter().all(|b| b.is_ascii_graphic())
    },
    seeds,
    dictionary: &[
        b"{",
        b"}",
        b",",
        b":",
        b"/",
        b"=",
        b"@",
        b"cpu/",
        b"config=",
        b"config1=",
        b"umask=",
        b"event=",
        b"period=",
        b"freq=",
        b"name=",
        b"0x",
        b"ffffffffffffffff",
        b":u",
        b":k",
        b":ppp",
        b":S",
        b"r",
        b"-",
        b"L1-dcache-load-misses",
        b"cycles",
        b"instructions",
        b"cpu-clock",
        b"uncore_imc_0/",
        b"cas_count_read",
        b"?",
        b"18446744073709551616",
    ],
    mend: None,
    restructure: None,
    run,
};

fn seeds() -> Vec<Vec<u8>> {
    [
        "cycles",
        "cpu-clock,task-clock:u",
        "{cycles,instructions}:u,cpu-clock",
        "{cycles,cache-misses}:S",
        "r003c",
        "r01c2:ppp",
        "cpu/event=0x3c,umask=0x01,period=100000/u",
        "cpu/config=0xff,config1=3,name=mine/",
        "cpu/mem-loads,ldlat=30/P",
        "uncore_imc_0/cas_count_read/",
        "msr/tsc/",
        "power/energy-pkg/",
        "L1-dcache-load-misses",
        "LLC-prefetches:k",
        "dTLB-loads,iTLB-load-misses",
        "instructions:G",
        "0-3,8,10-11",
        "config:0-7,32-35",
    ]
    .map(|s| s.as_bytes().to_vec())
    .to_vec()
}

/// The PMUs of the fixture machines, and none.
fn pmus() -> &'static [Pmus] {
    static PMUS: OnceLock<Vec<Pmus>> = OnceLock::new();
    PMUS.get_or_init(|| {
        let root = repository().join("fixtures/sysfs");
        let mut all = vec![Pmus::default()];
        for machine in ["intel-skylake-sp", "amd-zen2", "power9-lpar"] {
            all.extend(Pmus::load(&root.join(machine)).ok());
        }
        all
    })
}

fn run(input: &[u8], _: &Scratch) {
    let raw = String::from_utf8_lossy(input);
    let text = raw.trim_end_matches('\n');
    for pmus in pmus() {
        for kernel_by_default in [false, true] {
            let _ = parse_events(text, pmus, kernel_by_default);
        }
        let _ = EventSpec::parse_with(text, pmus);
    }
    let _ = split_event_list(text);
    let _ = own_modifiers(text);
    let _ = parse_cpu_list(text);
    if let Some(field) = FormatField::parse("field", &raw) {
        for value in [0, 1, u64::MAX] {
            let _ = field.place(value);
        }
        let _ = field.max_value();
    }
}
