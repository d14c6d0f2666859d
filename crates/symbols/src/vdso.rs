//! The vdso, the small library the kernel maps into every process. It has
//! no file: its image is read from this process's own memory, which holds
//! the same vdso when the recording was made under the running kernel.

use std::io::{Read, Seek, SeekFrom};

/// This process's vdso image.
pub(crate) fn own_vdso() -> Option<Vec<u8>> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let line = maps.lines().find(|l| l.ends_with("[vdso]"))?;
    let (start, end) = line.split_whitespace().next()?.split_once('-')?;
    let (start, end) = (
        u64::from_str_radix(start, 16).ok()?,
        u64::from_str_radix(end, 16).ok()?,
    );
    let mut memory = std::fs::File::open("/proc/self/mem").ok()?;
    memory.seek(SeekFrom::Start(start)).ok()?;
    let mut image = vec![0; usize::try_from(end.checked_sub(start)?).ok()?];
    memory.read_exact(&mut image).ok()?;
    Some(image)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_vdso_is_an_elf_image() {
        let image = super::own_vdso().expect("this process has a vdso");
        assert_eq!(&image[..4], b"\x7fELF");
    }
}
