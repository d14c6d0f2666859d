//! Structural mutations of recordings: whole chunks dropped, repeated,
//! swapped or moved, each chunk's checksums intact and the end marker
//! pointing at the trailer again, as a file cut and pasted together would
//! be. The reader must read what is there and say, by the chunks' numbers
//! and the trailer's totals, what is missing, repeated or out of place.

use std::ops::Range;

use crate::rng::Rng;

/// Layout of the recording format (crates/model/src/layout.rs, chunk.rs).
const PREAMBLE_LEN: usize = 20;
const CHUNK_HEADER_LEN: usize = 20;
const FOOTER_LEN: usize = 24;
const TRAILER: u8 = 2;

/// `input` with its chunks rearranged, one to three times; `None` where
/// it is not a recording whose chunks can be walked.
pub(crate) fn restructure(rng: &mut Rng, input: &[u8]) -> Option<Vec<u8>> {
    let (start, chunks, trailer) = split(input)?;
    if chunks.is_empty() {
        return None;
    }
    let mut order: Vec<usize> = (0..chunks.len()).collect();
    for _ in 0..1 + rng.below(3) {
        let (a, b) = (rng.below(order.len()), rng.below(order.len()));
        match rng.below(4) {
            0 if order.len() > 1 => {
                order.remove(a);
            }
            1 => order.insert(b, order[a]),
            2 => order.swap(a, b),
            _ => {
                let moved = order.remove(a);
                order.insert(b.min(order.len()), moved);
            }
        }
    }
    let mut out = input[..start].to_vec();
    for &i in &order {
        out.extend_from_slice(&input[chunks[i].clone()]);
    }
    if let Some(trailer) = trailer {
        let at = out.len() as u64;
        out.extend_from_slice(&input[trailer.clone()]);
        out.extend_from_slice(&at.to_le_bytes());
        out.extend_from_slice(&(trailer.len() as u64).to_le_bytes());
        out.extend_from_slice(b"PROFEND1");
    }
    Some(out)
}

/// A recording's parts: where its chunks start, the chunks before the
/// trailer, and the trailer chunk.
type Parts = (usize, Vec<Range<usize>>, Option<Range<usize>>);

/// The parts of `input`, walking from the header as far as chunks follow
/// each other.
fn split(input: &[u8]) -> Option<Parts> {
    let word = |at: usize| -> Option<usize> {
        Some(u32::from_le_bytes(input.get(at..at + 4)?.try_into().ok()?) as usize)
    };
    if !input.starts_with(b"PROFILER") {
        return None;
    }
    let start = PREAMBLE_LEN.checked_add(word(12)?)?;
    let body_end = match input.ends_with(b"PROFEND1") {
        true => input.len().checked_sub(FOOTER_LEN)?,
        false => input.len(),
    };
    let (mut chunks, mut at) = (Vec::new(), start);
    while input.get(at..at + 4) == Some(b"CHNK") {
        let end = at
            .checked_add(CHUNK_HEADER_LEN)?
            .checked_add(word(at + 8)?)?;
        if end > body_end {
            break;
        }
        if input[at + 4] == TRAILER {
            return Some((start, chunks, Some(at..end)));
        }
        chunks.push(at..end);
        at = end;
    }
    Some((start, chunks, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recording of `chunks` chunks whose payloads are their index, and
    /// a trailer.
    fn recording(chunks: u8) -> Vec<u8> {
        let mut out = b"PROFILER\x02\0\0\0\x02\0\0\0\0\0\0\0{}".to_vec();
        let chunk = |kind: u8, payload: &[u8]| {
            let mut chunk = b"CHNK".to_vec();
            chunk.extend([kind, 0, 0, 0]);
            chunk.extend((payload.len() as u32).to_le_bytes());
            chunk.extend([0; 8]);
            chunk.extend(payload);
            chunk
        };
        for i in 0..chunks {
            out.extend(chunk(1, &[i]));
        }
        let at = out.len() as u64;
        out.extend(chunk(TRAILER, b"{}"));
        out.extend(at.to_le_bytes());
        out.extend(22u64.to_le_bytes());
        out.extend(b"PROFEND1");
        out
    }

    #[test]
    fn chunks_are_rearranged_whole_and_the_trailer_found_again() {
        let input = recording(5);
        let mut rng = Rng::new(3);
        let mut orders = std::collections::BTreeSet::new();
        for _ in 0..200 {
            let out = restructure(&mut rng, &input).unwrap();
            let (_, chunks, trailer) = split(&out).unwrap();
            let trailer = trailer.expect("the trailer is where the end marker says");
            let at = u64::from_le_bytes(out[out.len() - 24..out.len() - 16].try_into().unwrap());
            assert_eq!(at as usize, trailer.start);
            let order: Vec<u8> = chunks.iter().map(|c| out[c.start + 20]).collect();
            assert!(order.iter().all(|&i| i < 5));
            orders.insert(order);
        }
        // Drops, repeats and moves all happen.
        assert!(orders.iter().any(|o| o.len() < 5));
        assert!(orders.iter().any(|o| o.len() > 5));
        assert!(
            orders
                .iter()
                .any(|o| o.len() == 5 && o[..] != [0, 1, 2, 3, 4])
        );
    }
}
