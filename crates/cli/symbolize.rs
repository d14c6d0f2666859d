//! `profiler symbolize`: addresses of one file (hexadecimal, one per line, as
//! the file states them, like addr2line's) read from stdin, named by the
//! symbolizer, rendered by the report as addr2line or llvm-symbolizer print
//! them, or as JSON.

use std::io::{self, BufWriter, Read, Write};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use profiler_model::{AddressSymbol, Svma};
use profiler_report::{render_symbols_json, render_symbols_text};
use profiler_symbols::symbolize_file;

use crate::args::{Format, SymbolizeArgs};
use crate::progress::Progress;

pub(crate) fn run(args: SymbolizeArgs) -> Result<ExitCode> {
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
    // Each address's symbol, found among the sorted unique ones.
    let symbols: Vec<(Svma, &AddressSymbol)> = (addresses.iter())
        .filter_map(|address| {
            let index = unique.binary_search(address).ok()?;
            Some((*address, symbols.get(index)?))
        })
        .collect();
    let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    match args.format {
        Format::Text => render_symbols_text(&symbols, args.inlines, &mut out)?,
        Format::Json => render_symbols_json(&symbols, args.inlines, &mut out)?,
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
