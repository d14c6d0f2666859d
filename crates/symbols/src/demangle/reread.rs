//! C++ names demangled by cpp_demangle.
//!
//! Two kinds of name cpp_demangle misreads are read again, changed so
//! that it reads them right, and the result is kept only where the change
//! shows as expected: a pack of qualified template parameters (`DpRKT_`),
//! whose qualifiers it gives to some elements only, and a constructor
//! template of a class named by abbreviation (`_ZNSsC1I..`), whose first
//! parameter it drops. Whatever it prints is then spelled as libiberty
//! spells it (`respell`).

use cpp_demangle::{DemangleOptions, Symbol};

use super::respell::{respell, split_list};

/// `name` demangled as `c++filt -i` (or, without `full`, `c++filt -i -p`)
/// prints it, as near as cpp_demangle comes; `None` if it cannot read it.
pub(crate) fn demangle(name: &str, full: bool) -> Option<String> {
    if let Some(text) = qualified_pack(name, full) {
        return Some(text);
    }
    if full && let Some(text) = constructor_template(name) {
        return Some(text);
    }
    plain(name, full)
}

/// cpp_demangle's reading of `name`, respelled.
fn plain(name: &str, full: bool) -> Option<String> {
    let symbol = Symbol::new(name).ok()?;
    // libiberty prints a thunk's or a transaction clone's function with its
    // parameters even in `-p` mode, and no local entity's function with a
    // return type.
    let whole = ["_ZTh", "_ZTv", "_ZTc", "_ZGT"]
        .iter()
        .any(|p| name.starts_with(p));
    let mut options = DemangleOptions::new();
    if !full && !whole {
        options = options.no_params().no_return_type();
    }
    if name.starts_with("_ZZ") {
        options = options.no_return_type();
    }
    let text = symbol.demangle_with_options(&options).ok()?;
    Some(respell(&text, name, full))
}

/// `Dp` then qualifiers then `T_` (or `T<n>_`): a pack expansion of a
/// qualified template parameter. Read again with the pack bare, and with a
/// marker in its place; the elements of the bare pack, qualified one by
/// one, replace the marker. Only where no substitution follows, so that
/// what the changes take out of the substitution table is not missed.
fn qualified_pack(name: &str, full: bool) -> Option<String> {
    let at = name.find("Dp")?;
    let rest = &name[at + 2..];
    let quals_len = rest.bytes().take_while(|b| b"RKOPV".contains(b)).count();
    let (quals, param) = rest.split_at(quals_len);
    let digits = param
        .strip_prefix('T')?
        .bytes()
        .take_while(u8::is_ascii_digit)
        .count();
    if quals.is_empty() || param.as_bytes().get(1 + digits) != Some(&b'_') {
        return None;
    }
    let (param, tail) = param.split_at(digits + 2);
    if has_substitution(tail) || tail.contains("Dp") {
        return None;
    }
    let head = &name[..at];
    let bare = plain(&format!("{head}Dp{param}{tail}"), full)?;
    let marked = plain(&format!("{head}u6MARKER{tail}"), full)?;
    let (before, after) = marked.split_once("MARKER")?;
    if after.contains("MARKER") {
        return None;
    }
    let elements = bare.strip_prefix(before)?.strip_suffix(after)?;
    let qualified = split_list(elements)
        .into_iter()
        .map(|element| qualify(element, quals))
        .collect::<Option<Vec<_>>>()?;
    if qualified.is_empty() {
        if let Some(before) = before.strip_suffix(", ") {
            return Some(format!("{before}{after}"));
        }
        if let Some(after) = after.strip_prefix(", ") {
            return Some(format!("{before}{after}"));
        }
    }
    Some(format!("{before}{}{after}", qualified.join(", ")))
}

