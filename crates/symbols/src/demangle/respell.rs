//! cpp_demangle's spelling of a C++ name made libiberty's, one difference
//! at a time: special names (`{vtable(X)}` for `vtable for X`), integer
//! template arguments (`(unsigned int)4` for `4u`), empty packs, the
//! standard abbreviations (`std::istream`), qualifiers put inside a nested
//! name (`A&::B` for `A::B&`), the space in a function type (`R (A)`), the
//! parentheses round a callee, and a local entity's `const`.

/// `text`, cpp_demangle's reading of `mangled`, spelled as libiberty
/// spells it; `full` if it was read with argument lists.
pub(crate) fn respell(text: &str, mangled: &str, full: bool) -> String {
    let mut text = special_name(text);
    text = text.replace("std::nullptr_t", "decltype(nullptr)");
    // An empty pack, in template arguments and in parameters.
    text = text
        .replace(", >", ">")
        .replace(", &&)", ")")
        .replace("(&&)", "()");
    text = integer_literals(&text).replace(" const const", " const");
    // A name that spells a stream's template out prints it long in
    // libiberty too.
    if !["13basic_istream", "13basic_ostream", "14basic_iostream"]
        .iter()
        .any(|spelled| mangled.contains(spelled))
    {
        text = abbreviations(&text);
    }
    text = qualifiers_inside_names(&text);
    let typeinfo = ["_ZTIF", "_ZTSF"].iter().any(|p| mangled.starts_with(p));
    text = function_types(&text, typeinfo);
    text = callees(&text);
    if mangled.contains("ZNK") {
        text = local_entities_const(&text);
    }
    // A member function's ref-qualifier goes with its parameters.
    if !full
        && mangled.starts_with("_ZN")
        && mangled[3..]
            .trim_start_matches(['K', 'V'])
            .starts_with(['R', 'O'])
    {
        for qualifier in [" &&", " &"] {
            if let Some(t) = text.strip_suffix(qualifier) {
                return t.to_owned();
            }
        }
    }
    text
}

/// The items of a comma-separated list, split where no bracket is open.
pub(crate) fn split_list(list: &str) -> Vec<&str> {
    if list.is_empty() {
        return Vec::new();
    }
    let mut items = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, b) in list.bytes().enumerate() {
        match b {
            b'<' | b'(' | b'[' => depth += 1,
            b'>' | b')' | b']' => depth -= 1,
            b',' if depth == 0 && list.as_bytes().get(i + 1) == Some(&b' ') => {
                items.push(&list[start..i]);
                start = i + 2;
            }
            _ => {}
        }
    }
    items.push(&list[start..]);
    items
}

/// `{vtable(X)}`, `{vtt(X)}` and `{virtual override thunk({offset(N)}, F)}`
/// as libiberty says them.
fn special_name(text: &str) -> String {
    let within = |open: &str| text.strip_prefix(open).and_then(|t| t.strip_suffix(")}"));
    if let Some(ty) = within("{vtable(") {
        return format!("vtable for {ty}");
    }
    if let Some(ty) = within("{vtt(") {
        return format!("VTT for {ty}");
    }
    if let Some(mut rest) = within("{virtual override thunk(") {
        let mut offsets = Vec::new();
        while let Some((offset, after)) = rest.strip_prefix('{').and_then(|r| r.split_once("}, ")) {
            offsets.push(offset);
            rest = after;
        }
        let thunk = match offsets.as_slice() {
            [one] if one.starts_with("offset(") => "non-virtual thunk",
            [_] => "virtual thunk",
            _ => "covariant return thunk",
        };
        return format!("{thunk} to {rest}");
    }
    text.to_owned()
}

/// `(unsigned int)4` as `4u`, and so on for the types libiberty gives a
/// suffix.
fn integer_literals(text: &str) -> String {
    let mut text = text.to_owned();
    for (cast, suffix) in [
        ("(unsigned int)", "u"),
        ("(long)", "l"),
        ("(unsigned long)", "ul"),
        ("(long long)", "ll"),
        ("(unsigned long long)", "ull"),
    ] {
        let mut from = 0;
        while let Some(at) = text[from..].find(cast).map(|a| a + from) {
            let value = &text[at + cast.len()..];
            let sign = usize::from(value.starts_with('-'));
            let digits = value[sign..].bytes().take_while(u8::is_ascii_digit).count();
            from = at + cast.len();
            if digits > 0 {
                let literal = format!("{}{suffix}", &value[..sign + digits]);
                text.replace_range(at..at + cast.len() + sign + digits, &literal);
                from = at + literal.len();
            }
        }
    }
    text
}

