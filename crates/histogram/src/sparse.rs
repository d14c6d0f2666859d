//! Buckets that take memory only where they count: a stored histogram
//! may cover hundreds of megabytes of text with a few hundred buckets
//! that counted, and a recording may claim any size.

use crate::buckets::{BucketWidth, Buckets};

/// `len` buckets of `width`, held as runs of dense buckets; every other
/// bucket is empty.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SparseBuckets {
    width: BucketWidth,
    len: usize,
    /// By their first bucket, in order, apart; each run dense.
    runs: Vec<(usize, Buckets)>,
}

impl SparseBuckets {
    pub(crate) fn new(width: BucketWidth, len: usize) -> SparseBuckets {
        SparseBuckets {
            width,
            len,
            runs: Vec::new(),
        }
    }

    pub(crate) fn width(&self) -> BucketWidth {
        self.width
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Buckets held in memory.
    pub(crate) fn held(&self) -> usize {
        self.runs.iter().map(|(_, run)| run.len()).sum()
    }

    /// The runs, by their first bucket.
    pub(crate) fn runs(&self) -> impl Iterator<Item = (usize, &Buckets)> {
        self.runs.iter().map(|(first, run)| (*first, run))
    }

    /// The run holding bucket `index`, and where in it.
    fn find(&self, index: usize) -> Result<(usize, usize), usize> {
        let after = self.runs.partition_point(|(first, _)| *first <= index);
        match after.checked_sub(1) {
            Some(run) if index - self.runs[run].0 < self.runs[run].1.len() => {
                Ok((run, index - self.runs[run].0))
            }
            _ => Err(after),
        }
    }

    pub(crate) fn get(&self, index: usize) -> u64 {
        assert!(index < self.len, "bucket {index} of {}", self.len);
        self.find(index)
            .map_or(0, |(run, at)| self.runs[run].1.get(at))
    }

    pub(crate) fn set(&mut self, index: usize, value: u64) {
        assert!(index < self.len, "bucket {index} of {}", self.len);
        match self.find(index) {
            Ok((run, at)) => self.runs[run].1.set(at, value),
            Err(_) if value == 0 => {}
            Err(at) => {
                let mut run = Buckets::new(self.width, 1);
                run.set(0, value);
                self.runs.insert(at, (index, run));
            }
        }
    }

    /// Adds the run `buckets` (dense) from bucket `first` on; `None` where
    /// it passes the end or does not follow the last run.
    pub fn push_run(&mut self, first: usize, buckets: Buckets) -> Option<()> {
        let end = first.checked_add(buckets.len())?;
        let after_last = self.runs.last().map_or(0, |(f, run)| f + run.len());
        if end > self.len || first < after_last || buckets.width() != self.width {
            return None;
        }
        if let Buckets::Sparse(_) = buckets {
            return None;
        }
        self.runs.push((first, buckets));
        Some(())
    }
}

impl Buckets {
    /// The sparse buckets inside, to add runs to; `None` for dense ones.
    pub fn as_sparse_mut(&mut self) -> Option<&mut SparseBuckets> {
        match self {
            Buckets::Sparse(s) => Some(s),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buckets::OnFull;

    #[test]
    fn sparse_buckets_count_as_dense_ones_and_hold_only_their_runs() {
        let width = BucketWidth::Bits32;
        let mut sparse = Buckets::sparse(width, 1 << 30);
        let mut dense = Buckets::new(width, 1 << 12);
        for (index, amount) in [(5, 3), (4000, 7), (5, 2), (6, 1), (4095, u64::MAX), (0, 1)] {
            assert_eq!(
                sparse.add(index, amount, OnFull::Saturate),
                dense.add(index, amount, OnFull::Saturate)
            );
        }
        assert_eq!(sparse.len(), 1 << 30);
        assert_eq!(sparse.held(), 5);
        assert_eq!(sparse.nonzero(), dense.nonzero());
        assert_eq!(sparse.total(), dense.total());
        assert_eq!(
            (sparse.get(5), sparse.get(7), sparse.get(1 << 29)),
            (5, 0, 0)
        );

        let mut runs = Buckets::sparse(BucketWidth::Bits16, 10);
        let run = Buckets::from_le_bytes(BucketWidth::Bits16, &[1, 0, 0, 0, 2, 0]).unwrap();
        let store = runs.as_sparse_mut().unwrap();
        assert_eq!(store.push_run(2, run.clone()), Some(()));
        assert_eq!(store.push_run(4, run.clone()), None, "overlaps");
        assert_eq!(store.push_run(8, run.clone()), None, "past the end");
        let mut bins = Vec::new();
        assert_eq!(runs.write_u16_ne(&mut bins), (3, 0));
        let words: Vec<u16> = (bins.chunks(2))
            .map(|w| u16::from_ne_bytes([w[0], w[1]]))
            .collect();
        assert_eq!(words, [0, 0, 1, 0, 2, 0, 0, 0, 0, 0]);
    }
}
