//! The call tree of `report --call-graph`: callers first (from the roots
//! down to what they call, `caller`) or callees first (from the functions
//! samples were taken in up through their callers, `callee`), each node
//! with the share of the event's samples that went through it. Functions
//! inlined into their callers are nodes of their own, marked inlined.

use rustc_hash::FxHashMap;

use crate::read::naming::FunctionId;
use crate::read::stacks::{NamedStack, StackProfile};
use crate::read::weight::Weight;

/// Which end of the stacks the tree grows from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TreeDirection {
    /// Roots first: each node's children are the functions it called.
    Caller,
    /// Leaves first: each node's children are the functions that called it.
    Callee,
}

/// A call tree, pruned below a share, as its rows: each node followed by
/// its children, most first. Flat, so that no stack is deep enough to
/// overflow the reader's while it is built, printed or dropped.
#[derive(Clone, Debug, PartialEq)]
pub struct CallTree {
    pub direction: TreeDirection,
    pub nodes: Vec<CallNode>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CallNode {
    /// 0 for a root, 1 for its children, and so on.
    pub depth: usize,
    pub name: String,
    pub module: String,
    /// A function inlined into its caller: the same code, no call.
    pub inlined: bool,
    /// The samples whose stacks pass through this path.
    pub weight: Weight,
    /// Their share of the event's period, in percent.
    pub percent: f64,
}

struct TrieNode {
    /// `None` at the root.
    function: Option<FunctionId>,
    weight: Weight,
    children: FxHashMap<FunctionId, usize>,
}

/// The tree of the stacks of `part`, each node's share of `total` (the
/// event's period, which stacks left out of `part` count in).
pub(crate) fn call_tree(
    stacks: &StackProfile,
    part: &[&NamedStack],
    direction: TreeDirection,
    percent_limit: f64,
    total: u64,
) -> CallTree {
    let mut nodes = vec![TrieNode {
        function: None,
        weight: Weight::default(),
        children: FxHashMap::default(),
    }];
    for stack in part {
        let mut at = 0;
        nodes[0].weight.add(stack.weight);
        let path: Box<dyn Iterator<Item = &FunctionId>> = match direction {
            TreeDirection::Caller => Box::new(stack.frames.iter().rev()),
            TreeDirection::Callee => Box::new(stack.frames.iter()),
        };
        for &function in path {
            let next = match nodes[at].children.get(&function) {
                Some(&next) => next,
                None => {
                    nodes.push(TrieNode {
                        function: Some(function),
                        weight: Weight::default(),
                        children: FxHashMap::default(),
                    });
                    let next = nodes.len() - 1;
                    nodes[at].children.insert(function, next);
                    next
                }
            };
            nodes[next].weight.add(stack.weight);
            at = next;
        }
    }
    let total = total.max(1) as f64;
    let build = Builder {
        stacks,
        nodes: &nodes,
        total,
        percent_limit,
    };
    CallTree {
        direction,
        nodes: build.rows(),
    }
}

struct Builder<'a> {
    stacks: &'a StackProfile,
    nodes: &'a [TrieNode],
    total: f64,
    percent_limit: f64,
}

impl Builder<'_> {
    /// Depth first, from a stack of its own rather than by recursion.
    fn rows(&self) -> Vec<CallNode> {
        let mut rows = Vec::new();
        let mut pending: Vec<(usize, usize)> = Vec::new();
        self.push_children(0, 0, &mut pending);
        while let Some((index, depth)) = pending.pop() {
            let node = &self.nodes[index];
            let Some(function) = node.function else {
                continue;
            };
            let key = &self.stacks.functions[function.index()];
            rows.push(CallNode {
                depth,
                name: key.name.clone(),
                module: self.stacks.module_names(key.module).0,
                inlined: key.inlined,
                weight: node.weight,
                percent: self.percent(node),
            });
            self.push_children(index, depth + 1, &mut pending);
        }
        rows
    }

    fn percent(&self, node: &TrieNode) -> f64 {
        node.weight.period as f64 * 100.0 / self.total
    }

    /// The children of node `index` that are not pruned, onto `pending` so
    /// that the heaviest comes off first.
    fn push_children(&self, index: usize, depth: usize, pending: &mut Vec<(usize, usize)>) {
        let mut children: Vec<usize> = (self.nodes[index].children.values().copied())
            .filter(|&child| self.percent(&self.nodes[child]) >= self.percent_limit)
            .collect();
        let key = |child: usize| {
            let node = &self.nodes[child];
            let function = &self.stacks.functions[node.function.map_or(0, |f| f.index())];
            let module = self.stacks.module_names(function.module).0;
            (
                std::cmp::Reverse(node.weight.period),
                &function.name,
                module,
            )
        };
        children.sort_by_cached_key(|&child| key(child));
        pending.extend(children.into_iter().rev().map(|child| (child, depth)));
    }
}
