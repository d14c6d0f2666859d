//! A lock that knows which thread holds it, for state that a signal
//! handler may reach: a thread that interrupted itself while holding the
//! lock is told so at once instead of waiting on itself forever, and
//! waiting is a `futex` system call, which a signal handler may make.
//!
//! `std::sync::Mutex` would deadlock there: a handler that runs on top of
//! a locked section of its own thread and asks for the same lock never
//! gets it.

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicI32, Ordering};

use crate::own_process::current_tid;

/// `T`, behind a lock held by one thread at a time.
pub struct TidLock<T> {
    /// The thread id of the holder; 0 when free.
    holder: AtomicI32,
    value: UnsafeCell<T>,
}

// SAFETY: the value is reached only through a guard, and one thread at a
// time holds one (the compare-exchange on `holder`); `T: Send` lets it be
// used from whichever thread holds the lock.
unsafe impl<T: Send> Sync for TidLock<T> {}

/// The calling thread holds the lock already: it is running a signal
/// handler on top of a call that holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeldByThisThread;

impl<T> TidLock<T> {
    pub fn new(value: T) -> TidLock<T> {
        TidLock {
            holder: AtomicI32::new(0),
            value: UnsafeCell::new(value),
        }
    }

    /// Waits for the lock, unless this thread holds it already. Async-
    /// signal-safe: it allocates nothing and waits in `futex`.
    pub fn lock(&self) -> Result<TidGuard<'_, T>, HeldByThisThread> {
        let me = current_tid();
        loop {
            match self
                .holder
                .compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) => return Ok(TidGuard { lock: self }),
                Err(holder) if holder == me => return Err(HeldByThisThread),
                Err(holder) => wait_while(&self.holder, holder),
            }
        }
    }
}

/// The lock, held: the value may be used until it is dropped.
pub struct TidGuard<'a, T> {
    lock: &'a TidLock<T>,
}

impl<T> Deref for TidGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: this guard's thread holds the lock: no other reference to
        // the value exists until the guard is dropped.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> DerefMut for TidGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as for `deref`; `&mut self` makes this the only borrow
        // through the guard.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T> Drop for TidGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.holder.store(0, Ordering::Release);
        wake_all(&self.lock.holder);
    }
}

/// Sleeps while `word` holds `value` (or until woken, or a signal comes).
pub(crate) fn wait_while(word: &AtomicI32, value: i32) {
    // SAFETY: FUTEX_WAIT reads the aligned 32-bit word at the address given,
    // which lives as long as `word` is borrowed; no timeout, no second word.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            value,
            std::ptr::null::<libc::timespec>(),
        );
    }
}

/// Wakes every thread sleeping in [`wait_while`] on `word`.
pub(crate) fn wake_all(word: &AtomicI32) {
    // SAFETY: FUTEX_WAKE only uses the address as a key.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            i32::MAX,
        );
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn the_holder_is_told_and_others_take_turns() {
        let lock = Arc::new(TidLock::new(0_u64));
        {
            let _held = lock.lock().unwrap();
            assert_eq!(lock.lock().err(), Some(HeldByThisThread));
        }
        let workers: Vec<_> = (0..4)
            .map(|_| {
                let lock = Arc::clone(&lock);
                std::thread::spawn(move || {
                    for _ in 0..10_000 {
                        *lock.lock().unwrap() += 1;
                    }
                })
            })
            .collect();
        for worker in workers {
            worker.join().unwrap();
        }
        assert_eq!(*lock.lock().unwrap(), 40_000);
    }
}