/// The standard abbreviations, the long way and the short.
const ABBREVIATIONS: [(&str, &str, &str); 4] = [
    (
        "std::basic_istream<char, std::char_traits<char> >",
        "std::istream",
        "basic_istream",
    ),
    (
        "std::basic_ostream<char, std::char_traits<char> >",
        "std::ostream",
        "basic_ostream",
    ),
    (
        "std::basic_iostream<char, std::char_traits<char> >",
        "std::iostream",
        "basic_iostream",
    ),
    (
        "std::basic_string<char, std::char_traits<char>, std::allocator<char> >",
        "std::string",
        "basic_string",
    ),
];

/// libiberty spells `Si`, `So`, `Sd` and `Ss` short (`std::istream`)
/// except before their constructor or destructor, where it spells them
/// long (`std::basic_istream<..>::basic_istream`); cpp_demangle spells
/// the streams long in most places, and all four short before a
/// constructor.
fn abbreviations(text: &str) -> String {
    let mut text = text.to_owned();
    for &(long, short, template) in &ABBREVIATIONS[..3] {
        let mut spelled = String::with_capacity(text.len());
        let mut rest = text.as_str();
        while let Some(at) = rest.find(long) {
            spelled.push_str(&rest[..at]);
            rest = &rest[at + long.len()..];
            let structor = rest
                .strip_prefix("::")
                .is_some_and(|r| r.trim_start_matches('~').starts_with(template));
            spelled.push_str(if structor { long } else { short });
        }
        spelled.push_str(rest);
        text = spelled;
    }
    for (long, short, template) in ABBREVIATIONS {
        let name = &short["std::".len()..];
        for tilde in ["", "~"] {
            let short_structor = format!("{short}::{tilde}{name}");
            let long_structor = format!("{long}::{tilde}{template}");
            let mut from = 0;
            while let Some(at) = text[from..].find(&short_structor).map(|a| a + from) {
                let end = at + short_structor.len();
                from = end;
                if !text[end..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
                    text.replace_range(at..end, &long_structor);
                    from = at + long_structor.len();
                }
            }
        }
    }
    text
}

/// `A&::B` for `A::B&`: qualifiers that cpp_demangle puts inside a nested
/// name go after it.
fn qualifiers_inside_names(text: &str) -> String {
    let mut text = text.to_owned();
    'again: loop {
        for qualifiers in [" const&", " const*", " const", "&&", "&", "*"] {
            let Some(at) = text.find(&format!("{qualifiers}::")) else {
                continue;
            };
            let start = at + qualifiers.len() + 2;
            let mut depth = 0i32;
            let mut end = text.len();
            for (i, b) in text.bytes().enumerate().skip(start) {
                match b {
                    b'<' | b'(' => depth += 1,
                    b'>' | b')' if depth > 0 => depth -= 1,
                    b'>' | b')' | b',' | b' ' | b'&' | b'*' if depth == 0 => {
                        end = i;
                        break;
                    }
                    _ => {}
                }
            }
            let name = text[start..end].to_owned();
            text.replace_range(at..end, &format!("::{name}{qualifiers}"));
            continue 'again;
        }
        return text;
    }
}

/// libiberty puts a space between a function type's result and its
/// parameters (`bool (int)`), where cpp_demangle writes `bool(int)`. A
/// function type is a parenthesis inside template arguments (or after
/// `typeinfo for`) that follows a type, and is not followed by `::`, which
/// would make it the function of a local entity.
fn function_types(text: &str, typeinfo: bool) -> String {
    let bytes = text.as_bytes();
    let mut spelled = String::with_capacity(text.len() + 8);
    let mut depth = 0i32;
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        let before = &text[..i];
        if before.ends_with("operator") {
            // `operator<<` and the like open no template arguments.
            i += bytes[i..]
                .iter()
                .take_while(|c| b"<>=-*".contains(c))
                .count()
                .max(1);
            continue;
        }
        match bytes[i] {
            b'<' => depth += 1,
            b'>' => depth -= 1,
            b'(' if (depth > 0 || typeinfo)
                && i > 0
                && !b"( <)".contains(&bytes[i - 1])
                && !["decltype", "{lambda", "sizeof", "alignof", "noexcept"]
                    .iter()
                    .any(|word| before.ends_with(word))
                && !closing(text, i).is_some_and(|c| text[c + 1..].starts_with(['#', ':'])) =>
            {
                spelled.push_str(&text[copied..i]);
                spelled.push(' ');
                copied = i;
            }
            _ => {}
        }
        i += 1;
    }
    spelled.push_str(&text[copied..]);
    spelled
}

