//! The one thread that drains every profile's ring buffers in a process:
//! started with the first profile, it blocks every signal, counts in no
//! profile or set of counters (the library's own thread), and serves all
//! the profiles that come after, so that a profile costs its counters and
//! nothing more however many run at once.
//!
//! Requests reach it through one pipe, each a fixed 16 bytes written at
//! once (an atomic pipe write): the request's kind and the address of what
//! goes with it. A read or a stop waits for its answer on a futex. So
//! [`Drainer::read`] writes to a pipe and waits on a futex and nothing
//! more: it may be called from a signal handler, where a lock or an
//! allocation could deadlock.

use std::io::{self, PipeReader, PipeWriter, Read};
use std::os::fd::{AsRawFd, RawFd};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::Duration;

use super::sink::{HistogramSink, ProfilOutcome};
use crate::counters::Rings;
use crate::error::SamplerError;
use crate::own_process;
use crate::signals;
use crate::tid_lock::{wait_while, wake_all};

/// How long the thread sleeps when no ring fills up: a read brings the
/// buckets up to date whatever their age; this bounds only how long
/// samples wait in the rings.
const POLL_INTERVAL: Duration = Duration::from_millis(100);

const ADD: u64 = 1;
const READ: u64 = 2;
const STOP: u64 = 3;

/// The drain thread of this process, as the profiles hold it.
#[derive(Debug)]
pub(crate) struct Drainer {
    /// The process that started it: a child made by fork() has no such
    /// thread, and starts its own.
    pid: u32,
    requests: PipeWriter,
}

/// A profile handed to the thread.
struct Added {
    id: u64,
    rings: Rings,
    sink: HistogramSink,
}

/// A read, on the reader's stack until it is answered.
struct ReadRequest<'a> {
    id: u64,
    visit: &'a mut (dyn FnMut(&ProfilOutcome) + Send),
    /// Set when the profile has ended on an error: the stop says which.
    failed: bool,
    done: AtomicI32,
}

/// A stop, likewise.
struct StopRequest {
    id: u64,
    outcome: Option<Result<ProfilOutcome, SamplerError>>,
    done: AtomicI32,
}

/// A profile, as the thread holds it.
struct Drained {
    id: u64,
    rings: Rings,
    sink: HistogramSink,
    failure: Option<SamplerError>,
}

impl Drainer {
    /// The process's drain thread, started if need be; the thread id it
    /// runs as is among the library's own threads before this returns.
    pub(crate) fn get() -> Result<Arc<Drainer>, SamplerError> {
        static DRAINER: Mutex<Option<Arc<Drainer>>> = Mutex::new(None);
        let mut drainer = DRAINER.lock().unwrap_or_else(PoisonError::into_inner);
        match &*drainer {
            Some(running) if running.pid == std::process::id() => Ok(Arc::clone(running)),
            _ => {
                let started = Arc::new(Drainer::start()?);
                *drainer = Some(Arc::clone(&started));
                Ok(started)
            }
        }
    }

    fn start() -> Result<Drainer, SamplerError> {
        let (reader, requests) = io::pipe().map_err(|error| SamplerError::System {
            what: "creating the drain thread's request pipe",
            error,
        })?;
        let (ready, marked) = mpsc::channel();
        std::thread::Builder::new()
            .name("profil-drain".into())
            .spawn(move || {
                // The program's signal handlers run on its own threads.
                signals::block_all_in_this_thread();
                own_process::mark_library_thread();
                // The starter waits for this.
                let _ = ready.send(());
                serve(reader);
            })
            .map_err(|error| SamplerError::System {
                what: "starting the drain thread",
                error,
            })?;
        marked.recv().map_err(|_| thread_lost())?;
        Ok(Drainer {
            pid: std::process::id(),
            requests,
        })
    }

    /// Hands a profile's rings and histogram to the thread, under `id`.
    pub(crate) fn add(
        &self,
        id: u64,
        rings: Rings,
        sink: HistogramSink,
    ) -> Result<(), SamplerError> {
        let added = Box::into_raw(Box::new(Added { id, rings, sink }));
        self.send(ADD, added as u64).inspect_err(|_| {
            // SAFETY: not sent, so still ours, made by `Box::into_raw`.
            drop(unsafe { Box::from_raw(added) });
        })
    }

