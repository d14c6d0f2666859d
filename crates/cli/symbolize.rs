//! `profiler symbolize`: addresses of one file (hexadecimal, one per line, as
//! the file states them, like addr2line's) read from stdin, named the way
//! `llvm-symbolizer --no-inlines` names them (the function holding the code,
//! with the instruction's own line) or, with `--inlines`, as `addr2line -f
//! -C -i` does; or as JSON.

use std::collections::HashMap;
use std::io::{self, BufWriter, Read, Write};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use profiler_model::{AddressSymbol, Frame, Svma};
use profiler_symbols::symbolize_file;
use serde_json::json;

use crate::args::{Format, SymbolizeArgs};
use crate::progress::Progress;

pub fn run(args: SymbolizeArgs) -> Result<ExitCode> {
    let mut input = String::new();
    io::stdin()
        .read_to_string(&mut input)
        .context("cannot read the addresses from stdin")?;
    let addresses = parse_addresses(&input)?;
    let mut unique: Vec<Svma> = addresses.clone();
    unique.sort_unstable();
    unique.dedup();
    let options = crate::symbols::options(&args.symbols, false);
    let progress = Progress::start(format!(
        "symbolizing {} addresses of {}",
        unique.len(),
        args.exe.display()
    ));
    let symbols = symbolize_file(&args.exe, &unique, &options)?;
    drop(progress);
    let by_address: HashMap<Svma, &AddressSymbol> = unique.iter().copied().zip(&symbols).collect();

    let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    match args.format {
        Format::Text => {
            for address in &addresses {
                write_text(&mut out, by_address[address], args.inlines)?;
            }
        }
        Format::Json => {
            let entries: Vec<_> = addresses
                .iter()
                .map(|address| {
                    let frames = frames(by_address[address], args.inlines);
                    json!({"address": address.0, "frames": frames.iter().map(json_frame).collect::<Vec<_>>()})
                })
                .collect();
            serde_json::to_writer_pretty(&mut out, &entries)?;
            writeln!(out)?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Hexadecimal addresses, one per line, with or without `0x`; blank lines
/// are skipped.
fn parse_addresses(input: &str) -> Result<Vec<Svma>> {
    let mut addresses = Vec::new();
    for (number, line) in input.lines().enumerate() {
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        let digits = text
            .strip_prefix("0x")
            .or_else(|| text.strip_prefix("0X"))
            .unwrap_or(text);
        match u64::from_str_radix(digits, 16) {
            Ok(address) => addresses.push(Svma(address)),
            Err(_) => bail!(
                "line {} of the input: '{text}' is not a hexadecimal address",
                number + 1
            ),
        }
    }
    Ok(addresses)
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
fn write_text(out: &mut impl Write, symbol: &AddressSymbol, inlines: bool) -> io::Result<()> {
    for frame in frames(symbol, inlines) {
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
    out: &mut impl Write,
    function: Option<&str>,
    file: Option<&str>,
    line: Option<u32>,
) -> io::Result<()> {
    let name = function.unwrap_or("??");
    match (file, line) {
        (Some(file), Some(line)) => writeln!(out, "{name}\n{file}:{line}"),
        (Some(file), None) => writeln!(out, "{name}\n{file}:?"),
        (None, _) if function.is_some() => writeln!(out, "{name}\n??:?"),
        (None, _) => writeln!(out, "{name}\n??:0"),
    }
}

fn json_frame(frame: &Frame) -> serde_json::Value {
    json!({"function": frame.function.as_deref(), "file": frame.file.as_deref(), "line": frame.line})
}
