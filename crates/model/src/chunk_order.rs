//! The order of a recording's chunks of records, by their numbers: which
//! are missing (removed, or lost with the end of the file), which appear
//! again after their first copy, and which come after a later one. Each
//! chunk's checksums may hold while the file around it was cut and
//! pasted; its number says where it belongs.

use std::collections::{BTreeSet, HashSet};
use std::ops::Range;

use crate::chunk::CHUNK_NUMBERS;
use crate::header::Trailer;

/// A good chunk of records met on the way through the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SeenChunk {
    pub range: Range<u64>,
    /// As written: 0 in recordings made before chunks were numbered.
    pub number: u32,
    /// The samples its records hold.
    pub samples: u64,
}

/// What the numbers say.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ChunkOrder {
    /// Numbers never met, as `first..=last`.
    pub missing: Vec<(u64, u64)>,
    /// Chunks met again: number and samples; their bytes, to pass over.
    pub repeated: Vec<(u64, u64, Range<u64>)>,
    /// Chunks met after a later one: number and samples.
    pub reordered: Vec<(u64, u64)>,
}

impl ChunkOrder {
    pub(crate) fn is_empty(&self) -> bool {
        self.missing.is_empty() && self.repeated.is_empty() && self.reordered.is_empty()
    }
}

/// The order of `chunks` (see [`check_order`]), and whether the samples
/// they hold (but for repeated copies) differ from those the trailer
/// counts, where it is given to count them: `written` is the trailer's
/// number of chunks and the trailer.
pub(crate) fn check_chunks(
    chunks: &[SeenChunk],
    written: (u64, Option<&Trailer>),
    span: Range<u64>,
) -> (ChunkOrder, bool) {
    let order = check_order(chunks, written.0, span);
    let repeated: HashSet<u64> = order.repeated.iter().map(|(.., r)| r.start).collect();
    let held = (chunks.iter())
        .filter(|c| !repeated.contains(&c.range.start))
        .fold(0u64, |sum, c| sum.saturating_add(c.samples));
    let differ = written.1.is_some_and(|t| t.stats.total().samples != held);
    (order, differ)
}

/// The order of `chunks` (in file order, the good chunks of records that
/// lie in `span`), of which the trailer says `written` were written (0
/// where it does not say). A chunk is missing where its neighbours' bytes
/// meet but their numbers do not follow: where damaged bytes lie between,
/// the damage says what was lost. Recordings whose chunks are not
/// numbered have nothing to check.
pub(crate) fn check_order(chunks: &[SeenChunk], written: u64, span: Range<u64>) -> ChunkOrder {
    let mut order = ChunkOrder::default();
    let mut seen = BTreeSet::new();
    let mut gaps = Vec::new();
    let (mut highest, mut end) = (0u64, span.start);
    for chunk in chunks.iter().filter(|c| c.number != 0) {
        let number = unwrapped(chunk.number, highest);
        if !seen.insert(number) {
            (order.repeated).push((number, chunk.samples, chunk.range.clone()));
        } else if number < highest {
            order.reordered.push((number, chunk.samples));
        } else if number > highest + 1 && chunk.range.start == end {
            gaps.push((highest + 1, number - 1));
        }
        highest = highest.max(number);
        end = chunk.range.end;
    }
    if written > highest && end == span.end && (highest > 0 || chunks.is_empty()) {
        gaps.push((highest + 1, written));
    }
    // Gaps whose chunks turned up further on are not missing.
    for (first, last) in gaps {
        let mut next = first;
        for &found in seen.range(first..=last) {
            if found > next {
                order.missing.push((next, found - 1));
            }
            next = found + 1;
        }
        if next <= last {
            order.missing.push((next, last));
        }
    }
    order
}

/// The whole number of the chunk numbered `number` (1 to 2^24-1, which
/// then start again), the one nearest after `highest`, the highest met.
fn unwrapped(number: u32, highest: u64) -> u64 {
    let number = u64::from(number);
    let cycle = highest.saturating_sub(1) / CHUNK_NUMBERS;
    (cycle.saturating_sub(1)..=cycle + 1)
        .map(|c| c * CHUNK_NUMBERS + number)
        .min_by_key(|&whole| whole.abs_diff(highest + 1))
        .unwrap_or(number)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunks(numbers: &[u32]) -> Vec<SeenChunk> {
        (numbers.iter().enumerate())
            .map(|(i, &number)| SeenChunk {
                range: i as u64 * 100..(i as u64 + 1) * 100,
                number,
                samples: 10 + i as u64,
            })
            .collect()
    }

    /// `chunks`, laid end to end from 0.
    fn span(chunks: &[SeenChunk]) -> Range<u64> {
        0..chunks.last().map_or(0, |c| c.range.end)
    }

    fn check(numbers: &[u32], written: u64) -> ChunkOrder {
        let chunks = chunks(numbers);
        check_order(&chunks, written, span(&chunks))
    }

    #[test]
    fn missing_repeated_and_reordered_chunks_are_found() {
        assert_eq!(check(&[1, 2, 3], 3), ChunkOrder::default());
        assert_eq!(check(&[0, 0], 0), ChunkOrder::default());
        let order = check(&[2, 3, 3, 5, 4, 8], 9);
        assert_eq!(order.missing, [(1, 1), (6, 7), (9, 9)]);
        assert_eq!(order.repeated, [(3, 12, 200..300)]);
        assert_eq!(order.reordered, [(4, 14)]);
        // Every chunk gone: the trailer still says how many were written.
        assert_eq!(check_order(&[], 4, 0..0).missing, [(1, 4)]);
        // One that turns up later is not missing.
        assert_eq!(check(&[1, 3, 2], 3).missing, []);
    }

    #[test]
    fn chunks_lost_with_damaged_bytes_are_the_damages_to_tell() {
        let mut chunks = chunks(&[1, 3, 4]);
        // Damaged bytes between 1 and 3, and after 4.
        chunks[1].range = 150..250;
        chunks[2].range = 250..350;
        let order = check_order(&chunks, 6, 0..400);
        assert_eq!(order.missing, []);
        assert_eq!(check_order(&chunks, 6, 0..350).missing, [(5, 6)]);
    }

    #[test]
    fn numbers_wrap_past_2_24() {
        let top = CHUNK_NUMBERS as u32;
        // The first 2^24-3 chunks lost: the last four read as following
        // each other, 2^24-2 to 2^24+1.
        let order = check(&[top - 1, top, 1, 2], CHUNK_NUMBERS + 2);
        assert_eq!(order.missing, [(1, CHUNK_NUMBERS - 2)]);
        assert!(order.repeated.is_empty() && order.reordered.is_empty());
        let order = check(&[top, 1, top], 0);
        assert_eq!(order.repeated.len(), 1);
    }
}
