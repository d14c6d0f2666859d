//! `profiler top` and `report --tui` on a real terminal: the binary in a
//! tmux session of its own, driven with send-keys and read with
//! capture-pane; and `top`'s snapshots when its output is a pipe.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::util::{fixture, profiler, scratch};

/// A tmux server of the test's own (its own socket), ended with the test.
struct Tmux {
    socket: String,
}

impl Tmux {
    /// Starts `command` (a shell command line) in a detached session of
    /// `width` x `height`.
    fn start(test: &str, command: &str, width: u16, height: u16) -> Tmux {
        let tmux = Tmux {
            socket: format!("profiler-{test}-{}", std::process::id()),
        };
        let size = |n: u16| n.to_string();
        let started = tmux.run(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-x",
            &size(width),
            "-y",
            &size(height),
            command,
        ]);
        assert!(started.status.success(), "tmux: {}", text(&started.stderr));
        tmux
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .env_remove("TMUX")
            .output()
            .unwrap()
    }

    fn keys(&self, keys: &[&str]) {
        for key in keys {
            let sent = self.run(&["send-keys", "-t", "0", key]);
            assert!(
                sent.status.success(),
                "send-keys {key}: {}",
                text(&sent.stderr)
            );
            std::thread::sleep(Duration::from_millis(150));
        }
    }

    fn screen(&self) -> String {
        text(&self.run(&["capture-pane", "-p", "-t", "0"]).stdout)
    }

    /// The screen once `ready` holds of it, waiting up to `seconds`.
    fn wait_for(&self, seconds: u64, ready: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(seconds);
        loop {
            let screen = self.screen();
            if ready(&screen) || Instant::now() > deadline {
                return screen;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The share on the line of the table that ends with `function`.
fn share(screen: &str, function: &str) -> Option<f64> {
    let line = screen.lines().find(|l| l.trim_end().ends_with(function))?;
    line.split_whitespace()
        .next()?
        .trim_end_matches('%')
        .parse()
        .ok()
}

/// A shell command line that runs `args` as the profiler in `dir`, then
/// writes its exit status and the terminal's settings before and after.
fn shell_line(dir: &Path, args: &[&str]) -> String {
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let profiler = env!("CARGO_BIN_EXE_profiler");
    let args: Vec<String> = args.iter().map(|a| quote(a)).collect();
    format!(
        "cd {dir} && stty -g > before && {profiler} {args}; echo $? > status; stty -g > after; \
         sleep 600",
        dir = quote(&dir.display().to_string()),
        profiler = quote(profiler),
        args = args.join(" "),
    )
}

/// Waits for the status file the shell line writes; the status.
fn exit_status(dir: &Path) -> String {
    let path = dir.join("status");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !path.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(200));
    std::fs::read_to_string(&path)
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// The terminal was given back as it was found: the settings `stty -g`
/// printed before and after are the same, and the alternate screen is off.
fn assert_terminal_restored(tmux: &Tmux, dir: &Path) {
    let read = |name| std::fs::read_to_string(dir.join(name)).unwrap();
    assert_eq!(read("before"), read("after"), "stty -g before and after");
    let alternate = tmux.run(&["display-message", "-p", "-t", "0", "#{alternate_on}"]);
    assert_eq!(
        text(&alternate.stdout).trim(),
        "0",
        "the alternate screen is off"
    );
}

live_test!(top_shows_split_live_and_its_keys_work, || {
    if !profiler_testing::tool("tmux") {
        return;
    }
    let dir = scratch("top-tmux");
    let split = fixture("split");
    let split = split.to_str().unwrap();
    // Short rounds (6, 3 and 1 units, still 60/30/10), so that a few
    // seconds hold many of them even on a busy machine.
    let line = shell_line(&dir, &["top", "--", split, "100000000", "6", "3", "1"]);
    let tmux = Tmux::start("top", &line, 120, 40);
    // Three seconds of sampling, as the header counts them.
    let screen = tmux.wait_for(20, |s| {
        let seconds = s.lines().next().and_then(|l| l.rsplit(", ").next());
        let seconds = seconds.and_then(|t| t.trim_end_matches(" s").parse::<f64>().ok());
        seconds.is_some_and(|t| t >= 3.0)
            && ["burn_60", "burn_30", "burn_10"]
                .iter()
                .all(|f| share(s, f).is_some())
    });
    for (function, expected) in [("burn_60", 60.0), ("burn_30", 30.0), ("burn_10", 10.0)] {
        let found = share(&screen, function).unwrap_or_else(|| panic!("no {function}:\n{screen}"));
        assert!(
            (found - expected).abs() <= 5.0,
            "{function}: {found}%, not within 5 points of {expected}%:\n{screen}"
        );
    }
    // s: one row per module; the fixture's own holds nearly everything.
    tmux.keys(&["s"]);
    let by_module = tmux.wait_for(10, |s| s.contains("sort: module"));
    assert!(by_module.contains("sort: module"), "{by_module}");
    assert!(
        share(&by_module, "split").is_some_and(|s| s > 90.0),
        "{by_module}"
    );
    tmux.keys(&["s", "s", "s"]);
    // /: only the rows whose name holds the filter.
    tmux.keys(&["/", "b", "u", "r", "n", "_", "3", "Enter"]);
    let filtered = tmux.wait_for(10, |s| {
        s.contains("filter: burn_3") && !s.contains("burn_60")
    });
    assert!(filtered.contains("burn_30"), "{filtered}");
    assert!(
        !filtered.contains("burn_60") && !filtered.contains("burn_10"),
        "{filtered}"
    );
    // Enter: burn_30's listing, its hot line marked.
    tmux.keys(&["Enter"]);
    let listing = tmux.wait_for(15, |s| s.contains("--- disassembly ---"));
    let hot = listing.lines().find(|l| l.contains('*') && l.contains('%'));
    let hot = hot.unwrap_or_else(|| panic!("no hot line marked:\n{listing}"));
    assert!(
        hot.contains("burn_30("),
        "the hot line is burn_30's loop: {hot}\n{listing}"
    );
    let percent: f64 = hot
        .split_whitespace()
        .next()
        .unwrap()
        .trim_end_matches('%')
        .parse()
        .unwrap();
    assert!(percent > 50.0, "{hot}");
    // Back, then q: top exits 0 and the terminal is as it was.
    tmux.keys(&["Escape", "q"]);
    assert_eq!(exit_status(&dir), "0", "{}", tmux.screen());
    assert_terminal_restored(&tmux, &dir);
});

live_test!(top_prints_snapshots_when_piped, || {
    let dir = scratch("top-stdio");
    let split = fixture("split");
    for args in [vec![], vec!["--stdio"]] {
        let output = profiler()
            .current_dir(&dir)
            .arg("top")
            .args(&args)
            .args(["-d", "0.5", "--"])
            .arg(&split)
            .arg("8")
            .output()
            .unwrap();
        let stdout = text(&output.stdout);
        assert!(output.status.success(), "{}", text(&output.stderr));
        let heads: Vec<&str> = stdout
            .lines()
            .filter(|l| l.starts_with("# profiler top:"))
            .collect();
        assert!(
            heads.len() >= 2,
            "at least two snapshots ({args:?}):\n{stdout}"
        );
        assert!(
            heads
                .iter()
                .all(|h| h.contains("samples,") && h.contains(" s:")),
            "{heads:?}"
        );
        assert!(
            heads.last().unwrap().contains("exited with status 0"),
            "{heads:?}"
        );
        // The last snapshot holds the whole run: 60/30/10.
        let last = &stdout[stdout.rfind("# profiler top:").unwrap()..];
        for (function, expected) in [("burn_60", 60.0), ("burn_30", 30.0), ("burn_10", 10.0)] {
            let found = share(last, function).unwrap_or_else(|| panic!("{last}"));
            assert!(
                (found - expected).abs() <= 5.0,
                "{function} {found}%:\n{last}"
            );
        }
        assert!(
            !stdout.contains('\u{1b}'),
            "no escape sequences in a snapshot"
        );
    }
});

live_test!(report_tui_browses_a_recording, || {
    if !profiler_testing::tool("tmux") {
        return;
    }
    let dir = scratch("report-tui");
    let split = fixture("split");
    let recorded = profiler()
        .current_dir(&dir)
        .args(["record", "-g", "-o", "split.data", "--"])
        .arg(&split)
        .arg("15")
        .output()
        .unwrap();
    assert!(recorded.status.success(), "{}", text(&recorded.stderr));
    let line = shell_line(
        &dir,
        &["report", "--tui", "-i", "split.data", "--window", "0.5"],
    );
    let tmux = Tmux::start("report", &line, 100, 30);
    let screen = tmux.wait_for(10, |s| share(s, "burn_10").is_some());
    assert!(screen.contains("profiler report: cpu-clock"), "{screen}");
    for (function, expected) in [("burn_60", 60.0), ("burn_30", 30.0), ("burn_10", 10.0)] {
        let found = share(&screen, function).unwrap_or_else(|| panic!("{screen}"));
        assert!(
            (found - expected).abs() <= 5.0,
            "{function} {found}%:\n{screen}"
        );
    }
    // ]: the first half second only, fewer samples.
    tmux.keys(&["]"]);
    let window = tmux.wait_for(10, |s| s.contains("0.0-0.5 s of"));
    assert!(window.contains("0.0-0.5 s of"), "{window}");
    tmux.keys(&["["]);
    // c: burn_60's caller is main.
    tmux.keys(&["c"]);
    let panel = tmux.wait_for(10, |s| s.contains("<-"));
    assert!(
        panel
            .lines()
            .any(|l| l.contains("<-") && l.ends_with("main")),
        "{panel}"
    );
    tmux.keys(&["Enter"]);
    let listing = tmux.wait_for(15, |s| s.contains("--- disassembly ---"));
    assert!(
        listing
            .lines()
            .any(|l| l.contains('*') && l.contains("burn_60(")),
        "{listing}"
    );
    tmux.keys(&["q", "q"]);
    assert_eq!(exit_status(&dir), "0", "{}", tmux.screen());
    assert_terminal_restored(&tmux, &dir);
});

#[test]
fn report_tui_needs_a_terminal() {
    let dir = scratch("report-tui-pipe");
    let output = profiler()
        .current_dir(&dir)
        .args(["report", "--tui", "-i", "missing.data"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = text(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("not one"), "{stderr}");
}

#[test]
fn top_refuses_what_cannot_be_sampled_in_one_line() {
    let dir = scratch("top-bad");
    let output = profiler()
        .current_dir(&dir)
        .args(["top", "--stdio", "-p", "999999999"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(125));
    let stderr = text(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("999999999"), "{stderr}");
}
