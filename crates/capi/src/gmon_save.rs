//! `prof_save`: a session's histograms written as a `gmon.out`, the file
//! glibc's profil writes and GNU `gprof -p PROGRAM FILE` reads, named for
//! the MPI rank where a launcher started the process, so that every rank of
//! a job writes its own file without the program naming them.
//!
//! The layout is glibc's (`gmon/gmon.c`): `"gmon"`, version 1, 12 spare
//! bytes; per region a tag byte 0, `low_pc` and `high_pc` (pointer-sized),
//! the number of bins and the sampling rate (4 bytes each), the dimension
//! (15 bytes) and its abbreviation, then the bins, 16 bits each held at
//! 65535, in the machine's byte order. Addresses are as the module states
//! them: a position-independent module's are less its load address.

#![allow(unsafe_code)]

use std::ffi::c_int;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use profiler_histogram::{Buckets, Region};
use profiler_model::JobInfo;

use crate::errors::CallError;
use crate::types::PROF_ESYS;

/// The name `given` (or `gmon.out`) becomes in this process: with `.RANK`
/// (zero-padded to the job's size) added under a launcher.
pub(crate) fn saved_name(given: Option<&str>, job: Option<&JobInfo>) -> PathBuf {
    let base = given.unwrap_or("gmon.out");
    match job.and_then(JobInfo::padded_rank) {
        Some(rank) => PathBuf::from(format!("{base}.{rank}")),
        None => PathBuf::from(base),
    }
}

/// What goes into the file besides the counts.
pub(crate) struct GmonEvent<'a> {
    pub name: &'a str,
    /// Events per sample (nanoseconds for the clocks).
    pub threshold: u64,
}

/// The file's bytes: each region's buckets at the addresses its module
/// states. A scale that gives buckets a fraction of a byte's width cannot
/// be said in gmon's bins and is refused.
pub(crate) fn gmon_bytes(
    regions: &[(Region, Buckets)],
    event: &GmonEvent<'_>,
) -> Result<Vec<u8>, CallError> {
    let mut out = Vec::new();
    out.extend_from_slice(b"gmon");
    out.extend_from_slice(&1u32.to_ne_bytes());
    out.extend_from_slice(&[0; 12]);
    let clock = matches!(
        event.name.split(':').next(),
        Some("cpu-clock" | "task-clock")
    );
    // Samples a second for the clocks; otherwise each bin counts samples.
    let (rate, dimension, abbreviation) = match clock {
        true => (
            (1_000_000_000 / event.threshold.max(1)).max(1),
            "seconds",
            b's',
        ),
        false => (1, "samples", b'n'),
    };
    for (region, buckets) in regions {
        let width = region.end() - region.first_address(0);
        if buckets.is_empty() || width % buckets.len() as u64 != 0 {
            return Err(CallError::invalid(format!(
                "scale gives buckets of {:.2} bytes; gmon.out needs a whole number of bytes per \
                 bucket (scale 65536, 32768, 16384, ...)",
                width as f64 / buckets.len().max(1) as f64
            )));
        }
        let low = stated(region.first_address(0));
        out.push(0);
        out.extend_from_slice(&(low as usize).to_ne_bytes());
        out.extend_from_slice(&((low + width) as usize).to_ne_bytes());
        out.extend_from_slice(&(buckets.len() as u32).to_ne_bytes());
        out.extend_from_slice(&(u32::try_from(rate).unwrap_or(u32::MAX)).to_ne_bytes());
        let mut name = [0u8; 15];
        name[..dimension.len()].copy_from_slice(dimension.as_bytes());
        out.extend_from_slice(&name);
        out.push(abbreviation);
        buckets.write_u16_ne(&mut out);
    }
    Ok(out)
}

