//! Progress on a terminal for work that takes a while: a spinner that
//! appears after a second, only when stderr is a terminal, and tells how
//! much symbolization is done.

use std::ops::Range;
use std::thread;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use profiler_model::{Avma, Detail, FileOffset, Module, ModuleSymbols, Symbolizer};

/// How long work may take before it shows its progress.
const QUIET_FOR: Duration = Duration::from_secs(1);

/// A progress line, drawn only once the work has taken more than a second.
pub(crate) struct Progress {
    bar: ProgressBar,
}

impl Progress {
    pub(crate) fn start(message: impl Into<String>) -> Progress {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
            bar.set_style(style);
        }
        bar.set_message(message.into());
        let shown = bar.clone();
        thread::spawn(move || {
            thread::sleep(QUIET_FOR);
            if !shown.is_finished() {
                // Draws only where stderr is a terminal.
                shown.set_draw_target(ProgressDrawTarget::stderr());
                shown.enable_steady_tick(Duration::from_millis(120));
            }
        });
        Progress { bar }
    }

    pub(crate) fn set_message(&self, message: impl Into<String>) {
        self.bar.set_message(message.into());
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// A symbolizer that reports each module it works on.
pub(crate) struct ShowProgress<'a, S> {
    pub inner: &'a S,
    pub progress: &'a Progress,
}

impl<S: Symbolizer> Symbolizer for ShowProgress<'_, S> {
    fn symbolize(&self, module: &Module, offsets: &[FileOffset], detail: Detail) -> ModuleSymbols {
        self.progress.set_message(format!(
            "symbolizing {} addresses of {}",
            offsets.len(),
            module.name()
        ));
        self.inner.symbolize(module, offsets, detail)
    }

    fn symbolize_kernel(&self, addresses: &[Avma]) -> Vec<Option<String>> {
        self.progress
            .set_message(format!("symbolizing {} kernel addresses", addresses.len()));
        self.inner.symbolize_kernel(addresses)
    }

    fn kernel_problem(&self) -> Option<String> {
        self.inner.kernel_problem()
    }

    fn find_functions(&self, module: &Module, names: &[&str]) -> Vec<Range<FileOffset>> {
        self.inner.find_functions(module, names)
    }

    fn threads(&self) -> usize {
        self.inner.threads()
    }
}
