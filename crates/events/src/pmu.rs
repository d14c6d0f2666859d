//! The kernel's dynamic PMUs, as /sys/bus/event_source/devices describes
//! them: each PMU's perf type, the bit ranges of its format fields
//! (`format/umask` holds `config:8-15`), and its named events
//! (`events/mem-loads` holds `event=0xcd,umask=0x1,ldlat=3`), and the
//! encoding of `field=value` terms into the config words through those
//! ranges: what perf does for `pmu/event=..,umask=../`, and libpfm for its
//! `perf_event` PMU.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::Path;
use std::sync::{Mutex, OnceLock};

use crate::error::EventsError;
use crate::suggest::closest;

/// Where the kernel lists its PMUs.
pub const SYSFS_PMUS: &str = "/sys/bus/event_source/devices";

/// The files beside an event that describe it rather than name another.
const ALIAS_METADATA: &[&str] = &["scale", "unit", "snapshot", "per-pkg"];

/// Every PMU of a machine (or of a copy of its sysfs tree), by name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pmus {
    pmus: Vec<Pmu>,
}

/// One PMU: its perf type, its format fields and its named events.
#[derive(Clone, Debug, PartialEq)]
pub struct Pmu {
    pub name: String,
    /// `perf_event_attr.type` for its events.
    pub perf_type: u32,
    /// Its format fields, by name.
    pub formats: Vec<FormatField>,
    /// Its named events, by name.
    pub aliases: Vec<PmuAlias>,
    /// Whether it counts for the whole machine one CPU at a time (it has a
    /// `cpumask`: uncore, RAPL), rather than for a task.
    pub system_wide: bool,
}

/// Which `perf_event_attr` word a format field lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ConfigWord {
    Config,
    Config1,
    Config2,
    /// `config3` (Linux 6.3): no event this profiler opens sets it.
    Config3,
}

impl ConfigWord {
    fn parse(name: &str) -> Option<ConfigWord> {
        match name {
            "config" => Some(ConfigWord::Config),
            "config1" => Some(ConfigWord::Config1),
            "config2" => Some(ConfigWord::Config2),
            "config3" => Some(ConfigWord::Config3),
            _ => None,
        }
    }

    fn index(self) -> Option<usize> {
        match self {
            ConfigWord::Config => Some(0),
            ConfigWord::Config1 => Some(1),
            ConfigWord::Config2 => Some(2),
            ConfigWord::Config3 => None,
        }
    }
}

/// A format field: the bits of one config word its value is spread over,
/// lowest value bit into the lowest field bit (`config:0-7,32-35` takes a
/// 12-bit value, its low 8 bits at 0-7 and its high 4 at 32-35).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatField {
    pub name: String,
    pub word: ConfigWord,
    /// The field's bits within `word`.
    pub mask: u64,
    /// The range as sysfs states it (`config:0-7,32-35`).
    pub spec: String,
}

impl FormatField {
    /// Parses a format file's content, such as `config:0-7,32-35`,
    /// `config1:0-63` or `config:18`.
    pub fn parse(name: &str, spec: &str) -> Option<FormatField> {
        let spec = spec.trim();
        let (word, ranges) = spec.split_once(':')?;
        let word = ConfigWord::parse(word.trim())?;
        let mut mask = 0u64;
        for range in ranges.split(',') {
            let range = range.trim();
            let (low, high) = match range.split_once('-') {
                Some((low, high)) => (low.trim().parse::<u32>().ok()?, high.trim().parse().ok()?),
                None => {
                    let bit = range.parse::<u32>().ok()?;
                    (bit, bit)
                }
            };
            if low > high || high > 63 {
                return None;
            }
            mask |= (u64::MAX >> (63 - high)) & (u64::MAX << low);
        }
        Some(FormatField {
            name: name.to_owned(),
            word,
            mask,
            spec: spec.to_owned(),
        })
    }

    /// How many bits the field holds.
    pub fn width(&self) -> u32 {
        self.mask.count_ones()
    }

