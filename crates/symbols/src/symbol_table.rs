//! Whether a file has the symbol table (`.symtab`) that GNU gprof names
//! code from: gprof reads no other, so a distribution's stripped library,
//! named here from its dynamic symbols, is to gprof a file with no
//! symbols; its separate debug file, where one is installed, has them.

use std::path::{Path, PathBuf};

use object::{Object, ObjectSymbol, SymbolKind};

use crate::debug_file::find_debug_file;
use crate::error::SymbolsError;
use crate::image::{self, Image};

/// Where the function symbols of a file lie.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SymbolTable {
    /// In its own `.symtab`.
    InFile,
    /// Not in the file (it is stripped), but in its separate debug file.
    InDebugFile(PathBuf),
    /// Nowhere gprof would read them.
    Missing,
}

/// Where the function symbols of the ELF file at `path` lie, its debug
/// file looked for under `debug_dirs` and /usr/lib/debug.
pub fn symbol_table(path: &Path, debug_dirs: &[PathBuf]) -> Result<SymbolTable, SymbolsError> {
    let read = |error| SymbolsError::Read {
        path: path.display().to_string(),
        error,
    };
    let parse = |error| SymbolsError::Parse {
        path: path.display().to_string(),
        error,
    };
    let bytes = image::open(path).map_err(read)?;
    let image = Image::parse(&bytes).map_err(parse)?;
    if has_functions(&image.object) {
        return Ok(SymbolTable::InFile);
    }
    let debug = find_debug_file(path, &image, debug_dirs);
    let in_debug = debug.filter(|debug| {
        object::File::parse(&*debug.bytes).is_ok_and(|object| has_functions(&object))
    });
    Ok(in_debug.map_or(SymbolTable::Missing, |debug| {
        SymbolTable::InDebugFile(debug.path)
    }))
}

/// Whether `object`'s `.symtab` defines a function.
fn has_functions<'data>(object: &impl Object<'data>) -> bool {
    (object.symbols()).any(|symbol| symbol.kind() == SymbolKind::Text && symbol.is_definition())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_test_binary_has_its_symbols_and_a_stripped_copy_has_none() {
        let exe = std::env::current_exe().unwrap();
        assert_eq!(symbol_table(&exe, &[]).unwrap(), SymbolTable::InFile);
        let dir = std::env::temp_dir().join(format!("symbol-table-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let stripped = dir.join("stripped");
        let status = std::process::Command::new("objcopy")
            .args(["--strip-all", "--remove-section=.gnu_debuglink"])
            .arg(&exe)
            .arg(&stripped)
            .status();
        if status.is_ok_and(|s| s.success()) {
            assert_eq!(symbol_table(&stripped, &[]).unwrap(), SymbolTable::Missing);
        }
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(symbol_table(Path::new("/no/such/file"), &[]).is_err());
    }
}
