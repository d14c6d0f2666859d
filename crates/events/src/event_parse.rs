//! The `-e` syntax, as perf and libpfm spell events: one argument holds
//! events separated by commas, and groups `{e1,e2}[:MODIFIERS]`; an event is
//!
//! - a generic hardware or software event (`cycles`, `cpu-clock`, `faults`),
//! - a hardware cache event (`L1-dcache-load-misses`, `LLC-loads`),
//! - a raw code (`r01c2`: hexadecimal, for the CPU's PMU),
//! - a sysfs PMU event, by its fields (`cpu/event=0x2e,umask=0x41,cmask=2,inv/`)
//!   or by name with more terms (`cpu/mem-loads,ldlat=30/`), or a PMU's
//!   named event alone (`mem-loads`),
//!
//! each with modifiers after a colon (or, for a PMU event, after its closing
//! slash): `u` user space, `k` kernel, `h` hypervisor, `p`/`pp`/`ppp`
//! precision. Without `u`, `k` or `h` only user space is counted.
//!
//! Each error is one line naming the part at fault and what to do instead,
//! in libpfm's spirit.

use crate::cache_events::{self, CacheLookup, PERF_TYPE_HW_CACHE};
use crate::error::EventsError;
use crate::event::{EventSpec, KNOWN_EVENTS, PERF_TYPE_RAW};
use crate::pmu::{Pmu, PmuAlias, Pmus, Term, TermValue, parse_terms};
use crate::suggest::closest;

/// The most `p`s: `precise_ip` 3, zero skid.
const MAX_PRECISE: u8 = 3;

/// Events scheduled together: a braced group `{e1,e2}`, or a lone event
/// (a group of one, not braced).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventGroup {
    pub events: Vec<EventSpec>,
    pub braced: bool,
}

/// Parses one `-e` argument: events and groups separated by top-level
/// commas (commas inside `pmu/.../` or `{...}` do not split). A group's
/// modifiers apply to each member that has none of its own. An event whose
/// modifiers (or its group's) choose no privilege level (`u`, `k`, `h`)
/// counts user space, and the kernel too with `kernel_by_default`.
pub fn parse_events(
    text: &str,
    pmus: &Pmus,
    kernel_by_default: bool,
) -> Result<Vec<EventGroup>, EventsError> {
    let syntax = |problem: String| EventsError::EventSyntax {
        text: text.to_owned(),
        problem,
    };
    let mut groups = Vec::new();
    for piece in split_top_level(text).map_err(syntax)? {
        let Some(inner) = piece.strip_prefix('{') else {
            groups.push(EventGroup {
                events: vec![parse_event(piece, pmus, None, kernel_by_default)?],
                braced: false,
            });
            continue;
        };
        let close = inner
            .rfind('}')
            .ok_or_else(|| syntax(format!("the group '{piece}' has no closing '}}'")))?;
        let (members, after) = (&inner[..close], &inner[close + 1..]);
        let modifiers = match after {
            "" => None,
            after => Some(after.strip_prefix(':').ok_or_else(|| {
                syntax(format!(
                    "'{after}' after the group '{piece}': a group's modifiers follow a colon, \
                     e.g. {{cycles,instructions}}:u"
                ))
            })?),
        };
        if modifiers == Some("") {
            return Err(syntax(format!(
                "the group '{piece}' has a colon but no modifiers after it"
            )));
        }
        if members.trim().is_empty() {
            return Err(syntax(format!(
                "the group '{piece}' is empty; list its events inside the braces, e.g. \
                 {{cycles,instructions}}"
            )));
        }
        let events = split_top_level(members)
            .map_err(syntax)?
            .into_iter()
            .map(|member| parse_event(member, pmus, modifiers, kernel_by_default))
            .collect::<Result<Vec<_>, _>>()?;
        groups.push(EventGroup {
            events,
            braced: true,
        });
    }
    Ok(groups)
}

impl EventSpec {
    /// Parses one event in `-e` syntax (see [`parse_events`]), against
    /// this machine's PMUs. Without modifiers only user space is counted.
    pub fn parse(text: &str) -> Result<EventSpec, EventsError> {
        EventSpec::parse_with(text, &Pmus::system())
    }

    /// Parses one event against `pmus`.
    pub fn parse_with(text: &str, pmus: &Pmus) -> Result<EventSpec, EventsError> {
        let mut events: Vec<EventSpec> = parse_events(text, pmus, false)?
            .into_iter()
            .flat_map(|group| group.events)
            .collect();
        match events.len() {
            1 => Ok(events.remove(0)),
            count => Err(EventsError::EventSyntax {
                text: text.to_owned(),
                problem: format!("expected one event, found {count}"),
            }),
        }
    }
}