    /// The largest value the field holds.
    pub fn max_value(&self) -> u64 {
        match self.width() {
            64 => u64::MAX,
            width => (1u64 << width) - 1,
        }
    }

    /// `value` spread over the field's bits, or `None` when it does not fit.
    pub fn place(&self, value: u64) -> Option<u64> {
        if value > self.max_value() {
            return None;
        }
        let mut placed = 0u64;
        let mut remaining = value;
        for bit in 0..64 {
            if self.mask & (1 << bit) != 0 {
                placed |= (remaining & 1) << bit;
                remaining >>= 1;
            }
        }
        Some(placed)
    }
}

/// A named event of a PMU, as its `events/NAME` file gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PmuAlias {
    pub name: String,
    /// Its terms as written (`event=0xcd,umask=0x1,ldlat=3`).
    pub terms: String,
    /// `NAME.scale`: what one count is worth in `unit`.
    pub scale: Option<String>,
    /// `NAME.unit`: what the scaled count is in (`MiB`, `Joules`).
    pub unit: Option<String>,
}

/// One term of an event: `field=value`, a flag `field` (value 1), or, in a
/// named event, `field=?`: a value the user must give.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Term {
    pub name: String,
    pub value: TermValue,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TermValue {
    /// A bare `field`: 1.
    Flag,
    Number(u64),
    /// `field=?`.
    Required,
}

impl TermValue {
    fn number(self) -> Option<u64> {
        match self {
            TermValue::Flag => Some(1),
            TermValue::Number(value) => Some(value),
            TermValue::Required => None,
        }
    }
}

/// Parses `a=1,b=0x2,c` (and, where `allow_required`, `d=?`). The error is
/// what is wrong, for the caller to place.
pub(crate) fn parse_terms(text: &str, allow_required: bool) -> Result<Vec<Term>, String> {
    let mut terms = Vec::new();
    for part in text.trim().split(',') {
        let part = part.trim();
        if part.is_empty() {
            return Err("an empty term (two commas in a row, or a comma at an end)".to_owned());
        }
        let (name, value) = match part.split_once('=') {
            None => (part, TermValue::Flag),
            Some((name, value)) => {
                let value = value.trim();
                let value = if value == "?" && allow_required {
                    TermValue::Required
                } else {
                    TermValue::Number(parse_number(value).ok_or_else(|| {
                        format!(
                            "'{part}': the value must be a number, decimal or 0x hexadecimal \
                             (e.g. {}=0x1)",
                            name.trim()
                        )
                    })?)
                };
                (name.trim(), value)
            }
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        {
            return Err(format!("'{part}' is not a term (FIELD=VALUE or FIELD)"));
        }
        terms.push(Term {
            name: name.to_owned(),
            value,
        });
    }
    Ok(terms)
}

/// A decimal or `0x` hexadecimal number.
pub(crate) fn parse_number(text: &str) -> Option<u64> {
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) if !hex.is_empty() => u64::from_str_radix(hex, 16).ok(),
        Some(_) => None,
        None if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) => text.parse().ok(),
        None => None,
    }
}

impl Pmus {
    /// This machine's PMUs; none where sysfs cannot be read.
    pub fn system() -> Pmus {
        Pmus::load(Path::new(SYSFS_PMUS)).unwrap_or_default()
    }

