//! `PROFILER_OPTIONS`: options for `record` from the environment, so that a
//! job script sets them once for every rank without touching the launch
//! line (`export PROFILER_OPTIONS='-F 1000 -o run.%r.data'` before `srun
//! profiler record -- ./app`). They are split as a shell splits words and
//! go before the command line's own, which win where both give one: what
//! to sample (`-e`, `-c`, `-F`) is the command line's alone when it says.

use std::ffi::OsString;

use clap::CommandFactory;

use crate::args::Cli;

/// The variable's name.
pub(crate) const VARIABLE: &str = "PROFILER_OPTIONS";

/// `args` (the program's, from its name on) with the options of
/// `PROFILER_OPTIONS` (its value `value`) put right after `record`; other
/// subcommands take none. The error is the one line to print.
pub(crate) fn with_env_options(
    mut args: Vec<OsString>,
    value: Option<&str>,
) -> Result<Vec<OsString>, String> {
    let Some(value) = value.filter(|v| !v.trim().is_empty()) else {
        return Ok(args);
    };
    let subcommand = (args.iter().enumerate().skip(1))
        .find(|(_, arg)| !arg.to_string_lossy().starts_with('-'))
        .filter(|(_, arg)| arg.as_os_str() == "record")
        .map(|(at, _)| at);
    let Some(at) = subcommand else {
        return Ok(args);
    };
    let mut words = words(value)?;
    let given = args[at + 1..]
        .iter()
        .map(|a| a.to_string_lossy().into_owned());
    let given: Vec<String> = given.take_while(|a| a != "--").collect();
    if !sampling_words(&given).is_empty() {
        let dropped = sampling_words(&words);
        words = (words.into_iter().enumerate())
            .filter(|(at, _)| !dropped.contains(at))
            .map(|(_, word)| word)
            .collect();
    }
    let inserted = words.iter().map(OsString::from);
    args.splice(at + 1..at + 1, inserted);
    Ok(args)
}

/// Where `words` (options of `record`) say what to sample: the positions
/// of `-e`, `-c` and `-F` and their values.
fn sampling_words(words: &[String]) -> Vec<usize> {
    const FLAGS: [&str; 6] = ["-e", "--event", "-c", "--count", "-F", "--freq"];
    let mut found = Vec::new();
    let mut at = 0;
    while at < words.len() {
        let word = words[at].as_str();
        if FLAGS.contains(&word) {
            found.extend([at, at + 1]);
            at += 2;
            continue;
        }
        let attached = ["-e", "-c", "-F"].iter().any(|f| word.starts_with(f))
            || ["--event=", "--count=", "--freq="]
                .iter()
                .any(|f| word.starts_with(f));
        if attached {
            found.push(at);
        }
        at += 1;
    }
    found
}

/// The words of `value`, checked to be `record`'s options and nothing else.
fn words(value: &str) -> Result<Vec<String>, String> {
    let refuse = |why: &str| {
        format!(
            "{VARIABLE}='{}': {why}; it takes options of `profiler record`, e.g. \
             {VARIABLE}='-F 1000 -o run.%r.data'",
            value.escape_debug()
        )
    };
    let words = shlex::split(value).ok_or_else(|| refuse("a quote is not closed"))?;
    let trial = ["profiler", "record"]
        .into_iter()
        .map(str::to_owned)
        .chain(words.iter().cloned())
        .chain(["--".to_owned(), "true".to_owned()]);
    let matches = match Cli::command().try_get_matches_from(trial) {
        Ok(matches) => matches,
        Err(error) => {
            let text = error.to_string();
            let first = text.lines().next().unwrap_or_default();
            return Err(refuse(first.trim_start_matches("error: ")));
        }
    };
    let command: Vec<String> = (matches.subcommand_matches("record"))
        .and_then(|m| m.get_many::<OsString>("command"))
        .into_iter()
        .flatten()
        .map(|word| word.to_string_lossy().into_owned())
        .collect();
    if command != ["true"] {
        let word = command.first().cloned().unwrap_or_default();
        return Err(refuse(&format!(
            "'{word}' is not an option (the command goes on the command line)"
        )));
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_options_go_before_the_command_lines_own() {
        let given = args(&["profiler", "record", "-F", "99", "--", "./app"]);
        let with = with_env_options(given, Some("-o 'run %r.data' -g")).unwrap();
        assert_eq!(
            with,
            args(&[
                "profiler",
                "record",
                "-o",
                "run %r.data",
                "-g",
                "-F",
                "99",
                "--",
                "./app"
            ])
        );
    }

    #[test]
    fn what_to_sample_is_the_command_lines_when_it_says() {
        let given = args(&["profiler", "record", "-F", "99", "./app"]);
        let with = with_env_options(given, Some("-e page-faults -c100 -o run.%r")).unwrap();
        assert_eq!(
            with,
            args(&["profiler", "record", "-o", "run.%r", "-F", "99", "./app"])
        );
        let given = args(&["profiler", "record", "-g", "--", "-F"]);
        let with = with_env_options(given, Some("--freq=10")).unwrap();
        assert_eq!(
            with,
            args(&["profiler", "record", "--freq=10", "-g", "--", "-F"])
        );
    }

    #[test]
    fn other_subcommands_and_an_empty_value_are_left_alone() {
        let report = args(&["profiler", "report", "-i", "x"]);
        assert_eq!(
            with_env_options(report.clone(), Some("-F 1")).unwrap(),
            report
        );
        let record = args(&["profiler", "record", "./app"]);
        assert_eq!(
            with_env_options(record.clone(), Some("  ")).unwrap(),
            record
        );
        assert_eq!(with_env_options(record.clone(), None).unwrap(), record);
    }

    #[test]
    fn what_is_not_an_option_of_record_is_refused_in_one_line() {
        let record = || args(&["profiler", "record", "./app"]);
        let error = with_env_options(record(), Some("--bogus")).unwrap_err();
        assert!(error.starts_with("PROFILER_OPTIONS='--bogus': "), "{error}");
        assert!(error.contains("--bogus"), "{error}");
        let command = with_env_options(record(), Some("-F 10 ./other")).unwrap_err();
        assert!(command.contains("'./other' is not an option"), "{command}");
        let quote = with_env_options(record(), Some("-o 'run")).unwrap_err();
        assert!(quote.contains("a quote is not closed"), "{quote}");
        for error in [error, command, quote] {
            assert!(!error.contains('\n'), "{error}");
        }
    }
}
