//! `perf report`'s `--comms`, `--dsos` and `--symbols`: which rows a report
//! shows. As perf's default `--percentage absolute` has it, the shares stay
//! shares of the whole event: what the filters hide still counts in the
//! total.

use crate::read::stacks::{NamedStack, StackProfile};
use crate::views::tasks::Leaf;

/// The rows to show (an empty list admits all).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RowFilter {
    /// Command names: samples taken under one of them.
    pub comms: Vec<String>,
    /// Modules, by file name or path (`[kernel.kallsyms]`, perf's name for
    /// the kernel, is `[kernel]`): rows of functions in one of them, and
    /// of samples whose code lies in one.
    pub dsos: Vec<String>,
    /// Functions, by name as the report prints them: their rows, and the
    /// samples taken in them.
    pub symbols: Vec<String>,
}

impl RowFilter {
    pub fn is_empty(&self) -> bool {
        self.comms.is_empty() && self.dsos.is_empty() && self.symbols.is_empty()
    }

    /// Whether samples taken under the command `name` count in rows.
    pub(crate) fn admits_command(&self, name: &str) -> bool {
        self.comms.is_empty() || self.comms.iter().any(|c| c == name)
    }

    /// Whether a function of the module called `name` (at `path`), named
    /// `function`, has a row.
    pub(crate) fn admits_function(&self, name: &str, path: &str, function: &str) -> bool {
        self.admits_module(name, path)
            && (self.symbols.is_empty() || self.symbols.iter().any(|s| s == function))
    }

    pub(crate) fn admits_module(&self, name: &str, path: &str) -> bool {
        let kernel = |dso: &str| dso == "[kernel.kallsyms]" && name == "[kernel]";
        self.dsos.is_empty()
            || (self.dsos.iter()).any(|dso| dso == name || dso == path || kernel(dso))
    }

    /// Whether `stack` was taken under one of the commands.
    pub(crate) fn admits_stack(&self, stacks: &StackProfile, stack: &NamedStack) -> bool {
        let command = (stacks.commands.get(stack.command.index())).map_or("", String::as_str);
        self.admits_command(command)
    }

    /// Whether the code a sample was taken in passes the filter: its
    /// command, and the module and function its row counts it for.
    pub(crate) fn admits_leaf(&self, stacks: &StackProfile, leaf: &Leaf) -> bool {
        let key = &stacks.functions[leaf.row.index()];
        let (name, path) = stacks.module_names(key.module);
        self.admits_stack(stacks, leaf.stack) && self.admits_function(&name, &path, &key.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modules_match_by_name_or_path_and_the_kernel_by_perfs_name() {
        let filter = RowFilter {
            dsos: vec![
                "libc.so.6".into(),
                "/bin/app".into(),
                "[kernel.kallsyms]".into(),
            ],
            ..RowFilter::default()
        };
        assert!(filter.admits_module("libc.so.6", "/lib/libc.so.6"));
        assert!(filter.admits_module("app", "/bin/app"));
        assert!(filter.admits_module("[kernel]", "[kernel]"));
        assert!(!filter.admits_module("ld.so", "/lib/ld.so"));
        assert!(RowFilter::default().admits_module("ld.so", "/lib/ld.so"));
    }

    #[test]
    fn symbols_and_commands_match_whole_names() {
        let filter = RowFilter {
            comms: vec!["sh".into()],
            symbols: vec!["main".into()],
            ..RowFilter::default()
        };
        assert!(filter.admits_function("app", "/bin/app", "main"));
        assert!(!filter.admits_function("app", "/bin/app", "main2"));
        assert!(filter.admits_command("sh"));
        assert!(!filter.admits_command("bash"));
    }
}