/// Splits at the commas outside braces and outside a PMU event's slashes;
/// the error is what is malformed.
fn split_top_level(text: &str) -> Result<Vec<&str>, String> {
    if text.trim().is_empty() {
        return Err("no event given; e.g. -e cpu-clock".to_owned());
    }
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut in_braces = false;
    let mut in_pmu = false;
    for (index, c) in text.char_indices() {
        match c {
            '/' => in_pmu = !in_pmu,
            '{' | '}' if in_pmu => {
                return Err(format!(
                    "'{c}' inside the terms of '{}'",
                    text[start..].trim()
                ));
            }
            '{' if in_braces => return Err("groups cannot be nested".to_owned()),
            '{' => {
                if !text[start..index].trim().is_empty() {
                    return Err(format!(
                        "'{}' before '{{': a group starts with its brace, e.g. \
                         {{cycles,instructions}}",
                        text[start..index].trim()
                    ));
                }
                in_braces = true;
            }
            '}' if !in_braces => {
                return Err(format!(
                    "unbalanced braces: '}}' without a '{{' in '{}'",
                    text[start..].trim()
                ));
            }
            '}' => in_braces = false,
            ',' if !in_braces && !in_pmu => {
                pieces.push(text[start..index].trim());
                start = index + 1;
            }
            _ => {}
        }
    }
    if in_pmu {
        return Err(format!(
            "unbalanced '/' in '{}': a PMU event is PMU/TERMS/, e.g. cpu/event=0x3c/",
            text[start..].trim()
        ));
    }
    if in_braces {
        return Err(format!(
            "unbalanced braces: '{{' without a '}}' in '{}'",
            text[start..].trim()
        ));
    }
    pieces.push(text[start..].trim());
    if pieces.iter().any(|p| p.is_empty()) {
        return Err("an empty event (two commas in a row, or a comma at an end)".to_owned());
    }
    Ok(pieces)
}

/// Splits at the commas outside `/.../` and `{...}`, as written: nothing
/// trimmed, nothing checked (groups may nest, events may be empty), for
/// the callers that read a list without parsing it.
pub fn split_event_list(list: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut in_term, mut start) = (0usize, false, 0);
    for (index, c) in list.char_indices() {
        match c {
            '/' => in_term = !in_term,
            '{' if !in_term => depth += 1,
            '}' if !in_term => depth = depth.saturating_sub(1),
            ',' if !in_term && depth == 0 => {
                items.push(&list[start..index]);
                start = index + 1;
            }
            _ => {}
        }
    }
    items.push(&list[start..]);
    items
}

/// Parses one event with its modifiers; `group_modifiers` apply when it has
/// none of its own.
fn parse_event(
    text: &str,
    pmus: &Pmus,
    group_modifiers: Option<&str>,
    kernel_by_default: bool,
) -> Result<EventSpec, EventsError> {
    let syntax = |problem: String| EventsError::EventSyntax {
        text: text.to_owned(),
        problem,
    };
    let (resolved, own) = match text.find('/') {
        Some(slash) => {
            let rest = &text[slash + 1..];
            let close = rest
                .find('/')
                .ok_or_else(|| syntax("a PMU event is PMU/TERMS/, with a closing '/'".into()))?;
            let after = &rest[close + 1..];
            if after.contains('/') {
                return Err(syntax(format!(
                    "'{after}' after the PMU event: only modifiers may follow its closing '/'"
                )));
            }
            let body = &text[..slash + 1 + close + 1];
            let own = own_modifiers(text);
            (pmu_event(body, &text[..slash], &rest[..close], pmus), own)
        }
        None => {
            let name = text.split_once(':').map_or(text, |(name, _)| name);
            let own = own_modifiers(text);
            if name.is_empty() {
                return Err(syntax("an event name is missing before ':'".into()));
            }
            let resolved = match named_event(name, pmus) {
                // `sched:sched_switch` is not `sched` with odd modifiers.
                Err(EventsError::UnknownEvent { .. })
                    if own.is_some_and(|m| m.chars().any(|c| !"ukhp".contains(c))) =>
                {
                    Err(unknown_event(text, pmus))
                }
                other => other,
            };
            (resolved, own)
        }
    };
    let mut spec = resolved?;
    if own == Some("") {
        return Err(syntax("a colon with no modifiers after it".into()));
    }
    let modifiers = match (own, group_modifiers) {
        (Some(modifiers), _) => {
            apply_modifiers(&mut spec, modifiers, text)?;
            modifiers
        }
        (None, Some(modifiers)) => {
            apply_modifiers(&mut spec, modifiers, &format!("{text}:{modifiers}"))?;
            modifiers
        }
        (None, None) => "",
    };
    if !modifiers.contains(['u', 'k', 'h']) {
        spec.kernel = kernel_by_default;
    }
    Ok(spec)
}

