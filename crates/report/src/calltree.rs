//! The call tree of `report --call-graph`: callers first (from the roots
//! down to what they call, `caller`) or callees first (from the functions
//! samples were taken in up through their callers, `callee`), each node
//! with the share of the event's samples that went through it. Functions
//! inlined into their callers are nodes of their own, marked inlined.

use std::collections::HashMap;

use crate::naming::FunctionId;
use crate::samples::Weight;
use crate::stacks::{NamedStack, StackProfile};

/// Which end of the stacks the tree grows from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TreeDirection {
    /// Roots first: each node's children are the functions it called.
    Caller,
    /// Leaves first: each node's children are the functions that called it.
    Callee,
}

/// A call tree, pruned below a share.
#[derive(Clone, Debug, PartialEq)]
pub struct CallTree {
    pub direction: TreeDirection,
    pub roots: Vec<CallNode>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CallNode {
    pub name: String,
    pub module: String,
    /// A function inlined into its caller: the same code, no call.
    pub inlined: bool,
    /// The samples whose stacks pass through this path.
    pub weight: Weight,
    /// Their share of the event's period, in percent.
    pub percent: f64,
    /// Most first.
    pub children: Vec<CallNode>,
}

struct TrieNode {
    /// `None` at the root.
    function: Option<FunctionId>,
    weight: Weight,
    children: HashMap<FunctionId, usize>,
}

pub(crate) fn call_tree(
    stacks: &StackProfile,
    part: &[&NamedStack],
    direction: TreeDirection,
    percent_limit: f64,
) -> CallTree {
    let mut nodes = vec![TrieNode {
        function: None,
        weight: Weight::default(),
        children: HashMap::new(),
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
                        children: HashMap::new(),
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
    let total = nodes[0].weight.period.max(1) as f64;
    let build = Builder {
        stacks,
        nodes: &nodes,
        total,
        percent_limit,
    };
    CallTree {
        direction,
        roots: build.children(0),
    }
}

struct Builder<'a> {
    stacks: &'a StackProfile,
    nodes: &'a [TrieNode],
    total: f64,
    percent_limit: f64,
}

impl Builder<'_> {
    fn children(&self, index: usize) -> Vec<CallNode> {
        let mut children: Vec<CallNode> = self.nodes[index]
            .children
            .values()
            .filter_map(|&child| {
                let node = &self.nodes[child];
                let percent = node.weight.period as f64 * 100.0 / self.total;
                if percent < self.percent_limit {
                    return None;
                }
                let key = &self.stacks.functions[node.function?.index()];
                Some(CallNode {
                    name: key.name.clone(),
                    module: self.stacks.module_names(key.module).0,
                    inlined: key.inlined,
                    weight: node.weight,
                    percent,
                    children: self.children(child),
                })
            })
            .collect();
        children.sort_by(|a, b| {
            (b.weight.period, &a.name, &a.module).cmp(&(a.weight.period, &b.name, &b.module))
        });
        children
    }
}