/// Whether `mangled` holds what may be a substitution (`S_`, `S3_`); a
/// name that merely looks like one counts too.
fn has_substitution(mangled: &str) -> bool {
    let bytes = mangled.as_bytes();
    bytes.iter().enumerate().any(|(i, &b)| {
        let seq = bytes[i + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
            .count();
        b == b'S' && bytes.get(i + 1 + seq) == Some(&b'_')
    })
}

/// `element` with the mangled qualifiers `quals` (outermost first)
/// applied as libiberty prints them, references collapsing; `None` for an
/// array or function type, whose qualifiers go inside.
fn qualify(element: &str, quals: &str) -> Option<String> {
    let mut ty = element.to_owned();
    for qual in quals.bytes().rev() {
        let rvalue = ty.ends_with("&&") || ty.contains("(&&)");
        let lvalue = !rvalue && (ty.ends_with('&') || ty.contains("(&)"));
        let inside = (ty.ends_with(']') || ty.ends_with(')')) && !ty.starts_with("decltype");
        match qual {
            b'R' if rvalue => match ty.strip_suffix("&&") {
                Some(t) => ty = format!("{t}&"),
                None => ty = ty.replacen("(&&)", "(&)", 1),
            },
            b'R' | b'O' | b'K' | b'V' if lvalue || rvalue => {}
            _ if inside => return None,
            b'K' if ty.ends_with(" const") => {}
            b'R' => ty.push('&'),
            b'O' => ty.push_str("&&"),
            b'K' => ty.push_str(" const"),
            b'V' => ty.push_str(" volatile"),
            b'P' => ty.push('*'),
            _ => return None,
        }
    }
    Some(ty)
}

/// A constructor template of a class named by an abbreviation
/// (`_ZNSsC1IPKcEET_S2_RKSaIcE`): cpp_demangle takes its first parameter
/// for a return type. With a `v` put before the parameters for that, it
/// prints them all; which `E` ends the template arguments is found by
/// trying each, and a reading is kept only if all it adds is a first
/// parameter.
fn constructor_template(name: &str) -> Option<String> {
    let at = ["C1I", "C2I", "C3I", "C4I"]
        .iter()
        .find_map(|c| name.find(c))?;
    let first_reading = plain(name, true)?;
    let open = first_reading.rfind(">(")? + 2;
    name.match_indices('E')
        .filter(|&(e, _)| e > at)
        .find_map(|(e, _)| {
            let (head, tail) = name.split_at(e + 1);
            let reading = plain(&format!("{head}v{tail}"), true)?;
            let params = reading.get(open..)?.strip_suffix(')')?;
            let first = *split_list(params).first()?;
            let rest = reading.get(open + first.len() + 2..)?;
            let agrees = !first.is_empty()
                && reading.get(..open) == first_reading.get(..open)
                && Some(rest) == first_reading.get(open..);
            agrees.then_some(reading)
        })
}

#[cfg(test)]
mod tests {
    use super::{demangle, qualify};

    #[test]
    fn qualifiers_apply_as_references_collapse() {
        assert_eq!(qualify("int", "RK").as_deref(), Some("int const&"));
        assert_eq!(
            qualify("char const*", "RK").as_deref(),
            Some("char const* const&")
        );
        assert_eq!(
            qualify("llvm::SMLoc&", "O").as_deref(),
            Some("llvm::SMLoc&")
        );
        assert_eq!(qualify("int&&", "R").as_deref(), Some("int&"));
        assert_eq!(
            qualify("char const (&) [5]", "O").as_deref(),
            Some("char const (&) [5]")
        );
        assert_eq!(qualify("char const [5]", "R"), None);
    }

    #[test]
    fn packs_of_const_references_are_qualified_throughout() {
        assert_eq!(
            demangle(
                "_ZN4llvm12hash_combineIJPKNS_4TypeENS_9hash_codeEbEEES4_DpRKT_",
                true
            )
            .as_deref(),
            Some(
                "llvm::hash_code llvm::hash_combine<llvm::Type const*, llvm::hash_code, bool>\
                 (llvm::Type const* const&, llvm::hash_code const&, bool const&)"
            )
        );
    }

    #[test]
    fn an_empty_pack_leaves_no_parameter() {
        assert_eq!(
            demangle("_ZNSt5dequeIiSaIiEE16_M_push_back_auxIJEEEvDpOT_", true).as_deref(),
            Some("void std::deque<int, std::allocator<int> >::_M_push_back_aux<>()")
        );
    }
}
