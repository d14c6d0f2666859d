//! Work shared out between scoped threads.

/// Runs `work` on each of `inputs`, a scoped thread for each, and gathers
/// what they return in the inputs' order; a panic in one is raised again
/// here.
pub(crate) fn on_threads<I, T>(
    inputs: impl IntoIterator<Item = I>,
    work: impl Fn(I) -> T + Sync,
) -> Vec<T>
where
    I: Send,
    T: Send,
{
    let work = &work;
    std::thread::scope(|scope| {
        let workers: Vec<_> = (inputs.into_iter())
            .map(|input| scope.spawn(move || work(input)))
            .collect();
        (workers.into_iter())
            .map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}