    /// The PMUs of a sysfs tree laid out like
    /// /sys/bus/event_source/devices (one directory per PMU). A PMU whose
    /// `type` cannot be read is left out.
    pub fn load(root: &Path) -> io::Result<Pmus> {
        let mut pmus = Vec::new();
        for entry in fs::read_dir(root)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(pmu) = Pmu::load(&name, &entry.path()) {
                pmus.push(pmu);
            }
        }
        pmus.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Pmus { pmus })
    }

    /// Builds a set from PMUs already read.
    pub fn from_pmus(mut pmus: Vec<Pmu>) -> Pmus {
        pmus.sort_by(|a, b| a.name.cmp(&b.name));
        Pmus { pmus }
    }

    /// The PMU called `name`.
    pub fn get(&self, name: &str) -> Option<&Pmu> {
        self.pmus.iter().find(|p| p.name == name)
    }

    /// Every PMU, by name.
    pub fn iter(&self) -> impl Iterator<Item = &Pmu> {
        self.pmus.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.pmus.is_empty()
    }

    /// The PMUs' names, comma-separated.
    pub fn names(&self) -> String {
        self.pmus
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl Pmu {
    /// Reads one PMU's directory.
    fn load(name: &str, dir: &Path) -> Option<Pmu> {
        let perf_type = fs::read_to_string(dir.join("type"))
            .ok()?
            .trim()
            .parse()
            .ok()?;
        let mut formats = Vec::new();
        for (field, content) in read_files(&dir.join("format")) {
            if let Some(format) = FormatField::parse(&field, &content) {
                formats.push(format);
            }
        }
        let files: BTreeMap<String, String> = read_files(&dir.join("events")).into_iter().collect();
        let mut aliases = Vec::new();
        for (file, terms) in &files {
            let metadata = file
                .rsplit_once('.')
                .is_some_and(|(_, suffix)| ALIAS_METADATA.contains(&suffix));
            if metadata {
                continue;
            }
            let meta = |suffix: &str| {
                files
                    .get(&format!("{file}.{suffix}"))
                    .map(|s| s.trim().to_owned())
                    .filter(|s| !s.is_empty())
            };
            aliases.push(PmuAlias {
                name: file.clone(),
                terms: terms.trim().to_owned(),
                scale: meta("scale"),
                unit: meta("unit"),
            });
        }
        Some(Pmu {
            name: name.to_owned(),
            perf_type,
            formats,
            aliases,
            system_wide: dir.join("cpumask").exists(),
        })
    }

    /// The format field called `name`.
    pub fn field(&self, name: &str) -> Option<&FormatField> {
        self.formats.iter().find(|f| f.name == name)
    }

    /// The named event called `name`, in any case, as perf matches them.
    pub fn alias(&self, name: &str) -> Option<&PmuAlias> {
        self.aliases.iter().find(|a| a.name == name).or_else(|| {
            self.aliases
                .iter()
                .find(|a| a.name.eq_ignore_ascii_case(name))
        })
    }

    /// Whether this is the CPU's own performance-monitoring unit (as
    /// opposed to the kernel's software PMUs, or an uncore PMU).
    pub fn is_core(&self) -> bool {
        is_core_pmu(&self.name)
    }

    /// The format fields' names, comma-separated.
    pub fn field_names(&self) -> String {
        self.formats
            .iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Encodes `terms` into (config, config1, config2). Each term sets its
    /// field's bits, a later term overriding an earlier one: a named
    /// event's terms come first, the user's after them. `config`,
    /// `config1` and `config2` set a whole word where no format field has
    /// that name. `event` names the event in errors.
    pub fn encode(&self, event: &str, terms: &[Term]) -> Result<[u64; 3], EventsError> {
        let mut words = [0u64; 3];
        let mut required: Vec<&str> = Vec::new();
        for term in terms {
            required.retain(|name| *name != term.name);
            let Some(value) = term.value.number() else {
                required.push(&term.name);
                continue;
            };
            if let Some(field) = self.field(&term.name) {
                let Some(index) = field.word.index() else {
                    return Err(EventsError::InvalidEvent {
                        event: event.to_owned(),
                        problem: format!(
                            "field '{}' lives in config3 ({}), which this profiler does not set",
                            field.name, field.spec
                        ),
                    });
                };
                let placed = field
                    .place(value)
                    .ok_or_else(|| EventsError::ValueOutOfRange {
                        event: event.to_owned(),
                        field: field.name.clone(),
                        value,
                        bits: field.spec.clone(),
                        max: field.max_value(),
                    })?;
                words[index] = (words[index] & !field.mask) | placed;
                continue;
            }
            match ConfigWord::parse(&term.name).and_then(ConfigWord::index) {
                Some(index) => words[index] = value,
                None => return Err(self.unknown_field(event, &term.name, false)),
            }
        }
        if let Some(field) = required.first() {
            return Err(EventsError::MissingValue {
                event: event.to_owned(),
                field: (*field).to_owned(),
            });
        }
        Ok(words)
    }

    /// The error for a term this PMU has no field (nor, where `bare`, no
    /// event) by the name of `term`.
    pub(crate) fn unknown_field(&self, event: &str, term: &str, bare: bool) -> EventsError {
        let candidates = self.formats.iter().map(|f| f.name.as_str()).chain(
            self.aliases
                .iter()
                .filter(|_| bare)
                .map(|a| a.name.as_str()),
        );
        let known = match (self.formats.is_empty(), bare && !self.aliases.is_empty()) {
            (true, false) => "it has no format fields; set the words with config=, config1= or \
                              config2="
                .to_owned(),
            (true, true) => format!(
                "it has no format fields; its events are listed by `profiler list` \
                 ({}/NAME/)",
                self.name
            ),
            (false, false) => format!("its fields are {}", self.field_names()),
            (false, true) => format!(
                "its fields are {}; its events are listed by `profiler list`",
                self.field_names()
            ),
        };
        let suggestion = closest(term, candidates)
            .map(|s| format!(" (did you mean '{s}'?)"))
            .unwrap_or_default();
        EventsError::UnknownPmuField {
            event: event.to_owned(),
            pmu: self.name.clone(),
            term: format!(
                "{} '{term}'{suggestion}",
                if bare { "event or field" } else { "field" }
            ),
            known,
        }
    }

    /// `unit` for the event's count: an alias's `.unit`, or `events`.
    pub(crate) fn unit_of(alias: Option<&PmuAlias>) -> &'static str {
        alias
            .and_then(|a| a.unit.as_deref())
            .map_or("events", intern)
    }
}

/// Whether a PMU called `name` is a CPU's own performance-monitoring unit.
pub fn is_core_pmu(name: &str) -> bool {
    name == "cpu" || name.starts_with("cpu_") || name.starts_with("armv")
}

/// The files of a directory and their contents, by name; none if it
/// cannot be read.
fn read_files(dir: &Path) -> Vec<(String, String)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<(String, String)> = entries
        .flatten()
        .filter_map(|entry| {
            let content = fs::read_to_string(entry.path()).ok()?;
            Some((entry.file_name().to_string_lossy().into_owned(), content))
        })
        .collect();
    files.sort();
    files
}

