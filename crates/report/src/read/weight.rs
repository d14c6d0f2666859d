//! What a sample counts for: once among the samples, and its period among
//! the events they stand for; and sums of counts that do not wrap.

/// Samples and the events they stand for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Weight {
    pub samples: u64,
    pub period: u64,
}

impl Weight {
    pub fn add(&mut self, other: Weight) {
        // Saturating: a recording's periods are whatever its file says.
        self.samples = self.samples.saturating_add(other.samples);
        self.period = self.period.saturating_add(other.period);
    }
}

/// The sum of `counts`, held at `u64::MAX`: a recording may state any
/// count (a histogram's 64-bit buckets, a period), and sums of them must
/// not wrap.
pub(crate) fn total(counts: impl IntoIterator<Item = u64>) -> u64 {
    counts.into_iter().fold(0, u64::saturating_add)
}
