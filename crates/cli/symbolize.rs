//! `profiler symbolize`: addresses of one file (hexadecimal, one per line, as
//! the file states them, like addr2line's) read from stdin, named the way
//! `addr2line -f -C [-i]` names them, or as JSON.

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
                .map(|address| json!({"address": address.0, "frames": json_frames(by_address[address])}))
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

/// The inline chain (or only its innermost frame), or the symbol table's
/// function when there is no debug info: each as `function` then
/// `file:line`, with addr2line's `??` for what is unknown.
fn write_text(out: &mut impl Write, symbol: &AddressSymbol, inlines: bool) -> io::Result<()> {
    if symbol.frames.is_empty() {
        let function = symbol.function.as_ref().and_then(|f| f.name.as_deref());
        return write_frame(out, function, None, None);
    }
    let count = if inlines { symbol.frames.len() } else { 1 };
    for frame in &symbol.frames[..count] {
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

/// Every frame of the chain as JSON (the symbol table's function when there
/// is no debug info).
fn json_frames(symbol: &AddressSymbol) -> Vec<serde_json::Value> {
    if symbol.frames.is_empty() {
        let function = symbol.function.as_ref().and_then(|f| f.name.as_deref());
        return vec![json!({"function": function, "file": null, "line": null})];
    }
    let frame = |f: &Frame| json!({"function": f.function.as_deref(), "file": f.file.as_deref(), "line": f.line});
    symbol.frames.iter().map(frame).collect()
}
