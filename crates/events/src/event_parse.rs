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
mod tests;
