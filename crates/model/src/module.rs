//! Modules: the files (and special regions) that code is mapped from.

use std::collections::HashMap;

use crate::address::{Avma, FileOffset};
use crate::record::BuildId;

/// Index of a module in a [`ModuleTable`].
pub type ModuleId = u32;

/// A file mapped executable into a profiled process, or a special region.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Module {
    /// The path the kernel reported (`/usr/lib/.../libc.so.6`), or a bracketed
    /// name for regions without a file (`[vdso]`, `//anon`).
    pub path: String,
    pub build_id: Option<BuildId>,
    /// For anonymous memory (JIT-compiled code), the process it belongs to:
    /// its file offsets are its addresses, named by `/tmp/perf-PID.map`.
    pub pid: Option<u32>,
}

impl Module {
    /// The short name reports show: the file name, or the region's name.
    pub fn name(&self) -> &str {
        match self.path.as_str() {
            "//anon" | "" => "[anon]",
            p if p.starts_with('[') => p,
            p => p.rsplit('/').next().unwrap_or(p),
        }
    }

    /// Where `offset` of anonymous memory (JIT code) lies in its process.
    /// The kernel states an anonymous mapping's page offset as its own
    /// address (`vm_pgoff` is `vm_start >> PAGE_SHIFT`), so such a module's
    /// offsets are the addresses themselves.
    pub fn anonymous_avma(offset: FileOffset) -> Avma {
        Avma(offset.0)
    }

    /// Whether the module is anonymous memory rather than a file.
    pub fn is_anonymous(path: &str) -> bool {
        matches!(path, "//anon" | "" | "/dev/zero" | "/anon_hugepage") || path.starts_with("[anon")
    }

    /// Whether the module is backed by a file one could open.
    pub fn has_file(&self) -> bool {
        self.path.starts_with('/') && !self.path.starts_with("//")
    }
}

/// Interns modules by path and build-id.
#[derive(Debug, Default)]
pub struct ModuleTable {
    modules: Vec<Module>,
    index: HashMap<(String, Option<BuildId>, Option<u32>), ModuleId>,
}

impl ModuleTable {
    /// The module of a file (`pid` is `None`), or of one process's
    /// anonymous memory.
    pub fn intern(&mut self, path: &str, build_id: Option<&BuildId>, pid: Option<u32>) -> ModuleId {
        let key = (path.to_owned(), build_id.cloned(), pid);
        if let Some(&id) = self.index.get(&key) {
            return id;
        }
        let id = self.modules.len() as ModuleId;
        self.modules.push(Module {
            path: key.0.clone(),
            build_id: key.1.clone(),
            pid,
        });
        self.index.insert(key, id);
        id
    }

    pub fn get(&self, id: ModuleId) -> &Module {
        &self.modules[id as usize]
    }

    pub fn iter(&self) -> impl Iterator<Item = (ModuleId, &Module)> {
        self.modules
            .iter()
            .enumerate()
            .map(|(i, m)| (i as ModuleId, m))
    }

    pub fn len(&self) -> usize {
        self.modules.len()
    }

    pub fn is_empty(&self) -> bool {
        self.modules.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_file_names_or_region_names() {
        let m = |p: &str| Module {
            path: p.into(),
            build_id: None,
            pid: None,
        };
        assert_eq!(m("/usr/lib/libc.so.6").name(), "libc.so.6");
        assert_eq!(m("[vdso]").name(), "[vdso]");
        assert_eq!(m("//anon").name(), "[anon]");
        assert!(m("/bin/true").has_file());
        assert!(!m("[vdso]").has_file());
        assert!(!m("//anon").has_file());
    }

    #[test]
    fn interning_is_by_path_and_build_id() {
        let mut table = ModuleTable::default();
        let a = table.intern("/a", None, None);
        let id = BuildId(vec![1, 2]);
        let b = table.intern("/a", Some(&id), None);
        assert_ne!(a, b);
        assert_eq!(table.intern("/a", None, None), a);
        assert_eq!(table.len(), 2);
    }
}
