//! `profiler annotate`: args -> read_stacks with places -> the function
//! SYMBOL names -> its listing from the disassembler -> annotate -> text or
//! JSON. An inlined function has no code of its own: then the places it was
//! inlined, with their samples.

use std::io::{self, BufWriter, IsTerminal, Write};
use std::process::ExitCode;

use anyhow::{Result, anyhow};
use profiler_model::{AsmSyntax, Disassembler, FunctionListing};
use profiler_report::{
    AnnotateOptions, AnnotateTarget, AnnotateView, InlineSites, Places, ReportError, StackOptions,
    StackProfile, annotate, inline_sites, read_stacks, render_annotation_json,
    render_annotation_text, render_inline_sites_json, render_inline_sites_text,
};
use profiler_symbols::SourceFiles;

use crate::args::{AnnotateArgs, AsmSyntaxArg, ColorChoice, Format};
use crate::symbols::with_symbolizer;

pub(crate) fn run(args: AnnotateArgs) -> Result<ExitCode> {
    let recording = crate::input::open(&args.input.path)?;
    // Functions are those holding the code, as perf annotate takes symbols;
    // code inlined into them is marked in the listing.
    let stack_options = StackOptions {
        event: Some(args.event.clone().unwrap_or_else(|| "0".into())),
        without_inline_frames: true,
        places: Places::Addresses,
        filter: args.time.filter(),
        ..StackOptions::default()
    };
    let syntax = match args.asm_syntax {
        AsmSyntaxArg::Att => AsmSyntax::Att,
        AsmSyntaxArg::Intel => AsmSyntax::Intel,
    };
    let found = with_symbolizer(&args.symbols, &recording, |symbolizer, unwinder| {
        let stacks = read_stacks(&recording, symbolizer, unwinder, &stack_options)?;
        let target = match stacks.find_function(&args.symbol) {
            Ok(target) => target,
            Err(error @ ReportError::NoFunction { .. }) => {
                // Perhaps a function inlined into others: read the
                // inline chains (only now, as they cost more).
                let options = StackOptions {
                    without_inline_frames: false,
                    ..stack_options.clone()
                };
                let stacks = read_stacks(&recording, symbolizer, unwinder, &options)?;
                return match inline_sites(&recording, &stacks, &args.symbol, symbolizer) {
                    Some(sites) => Ok(Found::Inlined(sites)),
                    None => Err(error.into()),
                };
            }
            Err(error) => return Err(error.into()),
        };
        let listing = symbolizer
            .inner
            .listing(&target.module, target.address, syntax)
            .map_err(|problem| anyhow!("cannot annotate {}: {problem}", args.symbol))?;
        anyhow::Ok(Found::Function(Box::new((stacks, target, listing))))
    })?;
    let (stacks, target, listing) = match found {
        Found::Function(found) => *found,
        Found::Inlined(sites) => return print_sites(&sites, args.format),
    };
    let options = AnnotateOptions {
        view: match (args.source, args.asm) {
            (true, _) => AnnotateView::Source,
            (_, true) => AnnotateView::Asm,
            _ => AnnotateView::Both,
        },
        context: args.context,
    };
    let sources = SourceFiles::new(args.source_dirs.clone());
    let annotation = annotate(&recording, &stacks, &target, &listing, &sources, &options);
    let stdout = io::stdout();
    let color = match args.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => stdout.is_terminal(),
    };
    let mut out = BufWriter::new(stdout.lock());
    match args.format {
        Format::Text => render_annotation_text(&annotation, color, &mut out)?,
        Format::Json => render_annotation_json(&annotation, &mut out)?,
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// What SYMBOL names: a function with its listing, or an inlined function.
enum Found {
    Function(Box<(StackProfile, AnnotateTarget, FunctionListing)>),
    Inlined(InlineSites),
}

fn print_sites(sites: &InlineSites, format: Format) -> Result<ExitCode> {
    let mut out = BufWriter::new(io::stdout().lock());
    match format {
        Format::Text => render_inline_sites_text(sites, &mut out)?,
        Format::Json => render_inline_sites_json(sites, &mut out)?,
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
