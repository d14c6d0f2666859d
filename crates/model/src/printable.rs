//! Text from files the profiler did not write (symbol names, command and
//! file names, JIT maps, source lines) made safe to print: every control
//! character becomes a visible escape, so that no name moves a terminal's
//! cursor, changes its colours or title, breaks a line of a text view or a
//! folded stack, or makes a flame graph's XML invalid.
//!
//! Escaped: C0 controls (U+0000 to U+001F) as `\xNN`, DEL and the C1
//! controls (U+007F to U+009F) too, and the Unicode controls that reorder
//! or break text (bidirectional overrides and isolates, line and paragraph
//! separators) as `\u{NNNN}`. Invalid UTF-8 becomes U+FFFD where bytes
//! become text ([`printable_bytes`]).

use std::borrow::Cow;
use std::fmt::Write;
use std::sync::Arc;

/// Whether `c` must not reach an output as it is.
fn unprintable(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every control character escaped; borrowed when it has none.
pub fn printable(text: &str) -> Cow<'_, str> {
    escaped(text, unprintable)
}

/// [`printable`], for a line of a source file: tabs, which lay source out
/// and move nothing else, are kept.
pub fn printable_line(text: &str) -> Cow<'_, str> {
    escaped(text, |c| c != '\t' && unprintable(c))
}

/// Bytes that should be text, as printable text: invalid UTF-8 replaced
/// (U+FFFD), control characters escaped.
pub fn printable_bytes(bytes: &[u8]) -> Cow<'_, str> {
    match String::from_utf8_lossy(bytes) {
        Cow::Borrowed(text) => printable(text),
        Cow::Owned(text) => Cow::Owned(printable(&text).into_owned()),
    }
}

/// [`printable`], for a shared name: the same `Arc` when nothing changes.
pub fn printable_arc(name: &Arc<str>) -> Arc<str> {
    match printable(name) {
        Cow::Borrowed(_) => Arc::clone(name),
        Cow::Owned(text) => text.into(),
    }
}

/// Makes `text` printable in place.
pub fn make_printable(text: &mut String) {
    if let Cow::Owned(escaped) = printable(text) {
        *text = escaped;
    }
}

fn escaped(text: &str, escape: impl Fn(char) -> bool) -> Cow<'_, str> {
    // Bytes first: nearly every name is printable ASCII, and a search by
    // characters costs several times as much where builds are not optimized.
    let suspect = text.bytes().position(|b| !(0x20..0x7f).contains(&b));
    let Some(first) = suspect.and_then(|at| text[at..].find(&escape).map(|i| at + i)) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str(&text[..first]);
    for c in text[first..].chars() {
        if !escape(c) {
            out.push(c);
        } else if u32::from(c) < 0x100 {
            let _ = write!(out, "\\x{:02x}", u32::from(c));
        } else {
            let _ = write!(out, "\\u{{{:04x}}}", u32::from(c));
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_the_rest_kept() {
        assert!(matches!(printable("main"), Cow::Borrowed("main")));
        assert_eq!(
            printable("std::vector<int>::push_back(int&&) ×2 ü"),
            "std::vector<int>::push_back(int&&) ×2 ü"
        );
        assert_eq!(printable("a\u{1b}[31mred"), "a\\x1b[31mred");
        assert_eq!(printable("two\nlines\r\0"), "two\\x0alines\\x0d\\x00");
        assert_eq!(printable("\u{7f}\u{85}\u{9f}"), "\\x7f\\x85\\x9f");
        assert_eq!(printable("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert_eq!(printable_line("\tif (x)\u{c}"), "\tif (x)\\x0c");
        assert_eq!(
            printable_bytes(b"ok\xff\xc3(\x01"),
            "ok\u{fffd}\u{fffd}(\\x01"
        );
        for byte in (0u8..0x20).chain([0x7f]) {
            let bytes = [b'a', byte, b'b'];
            let text = printable_bytes(&bytes);
            assert!(!text.chars().any(char::is_control), "{byte:#x}: {text:?}");
        }
        let name: Arc<str> = "plain".into();
        assert!(Arc::ptr_eq(&printable_arc(&name), &name));
        let mut owned = String::from("x\ty");
        make_printable(&mut owned);
        assert_eq!(owned, "x\\x09y");
    }
}
