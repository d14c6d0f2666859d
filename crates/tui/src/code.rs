//! What an annotated listing is made from: the function's code and its
//! source files, read by the symbols crate behind the model's traits.

use profiler_model::{AsmSyntax, Disassembler, SourceReader, Symbolizer};

/// How a screen names code and lists functions.
#[derive(Clone, Copy)]
pub struct Code<'a> {
    pub symbolizer: &'a dyn Symbolizer,
    pub disassembler: &'a dyn Disassembler,
    pub sources: &'a dyn SourceReader,
    pub syntax: AsmSyntax,
}
