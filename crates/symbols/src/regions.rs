//! Stated addresses (as `nm` and `objdump` print them) to file offsets, for
//! histogram regions given by address.

use std::path::Path;

use profiler_model::{FileOffset, Svma};

use crate::error::SymbolsError;
use crate::image::{self, Image};

/// The file offset of each of `addresses` in the ELF file at `path`; `None`
/// for an address no loadable segment holds.
pub fn file_offsets(
    path: &Path,
    addresses: &[Svma],
) -> Result<Vec<Option<FileOffset>>, SymbolsError> {
    let display = path.display().to_string();
    let bytes = image::open(path).map_err(|error| SymbolsError::Read {
        path: display.clone(),
        error,
    })?;
    let image = Image::parse(&bytes).map_err(|error| SymbolsError::Parse {
        path: display,
        error,
    })?;
    Ok(addresses
        .iter()
        .map(|&a| image.layout.file_offset(a))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stated_addresses_map_back_to_the_offsets_they_came_from() {
        let exe = std::env::current_exe().unwrap();
        let bytes = image::open(&exe).unwrap();
        let image = Image::parse(&bytes).unwrap();
        let offsets = [FileOffset(0x1000), FileOffset(0x1234)];
        let svmas: Vec<Svma> = offsets
            .iter()
            .map(|&o| image.layout.svma(o).unwrap())
            .collect();
        let back = file_offsets(&exe, &svmas).unwrap();
        assert_eq!(back, vec![Some(offsets[0]), Some(offsets[1])]);
        assert_eq!(
            file_offsets(&exe, &[Svma(u64::MAX - 1)]).unwrap(),
            vec![None]
        );
        assert!(file_offsets(Path::new("/no/such/file"), &[]).is_err());
    }
}