/// A unit name that lives as long as the program: units come from sysfs,
/// and an event's `unit` is `&'static str`. Each distinct name is kept once.
fn intern(unit: &str) -> &'static str {
    static UNITS: OnceLock<Mutex<Vec<&'static str>>> = OnceLock::new();
    let mut units = UNITS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(known) = units.iter().find(|u| **u == unit) {
        return known;
    }
    let leaked: &'static str = Box::leak(unit.to_owned().into_boxed_str());
    units.push(leaked);
    leaked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(machine: &str) -> Pmus {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/sysfs")
            .join(machine);
        Pmus::load(&root).unwrap()
    }

    #[test]
    fn format_ranges_parse_as_the_kernel_writes_them() {
        let field = FormatField::parse("event", "config:0-7\n").unwrap();
        assert_eq!(
            (field.word, field.mask, field.width()),
            (ConfigWord::Config, 0xff, 8)
        );
        let field = FormatField::parse("edge", "config:18").unwrap();
        assert_eq!((field.mask, field.max_value()), (1 << 18, 1));
        let field = FormatField::parse("offcore_rsp", "config1:0-63").unwrap();
        assert_eq!(
            (field.word, field.mask, field.max_value()),
            (ConfigWord::Config1, u64::MAX, u64::MAX)
        );
        let field = FormatField::parse("event", "config:0-7,32-35").unwrap();
        assert_eq!(field.mask, 0xf_0000_00ff);
        assert_eq!(field.max_value(), 0xfff);
        assert_eq!(field.place(0x1ab), Some(0x1_0000_00ab));
        assert_eq!(field.place(0x1000), None);
        let field = FormatField::parse("event", "config:0-7,32-35,59-60").unwrap();
        assert_eq!(field.place(0x3fff), Some((3 << 59) | (0xf << 32) | 0xff));
        assert!(FormatField::parse("x", "config:7-0").is_none());
        assert!(FormatField::parse("x", "config:0-64").is_none());
        assert!(FormatField::parse("x", "attr:0-7").is_none());
    }

    #[test]
    fn terms_parse_with_flags_numbers_and_required_values() {
        let terms = parse_terms("event=0xcd,umask=0x1,ldlat=3,edge", false).unwrap();
        assert_eq!(terms.len(), 4);
        assert_eq!(terms[0].value, TermValue::Number(0xcd));
        assert_eq!(terms[2].value, TermValue::Number(3));
        assert_eq!(terms[3].value, TermValue::Flag);
        assert_eq!(
            parse_terms("core=?", true).unwrap()[0].value,
            TermValue::Required
        );
        assert!(parse_terms("core=?", false).is_err());
        assert!(parse_terms("a=1,,b", false).is_err());
        assert!(
            parse_terms("umask=zz", false)
                .unwrap_err()
                .contains("number")
        );
        assert_eq!(parse_number("0x"), None);
        assert_eq!(parse_number("42"), Some(42));
        assert_eq!(parse_number("0X2A"), Some(42));
    }

    #[test]
    fn the_intel_tree_loads_with_types_formats_aliases_scales_and_units() {
        let pmus = fixture("intel-skylake-sp");
        let cpu = pmus.get("cpu").unwrap();
        assert_eq!(cpu.perf_type, 4);
        assert!(cpu.is_core() && !cpu.system_wide);
        assert_eq!(
            cpu.field_names(),
            "any, cmask, edge, event, frontend, in_tx, in_tx_cp, inv, ldlat, offcore_rsp, pc, umask"
        );
        assert_eq!(
            cpu.alias("mem-loads").unwrap().terms,
            "event=0xcd,umask=0x1,ldlat=3"
        );
        assert_eq!(cpu.alias("MEM-LOADS").unwrap().name, "mem-loads");
        let slots = cpu.alias("topdown-total-slots").unwrap();
        assert_eq!(slots.scale.as_deref(), Some("2"));
        assert!(cpu.alias("topdown-total-slots.scale").is_none());
        let imc = pmus.get("uncore_imc_0").unwrap();
        assert!(imc.system_wide && !imc.is_core());
        let read = imc.alias("cas_count_read").unwrap();
        assert_eq!(
            (read.scale.as_deref(), read.unit.as_deref()),
            (Some("6.103515625e-5"), Some("MiB"))
        );
        let msr = pmus.get("msr").unwrap();
        assert!(msr.alias("cpu_thermal_margin.snapshot").is_none());
        assert_eq!(
            msr.alias("cpu_thermal_margin").unwrap().unit.as_deref(),
            Some("C")
        );
        assert_eq!(pmus.get("software").unwrap().perf_type, 1);
        assert!(pmus.get("software").unwrap().formats.is_empty());
        assert!(pmus.get("nosuch").is_none());
    }

    #[test]
    fn encoding_clears_and_sets_each_field_in_order() {
        let pmus = fixture("intel-skylake-sp");
        let cpu = pmus.get("cpu").unwrap();
        let terms = parse_terms("event=0xcd,umask=0x1,ldlat=3,ldlat=30", false).unwrap();
        assert_eq!(cpu.encode("e", &terms).unwrap(), [0x01cd, 30, 0]);
        let terms = parse_terms("config=0x1234,config2=7", false).unwrap();
        assert_eq!(cpu.encode("e", &terms).unwrap(), [0x1234, 0, 7]);
        let error = cpu
            .encode("e", &parse_terms("umask=0x100", false).unwrap())
            .unwrap_err()
            .to_string();
        assert!(error.contains("umask=0x100"), "{error}");
        assert!(error.contains("config:8-15"), "{error}");
        assert!(error.contains("0xff"), "{error}");
    }

    #[test]
    fn units_are_interned_once() {
        assert!(std::ptr::eq(intern("Joules"), intern("Joules")));
        assert_eq!(Pmu::unit_of(None), "events");
    }
}
