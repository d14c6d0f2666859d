//! `profiler annotate`: args -> read_stacks with places -> the function
//! SYMBOL names -> its listing from the disassembler -> annotate -> text or
//! JSON.

use std::io::{self, BufWriter, IsTerminal, Write};
use std::process::ExitCode;

use anyhow::{Result, anyhow};
use profiler_model::{AsmSyntax, Disassembler};
use profiler_report::{
    AnnotateOptions, AnnotateView, Places, StackOptions, annotate, read_stacks,
    render_annotation_json, render_annotation_text,
};
use profiler_symbols::SourceFiles;

use crate::args::{AnnotateArgs, AsmSyntaxArg, ColorChoice, Format};
use crate::symbols::with_symbolizer;

pub fn run(args: AnnotateArgs) -> Result<ExitCode> {
    let recording = crate::input::open(&args.input.path)?;
    // Functions are those holding the code, as perf annotate takes symbols;
    // code inlined into them is marked in the listing.
    let stack_options = StackOptions {
        event: Some(args.event.clone().unwrap_or_else(|| "0".into())),
        fold_inline: true,
        places: Places::Addresses,
        ..StackOptions::default()
    };
    let syntax = match args.asm_syntax {
        AsmSyntaxArg::Att => AsmSyntax::Att,
        AsmSyntaxArg::Intel => AsmSyntax::Intel,
    };
    let (stacks, target, listing) =
        with_symbolizer(&args.symbols, &recording, |symbolizer, unwinder| {
            let stacks = read_stacks(&recording, symbolizer, unwinder, &stack_options)?;
            let target = stacks.find_function(&args.symbol)?;
            let listing = symbolizer
                .inner
                .listing(&target.module, target.address, syntax)
                .map_err(|problem| anyhow!("cannot annotate {}: {problem}", args.symbol))?;
            anyhow::Ok((stacks, target, listing))
        })?;
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
