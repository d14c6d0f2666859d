//! Names as they may be shown on a terminal: a symbol, a module path or a
//! command name is whatever bytes a binary or a process chose, so control
//! characters are written as visible escapes, never sent raw.

/// `text` with each control character written as `\xNN` (or `\u{NNNN}`
/// beyond Latin-1), so that nothing in it moves the cursor or changes the
/// terminal's state.
pub fn printable(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            c if !c.is_control() => out.push(c),
            c if (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_become_escapes() {
        assert_eq!(printable("burn_60"), "burn_60");
        assert_eq!(printable("a\u{1b}[2Jb"), "a\\x1b[2Jb");
        assert_eq!(printable("x\ny\u{9b}"), "x\\x0ay\\x9b");
        assert!(!printable("\u{7}\u{0}").chars().any(char::is_control));
    }
}
