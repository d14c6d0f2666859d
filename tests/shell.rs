//! Fitting the shell: completion scripts that bash, zsh and fish load and
//! complete with, and manual pages that man renders, one per subcommand,
//! each with every option `--help` lists.

use std::path::Path;
use std::process::Command;

use crate::util::*;

/// Runs `shell -c script` and returns its standard output.
fn shell(shell: &str, script: &str) -> String {
    // The completion scripts run `profiler list`, found on PATH.
    let bin = Path::new(env!("CARGO_BIN_EXE_profiler")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = (Command::new(shell).args(["-c", script]).env("PATH", path))
        .output()
        .unwrap();
    assert!(output.status.success(), "{shell}: {}", stderr(&output));
    String::from_utf8(output.stdout).unwrap()
}

/// The subcommands `profiler --help` lists, but clap's `help`.
fn subcommands() -> Vec<String> {
    let help = run_ok(Path::new("."), &["--help"]);
    let help = String::from_utf8(help.stdout).unwrap();
    (help.lines())
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        // Descriptions go on over lines indented further.
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

#[test]
fn completions_complete_subcommands_options_and_values() {
    let dir = scratch("completions");
    let script = |shell: &str| {
        let output = run_ok(&dir, &["completions", shell]);
        let path = dir.join(format!("profiler.{shell}"));
        std::fs::write(&path, output.stdout).unwrap();
        path.display().to_string()
    };
    if profiler_testing::tool("bash") {
        let file = script("bash");
        let complete = |words: &str| {
            let words: Vec<&str> = words.split(' ').collect();
            let call = format!(
                "source {file}; COMP_WORDS=({}); COMP_CWORD={}; _profiler_values profiler '{}' '{}'; \
                 echo ${{COMPREPLY[@]}}",
                words
                    .iter()
                    .map(|w| format!("'{w}'"))
                    .collect::<Vec<_>>()
                    .join(" "),
                words.len() - 1,
                words.last().unwrap(),
                words[words.len() - 2],
            );
            shell("bash", &call)
        };
        assert_eq!(complete("profiler exp").trim(), "export");
        assert!(complete("profiler export --for").contains("--format"));
        let formats = complete("profiler export --format ");
        for format in ["gmon", "folded", "pprof", "firefox", "speedscope"] {
            assert!(formats.split_whitespace().any(|f| f == format), "{formats}");
        }
        let registered = shell("bash", &format!("source {file}; complete -p profiler"));
        assert!(
            registered.contains("-F _profiler_values profiler"),
            "{registered}"
        );
        // Events and PMUs after -e (the list's own, through PATH), after a
        // comma too; running processes after -p, threads after -t.
        let events = complete("profiler record -e cpu-c");
        assert!(
            events.split_whitespace().any(|e| e == "cpu-clock"),
            "{events}"
        );
        let listed = complete("profiler stat -e cpu-clock,page-");
        assert!(
            listed
                .split_whitespace()
                .any(|e| e == "cpu-clock,page-faults"),
            "{listed}"
        );
        assert!(complete("profiler record -e softw").contains("software/"));
        let tasks = shell(
            "bash",
            &format!(
                "source {file}; sleep 30 & COMP_WORDS=(profiler record -p ''); COMP_CWORD=3; \
                 _profiler_values; echo \"$! ${{COMPREPLY[@]}}\"; \
                 COMP_WORDS=(profiler stat -t 1,); _profiler_values; echo \"${{COMPREPLY[@]}}\"; \
                 kill $!"
            ),
        );
        let mut lines = tasks.lines();
        let mut pids = lines.next().unwrap().split_whitespace();
        let sleeper = pids.next().unwrap();
        assert!(pids.any(|pid| pid == sleeper), "{tasks}");
        assert!(
            lines.next().unwrap().split_whitespace().any(|t| t == "1,1"),
            "{tasks}"
        );
        // Elsewhere clap's completion, as before.
        assert!(complete("profiler report --for").contains("--format"));
    }
    if profiler_testing::tool("fish") {
        let file = script("fish");
        let complete = |line: &str| shell("fish", &format!("source {file}; complete -C '{line}'"));
        assert!(complete("profiler exp").starts_with("export\t"));
        let formats = complete("profiler export --format ");
        assert!(formats.lines().any(|l| l == "pprof"), "{formats}");
        assert!(complete("profiler record --call").contains("--call-graph"));
        let events = complete("profiler record -e cpu-c");
        assert!(
            events.lines().any(|l| l.starts_with("cpu-clock\t")),
            "{events}"
        );
        let listed = complete("profiler stat -e cpu-clock,task-");
        assert!(
            listed
                .lines()
                .any(|l| l.starts_with("cpu-clock,task-clock\t")),
            "{listed}"
        );
        let tasks = shell(
            "fish",
            &format!(
                "source {file}; sleep 30 &; set -l sleeper $last_pid; echo $sleeper; \
                 complete -C 'profiler record -p '; complete -C \"profiler stat -t $sleeper,\"; \
                 kill $sleeper"
            ),
        );
        let sleeper = tasks.lines().next().unwrap();
        assert!(
            tasks
                .lines()
                .any(|l| l.starts_with(&format!("{sleeper}\t"))),
            "{tasks}"
        );
        let listed = format!("{sleeper},{sleeper}\t");
        assert!(tasks.lines().any(|l| l.starts_with(&listed)), "{tasks}");
    }
    if profiler_testing::tool("zsh") {
        let file = script("zsh");
        shell("zsh", &format!("zsh -n {file}"));
        let defined = shell(
            "zsh",
            &format!("autoload -U compinit; compinit -u; source {file}; whence -w _profiler"),
        );
        assert_eq!(defined.trim(), "_profiler: function");
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.starts_with("#compdef profiler"), "{text}");
        assert!(text.contains("speedscope"), "no export formats in {file}");
        for (option, helper) in [
            ("-e+", "_profiler_events"),
            ("-p+", "_profiler_pids"),
            ("-t+", "_profiler_tids"),
        ] {
            let spec =
                (text.lines()).find(|l| l.contains(&format!("*{option}[")) && l.contains(helper));
            assert!(spec.is_some(), "{option} does not complete with {helper}");
        }
        // The helpers, with compadd and _sequence standing in for the
        // completion system's: what they would offer.
        let offered = shell(
            "zsh",
            &format!(
                "autoload -U compinit; compinit -u; source {file}; \
                 compadd() {{ [[ $1 == -a ]] && print -rl -- ${{(P)2}} }}; _sequence() {{ \"$@\" }}; \
                 words=(profiler record -e); _profiler_events; _profiler_tids"
            ),
        );
        assert!(offered.lines().any(|l| l == "cpu-clock"), "{offered}");
        assert!(offered.lines().any(|l| l == "1"), "{offered}");
    }
}

#[test]
fn every_subcommand_has_a_man_page_with_every_option() {
    let dir = scratch("man");
    let output = run_ok(&dir, &["man", "--out-dir", "man1"]);
    assert!(stderr(&output).contains("man -l"), "{}", stderr(&output));
    let subcommands = subcommands();
    assert!(subcommands.len() >= 13, "{subcommands:?}");
    let mut pages: Vec<String> = std::fs::read_dir(dir.join("man1"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    let mut expected: Vec<String> = (subcommands.iter())
        .map(|s| format!("profiler-{s}.1"))
        .chain(["profiler.1".to_owned()])
        .collect();
    expected.sort();
    assert_eq!(pages, expected);

    for subcommand in &subcommands {
        let page = std::fs::read_to_string(dir.join(format!("man1/profiler-{subcommand}.1")));
        let page = page.unwrap();
        assert!(
            page.contains(&format!(".TH profiler-{subcommand} 1")),
            "{page}"
        );
        // The same page on standard output.
        let printed = run_ok(&dir, &["man", subcommand]).stdout;
        assert_eq!(String::from_utf8(printed).unwrap(), page);
        // Every long option of --help, as roff spells it.
        let help = run_ok(&dir, &[subcommand.as_str(), "--help"]).stdout;
        let help = String::from_utf8(help).unwrap();
        let options = (help.split_whitespace())
            .filter(|w| w.starts_with("--") && w.len() > 2)
            .map(|w| {
                // `--compression-level[=<LEVEL>]`: an optional value.
                w.trim_end_matches([',', '.', ';', ')', ']'])
                    .split(['=', '['])
                    .next()
                    .unwrap()
            });
        for option in options {
            let roff = option.replace('-', "\\-");
            assert!(
                page.contains(&roff),
                "profiler-{subcommand}(1) lacks {option}"
            );
        }
    }

    if profiler_testing::tool("man") {
        let rendered = Command::new("man")
            .arg("-l")
            .arg(dir.join("man1/profiler-export.1"))
            .env("MANWIDTH", "100")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&rendered.stdout);
        assert!(
            text.contains("profiler-export - Write a recording"),
            "{text}"
        );
        assert!(text.contains("--format"), "{text}");
    }

    // The synopsis says what each option takes, as OPTIONS does.
    let record = String::from_utf8(run_ok(&dir, &["man", "record"]).stdout).unwrap();
    let synopsis = record.split(".SH SYNOPSIS").nth(1).unwrap();
    let synopsis = synopsis.split(".SH ").next().unwrap();
    for option in [
        r"[\fB\-e\fR|\fB\-\-event\fR \fI<EVENT>\fR]",
        r"[\fB\-o\fR|\fB\-\-output\fR \fI<FILE>\fR]",
        r"[\fB\-g\fR]",
    ] {
        assert!(synopsis.contains(option), "{option} not in {synopsis}");
    }

    let unknown = run(&dir, &["man", "recrod"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(
        stderr(&unknown).contains("'recrod' is not a subcommand"),
        "{}",
        stderr(&unknown)
    );
}

/// `text` as a terminal shows it: without SGR escapes and overstrikes.
fn plain(text: &str) -> String {
    let mut plain = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => {
                // CSI ... final byte.
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            '\u{8}' => {
                plain.pop();
            }
            '\r' => {}
            c => plain.push(c),
        }
    }
    plain
}

#[test]
fn man_on_a_terminal_shows_the_page_rendered() {
    if !profiler_testing::tool("script") || !profiler_testing::tool("man") {
        return;
    }
    // script(1) gives the profiler a terminal; the pager is cat, so that
    // nothing waits for keys.
    let command = format!("{} man record", env!("CARGO_BIN_EXE_profiler"));
    let output = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .env("MANWIDTH", "100")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let text = plain(&String::from_utf8_lossy(&output.stdout));
    assert!(text.contains("profiler-record - Record"), "{text}");
    // man justifies lines with runs of spaces.
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("-e|--event <EVENT>"), "{text}");
    assert!(
        !text.contains(".TH") && !text.contains("\\fB"),
        "raw roff: {text}"
    );
}