/// Writes `bytes` to `path` whole: into a new file beside it, renamed over
/// it once complete. Anything there but a regular file is refused and
/// left alone.
pub(crate) fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), CallError> {
    if let Ok(meta) = std::fs::symlink_metadata(path)
        && !meta.file_type().is_file()
    {
        return Err(CallError::invalid(format!(
            "{} is not a regular file; give another name to prof_save",
            path.display()
        )));
    }
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(format!(".tmp{}", std::process::id()));
    let temporary = PathBuf::from(temporary);
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(&temporary)
        .and_then(|mut file| {
            file.write_all(bytes)?;
            file.sync_all()
        });
    let renamed = written.and_then(|()| std::fs::rename(&temporary, path));
    renamed.map_err(|error| {
        let _ = std::fs::remove_file(&temporary);
        CallError {
            code: PROF_ESYS,
            message: format!("cannot save {}: {error}", path.display()).into(),
        }
    })
}

/// `address` as its module states it: less the module's load bias, which
/// is 0 for a program linked at a fixed address.
fn stated(address: u64) -> u64 {
    let mut found = Found {
        address,
        bias: None,
    };
    // SAFETY: the loader calls `each_module` with a valid `dl_phdr_info`
    // and the pointer given here, which outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(each_module), (&raw mut found).cast()) };
    address.wrapping_sub(found.bias.unwrap_or(0))
}

struct Found {
    address: u64,
    bias: Option<u64>,
}

unsafe extern "C" fn each_module(
    info: *mut libc::dl_phdr_info,
    _size: libc::size_t,
    data: *mut std::ffi::c_void,
) -> c_int {
    // SAFETY: `data` is the `Found` that `stated` passed, and `info` the
    // loader's description of one module, its `dlpi_phnum` program headers
    // at `dlpi_phdr`: dl_iterate_phdr's contract.
    let (found, info) = unsafe { (&mut *data.cast::<Found>(), &*info) };
    let headers = match info.dlpi_phdr.is_null() {
        true => &[][..],
        // SAFETY: as above.
        false => unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum.into()) },
    };
    let bias = info.dlpi_addr;
    let holds = headers.iter().any(|header| {
        let start = bias.wrapping_add(header.p_vaddr);
        header.p_type == libc::PT_LOAD
            && (start..start.wrapping_add(header.p_memsz)).contains(&found.address)
    });
    if holds {
        found.bias = Some(bias);
    }
    c_int::from(holds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use profiler_histogram::{BucketWidth, Scale};

    #[test]
    fn a_rank_gets_its_own_name() {
        let job = JobInfo {
            rank: Some(3),
            size: Some(16),
            ..JobInfo::default()
        };
        assert_eq!(saved_name(None, Some(&job)), Path::new("gmon.out.03"));
        assert_eq!(saved_name(Some("prof"), Some(&job)), Path::new("prof.03"));
        assert_eq!(saved_name(None, None), Path::new("gmon.out"));
    }

    #[test]
    fn the_bytes_are_glibcs_layout() {
        // Outside any module: the address stays as it is.
        let region = Region::with_buckets(0x1000, 4, Scale::new(65536).unwrap()).unwrap();
        let mut buckets = Buckets::new(BucketWidth::Bits32, 4);
        buckets.add(1, 70_000, profiler_histogram::OnFull::Saturate);
        buckets.add(2, 7, profiler_histogram::OnFull::Saturate);
        let event = GmonEvent {
            name: "cpu-clock",
            threshold: 250_000,
        };
        let bytes = gmon_bytes(&[(region, buckets)], &event).unwrap();
        let word = size_of::<usize>();
        assert_eq!(&bytes[..4], b"gmon");
        let record = &bytes[20..];
        assert_eq!(record[0], 0);
        let at = |i: usize| usize::from_ne_bytes(record[i..i + word].try_into().unwrap());
        assert_eq!((at(1), at(1 + word)), (0x1000, 0x1008));
        let rest = &record[1 + 2 * word..];
        assert_eq!(u32::from_ne_bytes(rest[..4].try_into().unwrap()), 4);
        assert_eq!(u32::from_ne_bytes(rest[4..8].try_into().unwrap()), 4000);
        assert_eq!(&rest[8..15], b"seconds");
        assert_eq!(rest[23], b's');
        let bins: Vec<u16> = (rest[24..].chunks_exact(2))
            .map(|b| u16::from_ne_bytes([b[0], b[1]]))
            .collect();
        assert_eq!(bins, [0, u16::MAX, 7, 0]);
    }
}