/// The modifiers an event's text gives itself: what follows its colon, or
/// a PMU event's closing slash (`cycles:u` and `cpu/event=0x3c/k` give `u`
/// and `k`, `cpu/event=0x3c/:k` gives `k`); `None` without. A colon with
/// nothing after it gives `Some("")`.
pub fn own_modifiers(event: &str) -> Option<&str> {
    match event.rfind('/') {
        Some(slash) => match &event[slash + 1..] {
            "" => None,
            after => Some(after.strip_prefix(':').unwrap_or(after)),
        },
        None => event.split_once(':').map(|(_, modifiers)| modifiers),
    }
}

/// Applies `u`, `k`, `h` and `p`s; `shown` is the event as the error names it.
fn apply_modifiers(spec: &mut EventSpec, modifiers: &str, shown: &str) -> Result<(), EventsError> {
    let (mut user, mut kernel, mut hypervisor, mut precise) = (false, false, false, 0u8);
    for modifier in modifiers.chars() {
        match modifier {
            'u' => user = true,
            'k' => kernel = true,
            'h' => hypervisor = true,
            'p' => precise = precise.saturating_add(1),
            _ => {
                return Err(EventsError::UnsupportedModifier {
                    event: shown.to_owned(),
                    modifier,
                });
            }
        }
    }
    if precise > MAX_PRECISE {
        return Err(EventsError::InvalidEvent {
            event: shown.to_owned(),
            problem: "precision goes up to :ppp (zero skid); use :p, :pp or :ppp".to_owned(),
        });
    }
    if precise > 0 && spec.is_software() {
        return Err(EventsError::InvalidEvent {
            event: shown.to_owned(),
            problem: format!(
                ":p asks the CPU to reduce skid, and software events have none; drop the p \
                 (e.g. {}:u)",
                spec.base
            ),
        });
    }
    if user || kernel || hypervisor {
        spec.user = user;
        spec.kernel = kernel;
        spec.hypervisor = hypervisor;
    }
    spec.precise = precise;
    Ok(())
}

/// An event given by name alone: generic, raw, cache, or a PMU's named
/// event.
fn named_event(name: &str, pmus: &Pmus) -> Result<EventSpec, EventsError> {
    if let Some(event) = KNOWN_EVENTS
        .iter()
        .find(|e| e.name == name || e.aliases.contains(&name))
    {
        return Ok(EventSpec::user_only(event));
    }
    if let Some(hex) = name.strip_prefix('r')
        && !hex.is_empty()
        && hex.bytes().all(|b| b.is_ascii_hexdigit())
    {
        let config = u64::from_str_radix(hex, 16).map_err(|_| EventsError::InvalidEvent {
            event: name.to_owned(),
            problem: "a raw code is at most 16 hexadecimal digits (the 64 bits of config)"
                .to_owned(),
        })?;
        return Ok(hardware_spec(name.to_owned(), PERF_TYPE_RAW, config));
    }
    match cache_events::lookup(name) {
        CacheLookup::Found(event) => {
            return Ok(hardware_spec(event.name, PERF_TYPE_HW_CACHE, event.config));
        }
        CacheLookup::Invalid(problem) => {
            return Err(EventsError::InvalidEvent {
                event: name.to_owned(),
                problem,
            });
        }
        CacheLookup::NotACacheEvent => {}
    }
    let owners: Vec<&Pmu> = pmus.iter().filter(|p| p.alias(name).is_some()).collect();
    match owners.as_slice() {
        [] => Err(unknown_event(name, pmus)),
        [pmu] => {
            let alias = pmu.alias(name).map_or(name, |a| a.name.as_str());
            let body = format!("{}/{alias}/", pmu.name);
            pmu_event(&body, &pmu.name, alias, pmus)
        }
        several => Err(EventsError::InvalidEvent {
            event: name.to_owned(),
            problem: format!(
                "several PMUs name an event so ({}); say which, e.g. {}/{name}/",
                several
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                several[0].name
            ),
        }),
    }
}

