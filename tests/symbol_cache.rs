//! The names kept between reports ($XDG_CACHE_HOME/profiler): a report
//! that reads them prints what one that reads the program does, byte for
//! byte; a program changed since, or a damaged cache file, is named
//! afresh; a cache directory that is not safe is not used.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use profiler_model::BuildId;

use crate::synthetic::*;
use crate::util::*;

/// `dir/app`, a copy of the fixture whose hot_a, hot_b and hot_c share an
/// inlined loop, and `dir/app.data`, samples in each, with its build-id.
fn write_recording(dir: &Path) {
    let binary = dir.join("app");
    std::fs::copy(fixture("inlinesplit"), &binary).unwrap();
    let mut recording = Synthetic::new();
    recording.build_id = Some(build_id(&binary));
    recording.process(100, 0, "app", &binary);
    for (function, count) in [("hot_a", 60), ("hot_b", 30), ("hot_c", 10)] {
        let (inlined, own) = inlined_and_own(&binary, function, "burn");
        recording.samples(100, inlined, &[], count * 9);
        recording.samples(100, own, &[], count);
    }
    recording.write(&dir.join("app.data"), &["app"]);
}

/// The GNU build-id `readelf -n` finds in `binary`.
fn build_id(binary: &Path) -> BuildId {
    let output = Command::new("readelf")
        .arg("-n")
        .arg(binary)
        .output()
        .unwrap();
    let notes = String::from_utf8(output.stdout).unwrap();
    let hex = (notes.lines())
        .find_map(|line| line.trim().strip_prefix("Build ID: "))
        .unwrap_or_else(|| panic!("no build-id in {}", binary.display()));
    let bytes = (0..hex.len()).step_by(2);
    BuildId(
        bytes
            .map(|at| u8::from_str_radix(&hex[at..at + 2], 16).unwrap())
            .collect(),
    )
}

/// The views that name code by function, and by inline chain and line.
const VIEWS: [&[&str]; 3] = [
    &[],
    &["--format", "json"],
    &["--inline", "--sort", "symbol,srcline"],
];

/// Each view of `dir/app.data`, with names kept under `cache_home`.
fn reports(dir: &Path, cache_home: &Path, more: &[&str]) -> Vec<Vec<u8>> {
    (VIEWS.iter())
        .map(|view| {
            let output = profiler()
                .current_dir(dir)
                .env("XDG_CACHE_HOME", cache_home)
                .args(["report", "-i", "app.data"])
                .args(*view)
                .args(more)
                .output()
                .unwrap();
            assert!(output.status.success(), "{}", stderr(&output));
            output.stdout
        })
        .collect()
}

/// The cache files under `cache_home`, by name, with their inode.
fn cache_files(cache_home: &Path) -> Vec<(PathBuf, u64)> {
    let Ok(entries) = std::fs::read_dir(cache_home.join("profiler")) else {
        return Vec::new();
    };
    let mut files: Vec<(PathBuf, u64)> = (entries.flatten())
        .map(|entry| (entry.path(), entry.metadata().unwrap().ino()))
        .collect();
    files.sort();
    files
}

#[test]
fn reports_with_names_kept_print_what_reports_without_do() {
    let dir = scratch("symbol-cache-warm");
    write_recording(&dir);
    let cache = dir.join("cache");
    let uncached = reports(&dir, &cache, &["--no-symbol-cache"]);
    assert!(
        !cache.exists(),
        "--no-symbol-cache made {}",
        cache.display()
    );
    assert!(String::from_utf8_lossy(&uncached[0]).contains("hot_a"));

    let cold = reports(&dir, &cache, &[]);
    let kept = cache_files(&cache);
    assert!(!kept.is_empty(), "nothing kept in {}", cache.display());
    let mode = std::fs::metadata(cache.join("profiler")).unwrap().mode();
    assert_eq!(mode & 0o777, 0o700);
    // Made a while ago: a report that reads a file renews its time.
    let long_ago = SystemTime::now() - Duration::from_secs(3600);
    for (path, _) in &kept {
        let file = std::fs::File::options().write(true).open(path).unwrap();
        file.set_modified(long_ago).unwrap();
    }
    let warm = reports(&dir, &cache, &[]);
    assert_eq!(cold, uncached);
    assert_eq!(warm, uncached);
    // Read, not written again: every answer came from the files kept.
    assert_eq!(cache_files(&cache), kept);
    for (path, _) in &kept {
        let modified = std::fs::metadata(path).unwrap().modified().unwrap();
        assert!(
            modified > long_ago + Duration::from_secs(60),
            "{}",
            path.display()
        );
    }
}

#[test]
fn a_program_changed_since_or_a_damaged_cache_file_is_named_afresh() {
    let dir = scratch("symbol-cache-miss");
    write_recording(&dir);
    let cache = dir.join("cache");
    let uncached = reports(&dir, &cache, &["--no-symbol-cache"]);
    reports(&dir, &cache, &[]);
    let kept = cache_files(&cache);

    // The same bytes with another modification time: kept names unused.
    let binary = std::fs::File::options()
        .write(true)
        .open(dir.join("app"))
        .unwrap();
    binary
        .set_modified(SystemTime::now() + Duration::from_secs(5))
        .unwrap();
    drop(binary);
    assert_eq!(reports(&dir, &cache, &[]), uncached);
    let rewritten = cache_files(&cache);
    assert_eq!(rewritten.len(), kept.len());
    for ((path, before), (_, after)) in kept.iter().zip(&rewritten) {
        assert_ne!(before, after, "{} not written again", path.display());
    }

    // Another file at the same path, the same bytes and time.
    let copy = dir.join("app.copy");
    std::fs::copy(dir.join("app"), &copy).unwrap();
    let modified = std::fs::metadata(dir.join("app")).unwrap().modified();
    std::fs::File::options()
        .write(true)
        .open(&copy)
        .unwrap()
        .set_modified(modified.unwrap())
        .unwrap();
    std::fs::rename(&copy, dir.join("app")).unwrap();
    assert_eq!(reports(&dir, &cache, &[]), uncached);
    assert_ne!(cache_files(&cache), rewritten);

    // Cut short, or garbage: named afresh, the file made whole again.
    for (path, _) in cache_files(&cache) {
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() / 3]).unwrap();
    }
    assert_eq!(reports(&dir, &cache, &[]), uncached);
    for (path, _) in cache_files(&cache) {
        std::fs::write(&path, b"\x7fELF not a cache file").unwrap();
    }
    assert_eq!(reports(&dir, &cache, &[]), uncached);
    for (path, _) in cache_files(&cache) {
        assert!(std::fs::metadata(&path).unwrap().len() > 100);
    }
}

#[test]
fn a_cache_directory_that_is_a_link_or_that_others_may_write_is_not_used() {
    let dir = scratch("symbol-cache-refused");
    write_recording(&dir);
    let uncached = reports(&dir, &dir.join("none"), &["--no-symbol-cache"]);

    let linked = dir.join("linked");
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(&linked).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, linked.join("profiler")).unwrap();
    assert_eq!(reports(&dir, &linked, &[]), uncached);
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);

    for mode in [0o770, 0o777] {
        let shared = dir.join(format!("shared-{mode:o}"));
        std::fs::create_dir_all(shared.join("profiler")).unwrap();
        let permissions = std::fs::Permissions::from_mode(mode);
        std::fs::set_permissions(shared.join("profiler"), permissions).unwrap();
        assert_eq!(reports(&dir, &shared, &[]), uncached);
        assert_eq!(cache_files(&shared), [], "{mode:o}");
    }
}
