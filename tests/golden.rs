//! Expected outputs: what a command wrote, compared with a file under
//! `tests/expected/`, once the paths of this checkout are replaced by
//! placeholders (`$DIR` for the test's directory, `$FIXTURES` for the
//! built fixtures, `$REPO` for the checkout).
//!
//! `PROFILER_BLESS=1 cargo test --test integration` writes what the
//! commands print into the expected files instead, for changes that are
//! meant: review `git diff tests/expected` before committing it. Never
//! under CI, and never on its own: a test without its expected file fails.

use std::path::{Path, PathBuf};

/// Where the expected outputs live.
fn expected_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected")
}

/// Whether this run rewrites the expected files.
fn blessing() -> bool {
    let bless = std::env::var_os("PROFILER_BLESS").is_some_and(|v| v == "1");
    assert!(
        !(bless && profiler_testing::ci()),
        "PROFILER_BLESS=1 under CI=true: expected outputs are blessed by hand, never by CI"
    );
    bless
}

/// `text` with this checkout's paths replaced by placeholders, `dir` (the
/// test's directory) first, as it lies inside the checkout.
pub(crate) fn normalize(text: &str, dir: &Path) -> String {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fixtures = crate::util::fixture("stable");
    let fixtures = fixtures.parent().unwrap();
    let mut text = text.to_owned();
    for (path, placeholder) in [(dir, "$DIR"), (fixtures, "$FIXTURES"), (repo, "$REPO")] {
        text = text.replace(path.to_str().unwrap(), placeholder);
    }
    text
}

/// Compares `actual` with `tests/expected/{name}`, or writes it there when
/// blessing.
pub(crate) fn assert_expected(name: &str, actual: &[u8]) {
    let path = expected_dir().join(name);
    if blessing() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; PROFILER_BLESS=1 writes it from what the command printed",
            path.display()
        )
    });
    if expected != actual {
        panic!(
            "{name} differs from what the command printed:\n{}\nif the change is meant, \
             PROFILER_BLESS=1 rewrites tests/expected; review the diff",
            first_difference(&expected, actual)
        );
    }
}

/// The first lines where `expected` and `actual` part.
fn first_difference(expected: &[u8], actual: &[u8]) -> String {
    let (expected, actual) = (
        String::from_utf8_lossy(expected),
        String::from_utf8_lossy(actual),
    );
    let (mut old, mut new) = (expected.lines(), actual.lines());
    let mut number = 1;
    loop {
        match (old.next(), new.next()) {
            (Some(a), Some(b)) if a == b => number += 1,
            (None, None) => return "(they differ in bytes, not lines)".into(),
            (a, b) => {
                let show = |line: Option<&str>| line.unwrap_or("(the end)").to_owned();
                return format!(
                    "line {number}:\n  expected: {}\n  printed:  {}",
                    show(a),
                    show(b)
                );
            }
        }
    }
}
