//! Bucket arrays of 16, 32 or 64 bits, and what happens when one is full;
//! and buckets that take memory only where they count: a stored histogram
//! may cover hundreds of megabytes of text with a few hundred buckets
//! that counted, and a recording may claim any size.

use crate::error::HistogramError;

/// The width of each bucket. It changes how far a bucket can count, not
/// which addresses it covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BucketWidth {
    Bits16,
    Bits32,
    Bits64,
}

impl BucketWidth {
    pub fn from_bits(bits: u64) -> Result<BucketWidth, HistogramError> {
        match bits {
            16 => Ok(BucketWidth::Bits16),
            32 => Ok(BucketWidth::Bits32),
            64 => Ok(BucketWidth::Bits64),
            _ => Err(HistogramError::InvalidWidth { bits }),
        }
    }

    pub fn bits(self) -> u32 {
        match self {
            BucketWidth::Bits16 => 16,
            BucketWidth::Bits32 => 32,
            BucketWidth::Bits64 => 64,
        }
    }

    pub fn bytes(self) -> usize {
        self.bits() as usize / 8
    }

    /// The largest count a bucket holds.
    pub fn max(self) -> u64 {
        u64::MAX >> (64 - self.bits())
    }
}

impl Default for BucketWidth {
    /// PAPI's default, `PAPI_PROFIL_BUCKET_16`.
    fn default() -> Self {
        BucketWidth::Bits16
    }
}

/// What a full bucket does with another increment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OnFull {
    /// Stay at the maximum, as glibc's `sprofil` does (the default).
    #[default]
    Saturate,
    /// Wrap around to zero, as PAPI does.
    Wrap,
}

/// A bucket array. Two are equal when they count the same, however each
/// is held.
#[derive(Clone, Debug)]
pub enum Buckets {
    Bits16(Vec<u16>),
    Bits32(Vec<u32>),
    Bits64(Vec<u64>),
    /// Mostly empty buckets, as a stored histogram keeps them: only the
    /// runs that count take memory.
    Sparse(SparseBuckets),
}

impl PartialEq for Buckets {
    fn eq(&self, other: &Buckets) -> bool {
        (self.width(), self.len()) == (other.width(), other.len())
            && self.nonzero() == other.nonzero()
    }
}

impl Eq for Buckets {}

impl Buckets {
    pub fn new(width: BucketWidth, count: usize) -> Buckets {
        match width {
            BucketWidth::Bits16 => Buckets::Bits16(vec![0; count]),
            BucketWidth::Bits32 => Buckets::Bits32(vec![0; count]),
            BucketWidth::Bits64 => Buckets::Bits64(vec![0; count]),
        }
    }

    /// `count` buckets, all empty, that take memory only once they count.
    pub fn sparse(width: BucketWidth, count: usize) -> Buckets {
        Buckets::Sparse(SparseBuckets::new(width, count))
    }

    pub fn width(&self) -> BucketWidth {
        match self {
            Buckets::Bits16(_) => BucketWidth::Bits16,
            Buckets::Bits32(_) => BucketWidth::Bits32,
            Buckets::Bits64(_) => BucketWidth::Bits64,
            Buckets::Sparse(s) => s.width(),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Buckets::Bits16(b) => b.len(),
            Buckets::Bits32(b) => b.len(),
            Buckets::Bits64(b) => b.len(),
            Buckets::Sparse(s) => s.len(),
        }
    }

