//! What a count reads: each event's count as the kernel reports it, scaled
//! for the time the kernel multiplexed it away, or why there is none; per
//! event, and per thread.

use std::time::Duration;

/// A count as the kernel reports it, or the sum of several.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Count {
    /// Events counted while the counter ran.
    pub raw: u64,
    /// The estimate for the whole time it was enabled: raw × enabled /
    /// running.
    pub scaled: u64,
    pub enabled_ns: u64,
    pub running_ns: u64,
}

impl Count {
    pub fn new(raw: u64, enabled_ns: u64, running_ns: u64) -> Count {
        let scaled = match running_ns {
            0 => 0,
            _ if running_ns >= enabled_ns => raw,
            _ => (u128::from(raw) * u128::from(enabled_ns) / u128::from(running_ns))
                .min(u128::from(u64::MAX)) as u64,
        };
        Count {
            raw,
            scaled,
            enabled_ns,
            running_ns,
        }
    }

    /// Whether the counter ran whenever it was enabled at all: `<not
    /// counted>` otherwise. (A task's counter is enabled only while the
    /// task runs; one that never ran counted nothing, rightly.)
    pub fn was_counted(&self) -> bool {
        self.running_ns > 0 || self.enabled_ns == 0
    }

    /// The share of its enabled time the counter ran, in percent: below 100
    /// when the kernel multiplexed it with other events.
    pub fn running_percent(&self) -> Option<f64> {
        (self.enabled_ns > 0)
            .then(|| (self.running_ns as f64 / self.enabled_ns as f64 * 100.0).min(100.0))
    }

    pub fn add(&mut self, other: &Count) {
        self.raw += other.raw;
        self.scaled += other.scaled;
        self.enabled_ns += other.enabled_ns;
        self.running_ns += other.running_ns;
    }

    /// What was counted since `earlier`, scaled on its own times.
    pub fn since(&self, earlier: &Count) -> Count {
        Count::new(
            self.raw.saturating_sub(earlier.raw),
            self.enabled_ns.saturating_sub(earlier.enabled_ns),
            self.running_ns.saturating_sub(earlier.running_ns),
        )
    }
}

/// One event's count, or why there is none.
#[derive(Clone, Debug, PartialEq)]
pub enum EventValue {
    Counted(Count),
    /// The machine cannot count it (`<not supported>`).
    NotSupported {
        reason: String,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct EventCount {
    /// The event as the user named it (its canonical name by default).
    pub event: String,
    /// What one occurrence is: `ns` for the clocks, `events` otherwise.
    pub unit: &'static str,
    pub value: EventValue,
}

/// The counts of one thread (with `per_thread`).
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadCount {
    pub pid: u32,
    pub tid: u32,
    /// Its name (`comm`) when the counting began.
    pub name: Option<String>,
    pub events: Vec<EventCount>,
}

/// The counts over some span: the whole run, or one interval.
#[derive(Clone, Debug, PartialEq)]
pub struct StatCounts {
    /// Wall time since counting began (at the span's end).
    pub elapsed: Duration,
    /// The span's length in wall time.
    pub span: Duration,
    pub events: Vec<EventCount>,
    /// Per thread, with `per_thread`; empty otherwise.
    pub threads: Vec<ThreadCount>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_scaled_by_the_time_they_ran() {
        let count = Count::new(1000, 200, 100);
        assert_eq!(count.scaled, 2000);
        assert_eq!(count.running_percent(), Some(50.0));
        assert!(!Count::new(0, 100, 0).was_counted());
        assert!(Count::new(0, 0, 0).was_counted());
        assert_eq!(Count::new(5, 100, 100).scaled, 5);
        let later = Count::new(3000, 400, 300);
        assert_eq!(later.since(&count), Count::new(2000, 200, 200));
    }
}