    /// Drains profile `id`'s rings and calls `visit` with everything it has
    /// counted, on the drain thread, while the caller waits; `Ok(false)`
    /// when the profile has ended on an error (its stop says which).
    /// Async-signal-safe: a pipe write and a futex wait.
    pub(crate) fn read(
        &self,
        id: u64,
        visit: &mut (dyn FnMut(&ProfilOutcome) + Send),
    ) -> Result<bool, SamplerError> {
        let mut request = ReadRequest {
            id,
            visit,
            failed: false,
            done: AtomicI32::new(0),
        };
        self.send(READ, &mut request as *mut ReadRequest<'_> as u64)?;
        wait_done(&request.done);
        Ok(!request.failed)
    }

    /// Ends profile `id`: drained a last time, its counters closed; what it
    /// counted, or the error it ended on.
    pub(crate) fn stop(&self, id: u64) -> Result<ProfilOutcome, SamplerError> {
        let mut request = StopRequest {
            id,
            outcome: None,
            done: AtomicI32::new(0),
        };
        self.send(STOP, &mut request as *mut StopRequest as u64)?;
        wait_done(&request.done);
        request.outcome.unwrap_or_else(|| Err(thread_lost()))
    }

    /// Writes one request, whole. Async-signal-safe.
    fn send(&self, kind: u64, address: u64) -> Result<(), SamplerError> {
        let mut message = [0_u8; 16];
        message[..8].copy_from_slice(&kind.to_ne_bytes());
        message[8..].copy_from_slice(&address.to_ne_bytes());
        loop {
            // SAFETY: 16 readable bytes; a pipe write of at most PIPE_BUF
            // bytes is whole or fails.
            let written = unsafe {
                libc::write(
                    self.requests.as_raw_fd(),
                    message.as_ptr().cast(),
                    message.len(),
                )
            };
            match written {
                16 => return Ok(()),
                -1 if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => {}
                _ => {
                    return Err(SamplerError::System {
                        what: "asking the drain thread",
                        error: io::Error::last_os_error(),
                    });
                }
            }
        }
    }
}

fn thread_lost() -> SamplerError {
    SamplerError::System {
        what: "the profiles' drain thread",
        error: io::Error::from_raw_os_error(libc::ESRCH),
    }
}

/// Waits until the thread has answered. Async-signal-safe.
fn wait_done(done: &AtomicI32) {
    while done.load(Ordering::Acquire) == 0 {
        wait_while(done, 0);
    }
}

/// Tells the waiter its request is answered. The request may be gone the
/// moment the flag is set: FUTEX_WAKE uses the address only as a key.
fn answer(done: &AtomicI32) {
    done.store(1, Ordering::Release);
    wake_all(done);
}

/// The thread: drains every profile whenever a ring fills, a request
/// comes, or [`POLL_INTERVAL`] passes.
fn serve(requests: PipeReader) {
    let mut profiles: Vec<Drained> = Vec::new();
    let mut fds: Vec<libc::pollfd> = Vec::new();
    let mut owners: Vec<(usize, usize)> = Vec::new();
    loop {
        fds.clear();
        owners.clear();
        fds.push(libc::pollfd {
            fd: requests.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        });
        for (profile, drained) in profiles.iter().enumerate() {
            if drained.failure.is_some() {
                continue;
            }
            for (ring, fd) in drained.rings.open_fds() {
                owners.push((profile, ring));
                fds.push(pollfd(fd));
            }
        }
        let timeout = match profiles.is_empty() {
            true => Duration::from_secs(3600),
            false => POLL_INTERVAL,
        };
        // An error here is an interrupted poll: the loop goes round.
        let _ = signals::poll(&mut fds, timeout);
        for (fd, &(profile, ring)) in fds[1..].iter().zip(&owners) {
            if fd.revents & (libc::POLLHUP | libc::POLLERR) != 0 {
                profiles[profile].rings.hang_up(ring);
            }
        }
        profiles.iter_mut().for_each(drain);
        if fds[0].revents != 0 && !take_request(&requests, &mut profiles) {
            return;
        }
    }
}

fn pollfd(fd: RawFd) -> libc::pollfd {
    libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    }
}

/// Empties a profile's rings into its histogram; an error ends it.
fn drain(drained: &mut Drained) {
    if drained.failure.is_none()
        && let Err(error) = drained.rings.drain(&mut drained.sink)
    {
        drained.failure = Some(error);
    }
}

/// Reads and answers one request; false when the pipe has closed.
fn take_request(mut requests: &PipeReader, profiles: &mut Vec<Drained>) -> bool {
    let mut message = [0_u8; 16];
    if requests.read_exact(&mut message).is_err() {
        return false;
    }
    let word = |at: usize| {
        let mut bytes = [0_u8; 8];
        bytes.copy_from_slice(&message[at..at + 8]);
        u64::from_ne_bytes(bytes)
    };
    let (kind, address) = (word(0), word(8));
    // A panic here must still answer the waiter, or it waits forever.
    let _ = panic::catch_unwind(AssertUnwindSafe(|| match kind {
        // SAFETY: the address of an `Added` from `Box::into_raw`, sent once.
        ADD => add(profiles, *unsafe { Box::from_raw(address as *mut Added) }),
        // SAFETY: the address of a `ReadRequest` whose sender waits, with
        // the request alive on its stack, until it is answered.
        READ => read(profiles, unsafe { &mut *(address as *mut ReadRequest<'_>) }),
        // SAFETY: as for a read, a `StopRequest`.
        STOP => stop(profiles, unsafe { &mut *(address as *mut StopRequest) }),
        _ => {}
    }));
    true
}

fn add(profiles: &mut Vec<Drained>, added: Added) {
    profiles.push(Drained {
        id: added.id,
        rings: added.rings,
        sink: added.sink,
        failure: None,
    });
}

fn read(profiles: &mut [Drained], request: &mut ReadRequest<'_>) {
    match profiles.iter_mut().find(|p| p.id == request.id) {
        Some(drained) => {
            drain(drained);
            match drained.failure {
                Some(_) => request.failed = true,
                None => {
                    let visit = &mut request.visit;
                    // The visitor's panic stays here; the read still ends.
                    let visited =
                        panic::catch_unwind(AssertUnwindSafe(|| visit(drained.sink.outcome())));
                    request.failed = visited.is_err();
                }
            }
        }
        None => request.failed = true,
    }
    answer(&request.done);
}

fn stop(profiles: &mut Vec<Drained>, request: &mut StopRequest) {
    let outcome = match profiles.iter().position(|p| p.id == request.id) {
        Some(index) => {
            let mut drained = profiles.swap_remove(index);
            drain(&mut drained);
            match drained.failure {
                Some(error) => Err(error),
                None => Ok(drained.sink.into_outcome()),
            }
            // The rings, and with them the counters, close here.
        }
        None => Err(thread_lost()),
    };
    request.outcome = Some(outcome);
    answer(&request.done);
}