    /// How many buckets take memory: all of them, but for sparse ones.
    pub fn held(&self) -> usize {
        match self {
            Buckets::Sparse(s) => s.held(),
            dense => dense.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, index: usize) -> u64 {
        match self {
            Buckets::Bits16(b) => u64::from(b[index]),
            Buckets::Bits32(b) => u64::from(b[index]),
            Buckets::Bits64(b) => b[index],
            Buckets::Sparse(s) => s.get(index),
        }
    }

    /// Every count, widened to 64 bits.
    pub fn counts(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    // The scans below are over every bucket of a region: a recording may
    // claim a region of hundreds of millions of them. Each loops over the
    // slice of its width, and the crate is optimized in test builds too.

    /// The sum of the counts, held at `u64::MAX`.
    pub fn total(&self) -> u64 {
        fn sum<T: Copy + Into<u64>>(counts: &[T]) -> u64 {
            (counts.iter()).fold(0, |sum: u64, &c| sum.saturating_add(c.into()))
        }
        match self {
            Buckets::Bits16(b) => sum(b),
            Buckets::Bits32(b) => sum(b),
            Buckets::Bits64(b) => sum(b),
            Buckets::Sparse(s) => {
                (s.runs().map(|(_, run)| run.total())).fold(0, u64::saturating_add)
            }
        }
    }

    /// Each bucket that counted something, by index, with its count.
    pub fn nonzero(&self) -> Vec<(usize, u64)> {
        fn nonzero<T: Copy + Into<u64>>(counts: &[T]) -> Vec<(usize, u64)> {
            (counts.iter().enumerate())
                .map(|(index, &count)| (index, count.into()))
                .filter(|&(_, count)| count > 0)
                .collect()
        }
        match self {
            Buckets::Bits16(b) => nonzero(b),
            Buckets::Bits32(b) => nonzero(b),
            Buckets::Bits64(b) => nonzero(b),
            Buckets::Sparse(s) => (s.runs())
                .flat_map(|(first, run)| {
                    run.nonzero().into_iter().map(move |(i, n)| (first + i, n))
                })
                .collect(),
        }
    }

    /// The counts as native-endian 16-bit words (gprof's bins), each held
    /// at 65535, appended to `out`; returns the sum of the counts (held at
    /// `u64::MAX`) and how many of them were held.
    pub fn write_u16_ne(&self, out: &mut Vec<u8>) -> (u64, usize) {
        fn narrowed<T: Copy + Into<u64>>(counts: &[T], out: &mut Vec<u8>) -> (u64, usize) {
            let (mut total, mut held) = (0u64, 0);
            out.reserve(2 * counts.len());
            for &count in counts {
                let count: u64 = count.into();
                total = total.saturating_add(count);
                held += usize::from(count > u64::from(u16::MAX));
                out.extend_from_slice(&(count.min(u64::from(u16::MAX)) as u16).to_ne_bytes());
            }
            (total, held)
        }
        match self {
            Buckets::Bits16(b) => narrowed(b, out),
            Buckets::Bits32(b) => narrowed(b, out),
            Buckets::Bits64(b) => narrowed(b, out),
            Buckets::Sparse(s) => {
                let (mut total, mut held, mut at) = (0u64, 0, 0);
                out.reserve(2 * s.len());
                for (first, run) in s.runs() {
                    out.resize(out.len() + 2 * (first - at), 0);
                    let (sum, capped) = run.write_u16_ne(out);
                    (total, held) = (total.saturating_add(sum), held + capped);
                    at = first + run.len();
                }
                out.resize(out.len() + 2 * (s.len() - at), 0);
                (total, held)
            }
        }
    }

    /// Adds `amount` to bucket `index`. Returns false when the bucket could
    /// not hold it (it saturated or wrapped).
    pub fn add(&mut self, index: usize, amount: u64, on_full: OnFull) -> bool {
        let max = self.width().max();
        let old = self.get(index);
        let (new, fits) = match old.checked_add(amount).filter(|&sum| sum <= max) {
            Some(sum) => (sum, true),
            None => match on_full {
                OnFull::Saturate => (max, false),
                OnFull::Wrap => (old.wrapping_add(amount) & max, false),
            },
        };
        self.set(index, new);
        fits
    }

    /// The buckets as little-endian bytes, for storage.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        let mut bytes = vec![0; self.len() * self.width().bytes()];
        self.write_bytes(&mut bytes, ByteOrder::Little);
        bytes
    }

    /// Reads buckets written by [`Buckets::to_le_bytes`]; `None` if the
    /// length is not a whole number of buckets.
    pub fn from_le_bytes(width: BucketWidth, bytes: &[u8]) -> Option<Buckets> {
        Buckets::from_bytes(width, bytes, ByteOrder::Little)
    }

    /// Reads buckets as a C program holds them in memory (`unsigned short`,
    /// `unsigned int` or `unsigned long long` in the machine's byte order);
    /// `None` if the length is not a whole number of buckets.
    pub fn from_ne_bytes(width: BucketWidth, bytes: &[u8]) -> Option<Buckets> {
        Buckets::from_bytes(width, bytes, ByteOrder::Native)
    }

    /// Writes the buckets into `out` as a C program holds them in memory,
    /// as many as fit.
    pub fn write_ne_bytes(&self, out: &mut [u8]) {
        self.write_bytes(out, ByteOrder::Native);
    }

    fn write_bytes(&self, out: &mut [u8], order: ByteOrder) {
        let chunks = out.chunks_exact_mut(self.width().bytes());
        for (chunk, count) in chunks.zip(self.counts()) {
            order.write(count, chunk);
        }
    }

    fn from_bytes(width: BucketWidth, bytes: &[u8], order: ByteOrder) -> Option<Buckets> {
        if !bytes.len().is_multiple_of(width.bytes()) {
            return None;
        }
        let mut buckets = Buckets::new(width, bytes.len() / width.bytes());
        for (index, chunk) in bytes.chunks_exact(width.bytes()).enumerate() {
            buckets.set(index, order.read(chunk));
        }
        Some(buckets)
    }

    /// Sets bucket `index` to `value`, which fits the width.
    pub(crate) fn set(&mut self, index: usize, value: u64) {
        match self {
            Buckets::Bits16(b) => b[index] = value as u16,
            Buckets::Bits32(b) => b[index] = value as u32,
            Buckets::Bits64(b) => b[index] = value,
            Buckets::Sparse(s) => s.set(index, value),
        }
    }
}

/// How a bucket's bytes are ordered.
#[derive(Clone, Copy)]
enum ByteOrder {
    Little,
    Native,
}

impl ByteOrder {
    fn is_big_endian(self) -> bool {
        matches!(self, ByteOrder::Native) && cfg!(target_endian = "big")
    }

