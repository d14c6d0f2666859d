//! The call tree of `report --call-graph` as text, after the flat
//! profile: one row per node, indented by its depth.

use std::io::{self, Write};

use crate::render::fit::{RowWidth, columns, fit_name};
use crate::views::call_tree::{CallTree, TreeDirection};

/// How many levels a call tree's rows are indented at most.
const MAX_TREE_INDENT: usize = 32;

/// The call tree, indented, each node with its share of the event; names
/// give way where a row would be wider than `width`.
pub(crate) fn render_call_tree(
    tree: &CallTree,
    width: RowWidth,
    out: &mut impl Write,
) -> io::Result<()> {
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
        let indent = "  ".repeat(node.depth.min(MAX_TREE_INDENT));
        let module = format!(" [{}]", node.module);
        let used = 11 + indent.len() + columns(&depth) + inlined.len() + columns(&module);
        let name = match width.room_after(used) {
            Some(room) => fit_name(&node.name, room),
            None => node.name.clone(),
        };
        writeln!(
            out,
            "  {:>6.2}%  {indent}{depth}{name}{inlined}{module}",
            node.percent,
        )?;
    }
    Ok(())
}