/// Where the parenthesis opened at `open` closes.
fn closing(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0;
    for (i, b) in text.bytes().enumerate().skip(open) {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `(std::begin)(x)` for `std::begin(x)`: libiberty puts no parentheses
/// round a callee that is a name.
fn callees(text: &str) -> String {
    let mut text = text.to_owned();
    let mut from = 0;
    while let Some(at) = text[from..].find("((").map(|a| a + from + 1) {
        let name = text[at + 1..]
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b':')
            .count();
        if name > 0 && text[at + 1 + name..].starts_with(")(") {
            text.replace_range(at + 1 + name..at + 2 + name, "");
            text.replace_range(at..at + 1, "");
        }
        from = at;
    }
    text
}

/// `f()::x const` for `f() const::x`: the `const` of a local entity's
/// member function, which cpp_demangle puts after the entity.
fn local_entities_const(text: &str) -> String {
    let mut text = text.to_owned();
    let mut from = 0;
    while let Some(at) = text[from..].find(")::").map(|a| a + from) {
        let start = at + 3;
        // The entity: a name, or `{lambda(..)#N}`, `{unnamed type#N}`.
        let end = if text[start..].starts_with('{') {
            braced_end(&text, start)
        } else {
            start
                + text[start..]
                    .bytes()
                    .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
                    .count()
        };
        let after = &text[end..];
        if after.starts_with(" const")
            && !after[" const".len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        {
            text.replace_range(end..end + " const".len(), "");
            text.insert_str(at + 1, " const");
            from = end + " const".len();
        } else {
            from = start;
        }
    }
    text
}

/// Where the braces opened at `start` close, just past them.
fn braced_end(text: &str, start: usize) -> usize {
    let mut depth = 0;
    for (i, b) in text.bytes().enumerate().skip(start) {
        match b {
            b'{' | b'(' => depth += 1,
            b'}' | b')' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_names_are_said_as_libiberty_says_them() {
        assert_eq!(
            special_name("{vtable(std::bad_alloc)}"),
            "vtable for std::bad_alloc"
        );
        assert_eq!(
            special_name("{virtual override thunk({offset(-8)}, A::f())}"),
            "non-virtual thunk to A::f()"
        );
        assert_eq!(
            special_name("{virtual override thunk({virtual offset(0, -24)}, A::~A())}"),
            "virtual thunk to A::~A()"
        );
    }

    #[test]
    fn integer_arguments_take_a_suffix() {
        assert_eq!(
            integer_literals("A<(unsigned int)4, (long)-1, (unsigned long)x>"),
            "A<4u, -1l, (unsigned long)x>"
        );
    }

    #[test]
    fn qualifiers_go_after_the_nested_name() {
        assert_eq!(qualifiers_inside_names("f(A&::B, int)"), "f(A::B&, int)");
        assert_eq!(qualifiers_inside_names("f(G const::N*)"), "f(G::N const*)");
    }

    #[test]
    fn function_types_have_a_space() {
        assert_eq!(
            function_types("std::function<bool(int)>::operator()(int) const", false),
            "std::function<bool (int)>::operator()(int) const"
        );
        assert_eq!(
            function_types("A<void (*)(int)>", false),
            "A<void (*)(int)>"
        );
        assert_eq!(
            function_types("f<g<int>(int)::{lambda()#1}>", false),
            "f<g<int>(int)::{lambda()#1}>"
        );
        assert_eq!(
            function_types("operator<< <X>(X&)", false),
            "operator<< <X>(X&)"
        );
    }

    #[test]
    fn streams_are_short_but_before_their_constructors() {
        let long = "std::basic_istream<char, std::char_traits<char> >";
        assert_eq!(
            abbreviations(&format!("{long}::gcount()")),
            "std::istream::gcount()"
        );
        assert_eq!(
            abbreviations("std::string::string(std::string&&)"),
            "std::basic_string<char, std::char_traits<char>, std::allocator<char> >\
             ::basic_string(std::string&&)"
        );
    }

    #[test]
    fn callees_that_are_names_lose_their_parentheses() {
        assert_eq!(
            callees("decltype ((std::begin)((std::declval<int>)()))"),
            "decltype (std::begin((std::declval<int>)()))"
        );
    }

    #[test]
    fn a_local_entitys_const_goes_with_its_function() {
        assert_eq!(local_entities_const("A::f()::x const"), "A::f() const::x");
        assert_eq!(
            local_entities_const("g<A::f(int)::{lambda(int)#1} const>"),
            "g<A::f(int) const::{lambda(int)#1}>"
        );
    }
}