    /// A count from its 2, 4 or 8 bytes.
    fn read(self, bytes: &[u8]) -> u64 {
        let mut wide = [0; 8];
        if self.is_big_endian() {
            wide[8 - bytes.len()..].copy_from_slice(bytes);
            u64::from_be_bytes(wide)
        } else {
            wide[..bytes.len()].copy_from_slice(bytes);
            u64::from_le_bytes(wide)
        }
    }

    /// Writes a count that fits in `out`'s 2, 4 or 8 bytes.
    fn write(self, count: u64, out: &mut [u8]) {
        let n = out.len();
        if self.is_big_endian() {
            out.copy_from_slice(&count.to_be_bytes()[8 - n..]);
        } else {
            out.copy_from_slice(&count.to_le_bytes()[..n]);
        }
    }
}

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

    #[test]
    fn widths_parse_and_bound_their_counts() {
        assert_eq!(BucketWidth::from_bits(16).unwrap().max(), 65_535);
        assert_eq!(BucketWidth::from_bits(32).unwrap().max(), u32::MAX as u64);
        assert_eq!(BucketWidth::from_bits(64).unwrap().max(), u64::MAX);
        let error = BucketWidth::from_bits(8).unwrap_err();
        assert!(error.to_string().contains("16, 32 or 64"), "{error}");
    }

