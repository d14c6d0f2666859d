//! The call tree of `report --call-graph` as text, after the flat
//! profile: one row per node, indented by its depth.

use std::io::{self, Write};

use crate::views::call_tree::{CallTree, TreeDirection};

/// How many levels a call tree's rows are indented at most.
const MAX_TREE_INDENT: usize = 32;

/// The call tree, indented, each node with its share of the event.
pub(crate) fn render_call_tree(tree: &CallTree, out: &mut impl Write) -> io::Result<()> {
    let title = match tree.direction {
        TreeDirection::Caller => "callers first: each function, then what it called",
        TreeDirection::Callee => "callees first: each function, then what called it",
    };
    writeln!(out, "#")?;
    writeln!(out, "# Call tree, {title}")?;
    writeln!(out, "#")?;
    for node in &tree.nodes {
        let inlined = match node.inlined {
            true => " (inlined)",
            false => "",
        };
        // Deeper than the cap, rows stay at its indentation and say how
        // deep they are, counting the roots as 1.
        let depth = match node.depth > MAX_TREE_INDENT {
            true => format!("(depth {}) ", node.depth + 1),
            false => String::new(),
        };
        writeln!(
            out,
            "  {:>6.2}%  {}{depth}{}{inlined} [{}]",
            node.percent,
            "  ".repeat(node.depth.min(MAX_TREE_INDENT)),
            node.name,
            node.module
        )?;
    }
    Ok(())
}
