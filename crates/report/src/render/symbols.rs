//! `profiler symbolize`'s output: addresses of one file named the way
//! `llvm-symbolizer --no-inlines` names them (the function holding the
//! code, with the instruction's own line) or, with `--inlines`, as
//! `addr2line -f -C -i` does; or as JSON.

use std::borrow::Cow;
use std::io::{self, Write};

use profiler_model::{AddressSymbol, Frame, Svma};
use serde_json::json;

/// Each address's function and line as addr2line prints them: `function`
/// then `file:line`, with `??` for what is unknown; with `inlines`, every
/// frame of its inline chain, innermost first.
pub fn render_symbols_text(
    symbols: &[(Svma, &AddressSymbol)],
    inlines: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    for (_, symbol) in symbols {
        write_text(out, symbol, inlines)?;
    }
    Ok(())
}

/// Each address with its frames, as a JSON array.
pub fn render_symbols_json(
    symbols: &[(Svma, &AddressSymbol)],
    inlines: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    let entries: Vec<_> = (symbols.iter())
        .map(|(address, symbol)| {
            let frames = frames(symbol, inlines);
            let frames: Vec<_> = frames.iter().map(json_frame).collect();
            json!({"address": address.0, "frames": frames})
        })
        .collect();
    serde_json::to_writer_pretty(&mut *out, &entries)?;
    writeln!(out)
}

/// The inline chain, innermost first; or, without `inlines`, one frame:
/// the function holding the code (the symbol table's, or the outermost of
/// the debug info's chain) with the instruction's own line.
fn frames(symbol: &AddressSymbol, inlines: bool) -> Vec<Frame> {
    let holder = symbol.function.as_ref().and_then(|f| f.name.clone());
    match (symbol.frames.first(), inlines) {
        (None, _) => vec![Frame {
            function: holder,
            linkage_name: None,
            file: None,
            line: None,
        }],
        (Some(_), true) => symbol.frames.clone(),
        (Some(innermost), false) => vec![Frame {
            function: holder.or_else(|| symbol.frames.last().and_then(|f| f.function.clone())),
            ..innermost.clone()
        }],
    }
}

/// Each frame as `function` then `file:line`, with addr2line's `??` for
/// what is unknown.
fn write_text(out: &mut dyn Write, symbol: &AddressSymbol, inlines: bool) -> io::Result<()> {
    let chain = match inlines && !symbol.frames.is_empty() {
        true => Cow::Borrowed(&symbol.frames[..]),
        false => Cow::Owned(frames(symbol, inlines)),
    };
    for frame in chain.iter() {
        write_frame(
            out,
            frame.function.as_deref(),
            frame.file.as_deref(),
            frame.line,
        )?;
    }
    Ok(())
}

fn write_frame(
    out: &mut dyn Write,
    function: Option<&str>,
    file: Option<&str>,
    line: Option<u32>,
) -> io::Result<()> {
    // Pieces, not `writeln!`: a large batch prints tens of megabytes.
    out.write_all(function.unwrap_or("??").as_bytes())?;
    out.write_all(b"\n")?;
    out.write_all(file.unwrap_or("??").as_bytes())?;
    match (file, line) {
        (Some(_), Some(line)) => writeln!(out, ":{line}"),
        (Some(_), None) => out.write_all(b":?\n"),
        (None, _) if function.is_some() => out.write_all(b":?\n"),
        (None, _) => out.write_all(b":0\n"),
    }
}

fn json_frame(frame: &Frame) -> serde_json::Value {
    json!({"function": frame.function.as_deref(), "file": frame.file.as_deref(), "line": frame.line})
}
