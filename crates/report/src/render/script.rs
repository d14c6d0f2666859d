//! `profiler script`'s lines, in perf script's layout (its default fields,
//! with the process beside the thread and the CPU):
//!
//! ```text
//!            split  4142/4142  [001]     0.004310:     250000 cpu-clock:      5555555551c9 burn_60+0x19 (/tmp/split)
//! ```
//!
//! or, where stacks were recorded, the sample's line with the command
//! unpadded and its stack under it, one frame a line (after a tab, each
//! address in a file as an offset into it), then an empty line:
//!
//! ```text
//! split  4142/4142  [001]     0.004310:     250000 cpu-clock:
//!                 11c9 burn_60+0x19 (/tmp/split)
//!                 1240 main+0x30 (/tmp/split)
//! ```

use std::io::{self, Write};

use crate::views::script::Script;

/// Bytes gathered before they are written out.
const CHUNK: usize = 1 << 16;

pub fn render_script(script: &Script, out: &mut impl Write) -> io::Result<()> {
    let mut text: Vec<u8> = Vec::with_capacity(2 * CHUNK);
    for (sample, event) in &script.samples {
        let stack = &script.stacks[sample.stack as usize];
        let command = (script.commands.get(stack.command)).map_or("", String::as_str);
        let since = sample.time.saturating_sub(script.start);
        let event = (script.events.get(*event)).map_or("", String::as_str);
        // comm pid/tid [cpu] seconds.micros: period event:
        if !script.stacks_recorded {
            pad(&mut text, 16 - command.len().min(16));
        }
        text.extend_from_slice(command.as_bytes());
        text.push(b' ');
        decimal(&mut text, u64::from(stack.pid), 5, Align::Right);
        text.push(b'/');
        decimal(&mut text, u64::from(stack.tid), 5, Align::Left);
        text.extend_from_slice(b" [");
        decimal(&mut text, u64::from(sample.cpu), 3, Align::Zeros);
        text.extend_from_slice(b"] ");
        decimal(&mut text, since / 1_000_000_000, 5, Align::Right);
        text.push(b'.');
        decimal(&mut text, since % 1_000_000_000 / 1000, 6, Align::Zeros);
        text.extend_from_slice(b": ");
        decimal(&mut text, sample.period, 10, Align::Right);
        text.push(b' ');
        text.extend_from_slice(event.as_bytes());
        text.extend_from_slice(b": ");
        if script.stacks_recorded {
            text.push(b'\n');
            for (depth, &place) in stack.frames.iter().enumerate() {
                let place = &script.places[place as usize];
                if place.lines.is_empty() {
                    // Code outside any mapping: its address is known only
                    // where it was the sampled instruction.
                    text.push(b'\t');
                    hexadecimal(&mut text, if depth == 0 { sample.ip.0 } else { 0 });
                    text.extend_from_slice(&place.tail);
                } else {
                    text.extend_from_slice(&place.lines);
                }
            }
            text.push(b'\n');
        } else {
            text.push(b' ');
            hexadecimal(&mut text, sample.ip.0);
            match stack.frames.first() {
                Some(&place) => text.extend_from_slice(&script.places[place as usize].tail),
                None => text.extend_from_slice(b" [unknown] ([unknown])\n"),
            }
        }
        if text.len() >= CHUNK {
            out.write_all(&text)?;
            text.clear();
        }
    }
    out.write_all(&text)
}

/// How a number fills its width.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Align {
    Left,
    Right,
    Zeros,
}

/// `n` in decimal, at least `width` wide, as printf's `%5d`, `%-5d` and
/// `%03d` print it: formatted by hand, the cost of a million lines.
fn decimal(text: &mut Vec<u8>, mut n: u64, width: usize, align: Align) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let digits = &digits[at..];
    let fill = width.saturating_sub(digits.len());
    match align {
        Align::Right => pad(text, fill),
        Align::Zeros => text.resize(text.len() + fill, b'0'),
        Align::Left => {}
    }
    text.extend_from_slice(digits);
    if align == Align::Left {
        pad(text, fill);
    }
}

/// `n` in hexadecimal, right-aligned in 16 columns (`%16lx`).
fn hexadecimal(text: &mut Vec<u8>, mut n: u64) {
    let mut digits = [b' '; 16];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b"0123456789abcdef"[(n & 0xf) as usize];
        n >>= 4;
        if n == 0 {
            break;
        }
    }
    text.extend_from_slice(&digits);
}

fn pad(text: &mut Vec<u8>, spaces: usize) {
    text.resize(text.len() + spaces, b' ');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_laid_out_as_printf_lays_them_out() {
        let shown = |n: u64, width: usize, align: Align| {
            let mut text = Vec::new();
            decimal(&mut text, n, width, align);
            String::from_utf8(text).unwrap()
        };
        assert_eq!(shown(42, 5, Align::Right), format!("{:5}", 42));
        assert_eq!(shown(42, 5, Align::Left), format!("{:<5}", 42));
        assert_eq!(shown(7, 3, Align::Zeros), format!("{:03}", 7));
        assert_eq!(shown(0, 6, Align::Zeros), "000000");
        assert_eq!(shown(1234567, 3, Align::Right), "1234567");
        assert_eq!(shown(u64::MAX, 10, Align::Right), u64::MAX.to_string());
        for n in [0, 0x1c9, 0xffff_ffff_8100_1230, u64::MAX] {
            let mut text = Vec::new();
            hexadecimal(&mut text, n);
            assert_eq!(String::from_utf8(text).unwrap(), format!("{n:16x}"));
        }
    }
}