/// A hardware event counting user space only.
fn hardware_spec(base: String, perf_type: u32, config: u64) -> EventSpec {
    EventSpec {
        base,
        perf_type,
        config,
        config1: 0,
        config2: 0,
        unit: "events",
        hardware: true,
        user: true,
        kernel: false,
        hypervisor: false,
        precise: 0,
    }
}

/// `PMU/TERMS/` (`body`, without modifiers): the terms encoded through the
/// PMU's format fields, a named event's terms first.
pub(crate) fn pmu_event(
    body: &str,
    pmu_name: &str,
    terms: &str,
    pmus: &Pmus,
) -> Result<EventSpec, EventsError> {
    let pmu = pmus.get(pmu_name).ok_or_else(|| EventsError::UnknownPmu {
        event: body.to_owned(),
        pmu: pmu_name.to_owned(),
        known: match pmus.is_empty() {
            true => format!("none are listed in {}", crate::pmu::SYSFS_PMUS),
            false => format!("this machine has {}", pmus.names()),
        },
    })?;
    if terms.trim().is_empty() {
        return Err(EventsError::EventSyntax {
            text: body.to_owned(),
            problem: format!(
                "no terms between the slashes; e.g. {pmu_name}/{}/",
                match pmu.formats.first() {
                    Some(field) => format!("{}=0x1", field.name),
                    None => "config=0x1".to_owned(),
                }
            ),
        });
    }
    let user_terms = parse_terms(terms, false).map_err(|problem| EventsError::EventSyntax {
        text: body.to_owned(),
        problem,
    })?;
    let (alias, extra) = split_alias(body, pmu, user_terms)?;
    let mut all = match alias {
        Some(alias) => {
            parse_terms(&alias.terms, true).map_err(|problem| EventsError::InvalidEvent {
                event: body.to_owned(),
                problem: format!(
                    "the kernel's definition of '{}' ({}) cannot be read: {problem}",
                    alias.name, alias.terms
                ),
            })?
        }
        None => Vec::new(),
    };
    all.extend(extra);
    let [config, config1, config2] = pmu.encode(body, &all)?;
    Ok(EventSpec {
        base: body.to_owned(),
        perf_type: pmu.perf_type,
        config,
        config1,
        config2,
        unit: Pmu::unit_of(alias),
        hardware: pmu.is_core(),
        user: true,
        kernel: false,
        hypervisor: false,
        precise: 0,
    })
}

/// The PMU's named event among `terms` (a flag that is no format field),
/// and the other terms.
fn split_alias<'p>(
    body: &str,
    pmu: &'p Pmu,
    terms: Vec<Term>,
) -> Result<(Option<&'p PmuAlias>, Vec<Term>), EventsError> {
    let mut alias = None;
    let mut rest = Vec::new();
    for term in terms {
        let is_word = matches!(term.name.as_str(), "config" | "config1" | "config2");
        if term.value != TermValue::Flag || pmu.field(&term.name).is_some() || is_word {
            rest.push(term);
            continue;
        }
        match (pmu.alias(&term.name), alias) {
            (Some(found), None) => alias = Some(found),
            (Some(found), Some(first)) => {
                return Err(EventsError::InvalidEvent {
                    event: body.to_owned(),
                    problem: format!(
                        "'{}' and '{}' are both named events; give one per event, and \
                         separate events with commas outside the slashes",
                        first.name, found.name
                    ),
                });
            }
            (None, _) => return Err(pmu.unknown_field(body, &term.name, true)),
        }
    }
    Ok((alias, rest))
}

/// The error for a name no table knows, with the closest known name.
fn unknown_event(name: &str, pmus: &Pmus) -> EventsError {
    let generic = KNOWN_EVENTS
        .iter()
        .flat_map(|e| std::iter::once(e.name).chain(e.aliases.iter().copied()));
    let cache = cache_events::names();
    let aliases = pmus
        .iter()
        .flat_map(|p| p.aliases.iter().map(|a| a.name.as_str()));
    let candidates = generic
        .chain(cache.iter().map(String::as_str))
        .chain(aliases);
    EventsError::UnknownEvent {
        name: name.to_owned(),
        suggestion: closest(name, candidates).map(str::to_owned),
        known: KNOWN_EVENTS
            .iter()
            .map(|e| e.name)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

#[cfg(test)]
mod tests {
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
        let expected: Vec<(String, bool)> =
            expected.iter().map(|(n, k)| (n.to_string(), *k)).collect();
        assert_eq!(kernel, expected);
        let user_only = parse_events("cpu-clock", &pmus, false).unwrap();
        assert!(!user_only[0].events[0].kernel);
    }
}
