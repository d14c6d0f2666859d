//! `profiler completions SHELL`: the shell's completion script for every
//! subcommand and option, from the command line's own definition; and, for
//! `record` and `stat`, the values clap cannot know: the events and PMUs
//! after `-e` (from `profiler list --raw-dump`, at completion time) and the
//! running processes and threads after `-p` and `-t`, each also after a
//! comma of a list.

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Result;
use clap::CommandFactory;
use clap_complete::Shell;

use crate::args::{Cli, CompletionShell, CompletionsArgs};

/// The subcommands whose `-e`, `-p` and `-t` take events and running tasks.
const TARGETING: [&str; 2] = ["record", "stat"];

pub(crate) fn run(args: CompletionsArgs) -> Result<ExitCode> {
    let shell = match args.shell {
        CompletionShell::Bash => Shell::Bash,
        CompletionShell::Zsh => Shell::Zsh,
        CompletionShell::Fish => Shell::Fish,
    };
    // clap_complete panics on a failed write: the script is made in
    // memory, and written (a closed pipe included) here.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "profiler", &mut script);
    let script = String::from_utf8_lossy(&script);
    let script = match args.shell {
        CompletionShell::Bash => format!("{script}{BASH_VALUES}"),
        CompletionShell::Zsh => zsh_with_values(&script),
        CompletionShell::Fish => fish_with_values(&script),
    };
    let mut out = io::stdout().lock();
    out.write_all(script.as_bytes())?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// bash: a function before clap's that completes the values of `-e`, `-p`
/// and `-t` for record and stat, and hands every other word to clap's.
const BASH_VALUES: &str = r#"
# Events and PMUs after -e, running processes after -p and threads after -t
# (record and stat), after a comma too; clap's completion for the rest.
_profiler_values() {
    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"
    local prefix="" word="${cur}" values
    if [[ "${cur}" == *,* ]]; then
        prefix="${cur%,*},"
        word="${cur##*,}"
    fi
    case "${COMP_WORDS[1]}:${prev}" in
        record:-e|record:--event|stat:-e|stat:--event)
            values="$("${COMP_WORDS[0]}" list --raw-dump 2>/dev/null)"
            ;;
        record:-p|record:--pid|stat:-p|stat:--pid)
            values="$(cd /proc && compgen -G '[0-9]*')"
            ;;
        record:-t|record:--tid|stat:-t|stat:--tid)
            values="$(cd /proc && compgen -G '[0-9]*/task/[0-9]*' | sed 's|.*/||')"
            ;;
        *)
            _profiler "$@"
            return
            ;;
    esac
    COMPREPLY=($(compgen -P "${prefix}" -W "${values}" -- "${word}"))
}
complete -F _profiler_values -o nosort -o bashdefault -o default profiler
"#;

/// zsh: the helpers that complete events and tasks, comma lists with
/// `_sequence`.
const ZSH_VALUES: &str = r#"(( $+functions[_profiler_events] )) ||
_profiler_events() {
    local -a events
    events=(${=$(${words[1]} list --raw-dump 2>/dev/null)})
    _sequence compadd -a events
}
(( $+functions[_profiler_pids] )) ||
_profiler_pids() {
    _sequence _pids
}
(( $+functions[_profiler_tids] )) ||
_profiler_tids() {
    local -a tids
    tids=(/proc/[0-9]*/task/[0-9]*(N:t))
    _sequence compadd -a tids
}

"#;

/// clap's zsh script with record's and stat's `-e`, `-p` and `-t` given
/// the helpers of [`ZSH_VALUES`], defined before the script runs.
fn zsh_with_values(script: &str) -> String {
    let mut out = String::with_capacity(script.len() + ZSH_VALUES.len());
    let mut subcommand = "";
    for line in script.lines() {
        let trimmed = line.trim();
        if let Some(name) = trimmed.strip_prefix('(').and_then(|l| l.strip_suffix(')')) {
            subcommand = name;
        }
        if trimmed.starts_with("if [ \"$funcstack[1]\" = \"_profiler\" ]") {
            out.push_str(ZSH_VALUES);
        }
        let line = match TARGETING.contains(&subcommand) {
            true => line
                .replace(":EVENT:_default'", ":EVENT:_profiler_events'")
                .replace(":EVENT[,EVENT...]:_default'", ":EVENT:_profiler_events'")
                .replace(":PID[,PID...]:_default'", ":PID:_profiler_pids'")
                .replace(":TID[,TID...]:_default'", ":TID:_profiler_tids'"),
            false => line.to_owned(),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// fish: the functions that list events and tasks, after a comma too.
const FISH_VALUES: &str = r#"
# Events and PMUs after -e, running processes after -p and threads after -t
# (record and stat), after a comma too.
function __fish_profiler_list_prefix
    # An empty line, not none, where there is no comma: $prefix$name
    # would be empty with no prefix at all.
    string match -r '^.*,' -- (commandline -ct); or echo ''
end
function __fish_profiler_events
    set -l prefix (__fish_profiler_list_prefix)
    set -l profiler (commandline -opc)[1]
    for name in (string split ' ' -- ($profiler list --raw-dump 2>/dev/null))
        echo $prefix$name
    end
end
function __fish_profiler_pids
    set -l prefix (__fish_profiler_list_prefix)
    for pid in (__fish_complete_pids)
        echo $prefix$pid
    end
end
function __fish_profiler_tids
    set -l prefix (__fish_profiler_list_prefix)
    for tid in (string match -r -g '^/proc/\d+/task/(\d+)$' -- /proc/*/task/*)
        echo $prefix$tid
    end
end
"#;

/// clap's fish script with record's and stat's `-e`, `-p` and `-t` taking
/// the values of [`FISH_VALUES`]' functions rather than files.
fn fish_with_values(script: &str) -> String {
    let mut out = String::from(FISH_VALUES);
    for line in script.lines() {
        let targeting = (TARGETING.iter())
            .any(|name| line.contains(&format!("__fish_profiler_using_subcommand {name}\"")));
        let values = [
            (" -s e -l event ", "__fish_profiler_events"),
            (" -s p -l pid ", "__fish_profiler_pids"),
            (" -s t -l tid ", "__fish_profiler_tids"),
        ]
        .into_iter()
        .find(|(option, _)| targeting && line.contains(option));
        out.push_str(line);
        if let Some((_, function)) = values {
            out.push_str(&format!(" -f -a \"({function})\""));
        }
        out.push('\n');
    }
    out
}