    #[test]
    fn saturation_and_wrap_per_width() {
        // (width, start, amount, mode, result, fits)
        let table = [
            (16, 65_534, 1, OnFull::Saturate, 65_535, true),
            (16, 65_535, 1, OnFull::Saturate, 65_535, false),
            (16, 65_535, 1, OnFull::Wrap, 0, false),
            (16, 65_530, 10, OnFull::Wrap, 4, false),
            (16, 100, 255, OnFull::Saturate, 355, true),
            (
                32,
                u32::MAX as u64,
                1,
                OnFull::Saturate,
                u32::MAX as u64,
                false,
            ),
            (32, u32::MAX as u64, 2, OnFull::Wrap, 1, false),
            (32, 65_535, 1, OnFull::Saturate, 65_536, true),
            (64, u64::MAX, 1, OnFull::Saturate, u64::MAX, false),
            (64, u64::MAX, 1, OnFull::Wrap, 0, false),
            (64, u32::MAX as u64, 1, OnFull::Wrap, 1 << 32, true),
        ];
        for (bits, start, amount, mode, result, fits) in table {
            let width = BucketWidth::from_bits(bits).unwrap();
            let mut buckets = Buckets::new(width, 3);
            if start > 0 {
                assert!(buckets.add(1, start, OnFull::Saturate));
            }
            assert_eq!(
                buckets.add(1, amount, mode),
                fits,
                "{bits} bits, {start} + {amount}, {mode:?}"
            );
            assert_eq!(
                buckets.get(1),
                result,
                "{bits} bits, {start} + {amount}, {mode:?}"
            );
            assert_eq!((buckets.get(0), buckets.get(2)), (0, 0));
        }
    }

    #[test]
    fn buckets_round_trip_through_bytes() {
        for bits in [16, 32, 64] {
            let width = BucketWidth::from_bits(bits).unwrap();
            let mut buckets = Buckets::new(width, 5);
            buckets.add(0, 7, OnFull::Saturate);
            buckets.add(4, width.max(), OnFull::Saturate);
            let bytes = buckets.to_le_bytes();
            assert_eq!(bytes.len(), 5 * width.bytes());
            assert_eq!(Buckets::from_le_bytes(width, &bytes), Some(buckets));
            assert_eq!(Buckets::from_le_bytes(width, &bytes[1..]), None);
        }
    }

    #[test]
    fn buckets_round_trip_through_memory_as_c_holds_it() {
        let counts: [u16; 3] = [1, 0x1234, u16::MAX];
        let bytes: Vec<u8> = counts.iter().flat_map(|c| c.to_ne_bytes()).collect();
        let buckets = Buckets::from_ne_bytes(BucketWidth::Bits16, &bytes).unwrap();
        assert_eq!(buckets.counts().collect::<Vec<_>>(), [1, 0x1234, 65_535]);
        let wide: [u64; 2] = [u64::MAX, 7];
        let bytes: Vec<u8> = wide.iter().flat_map(|c| c.to_ne_bytes()).collect();
        let buckets = Buckets::from_ne_bytes(BucketWidth::Bits64, &bytes).unwrap();
        assert_eq!(buckets.counts().collect::<Vec<_>>(), wide);
        // Written back into a larger buffer: the rest is left alone.
        let mut out = [0xaa_u8; 20];
        buckets.write_ne_bytes(&mut out);
        assert_eq!(out[..16], bytes[..]);
        assert_eq!(out[16..], [0xaa; 4]);
        let mut words = [0_u8; 8];
        Buckets::from_ne_bytes(BucketWidth::Bits32, &7_u32.to_ne_bytes().repeat(2))
            .unwrap()
            .write_ne_bytes(&mut words);
        assert_eq!(words[..4], 7_u32.to_ne_bytes());
        assert_eq!(Buckets::from_ne_bytes(BucketWidth::Bits32, &[0; 6]), None);
    }

    #[test]
    fn whole_scans_total_find_and_narrow_the_counts() {
        let buckets = Buckets::Bits64(vec![0, 3, 0, 70_000, u64::MAX]);
        assert_eq!(buckets.total(), u64::MAX);
        assert_eq!(buckets.nonzero(), [(1, 3), (3, 70_000), (4, u64::MAX)]);
        let mut bins = Vec::new();
        assert_eq!(buckets.write_u16_ne(&mut bins), (u64::MAX, 2));
        let bins: Vec<u16> = (bins.chunks_exact(2))
            .map(|b| u16::from_ne_bytes([b[0], b[1]]))
            .collect();
        assert_eq!(bins, [0, 3, 0, u16::MAX, u16::MAX]);
        let small = Buckets::Bits16(vec![0, 2, 5]);
        assert_eq!((small.total(), small.nonzero()), (7, vec![(1, 2), (2, 5)]));
    }
}

#[cfg(test)]
mod sparse_tests {
    use super::*;

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
