//! Mutations of an input: bit flips, bytes and words set to the values
//! that break arithmetic (0, all ones, the ends of each width, small
//! numbers), ranges duplicated, removed, moved or cut off, splices with
//! another seed, and the target's own tokens dropped in.

use crate::rng::Rng;

/// Values that make sizes, counts and offsets overflow or run off the end.
const INTERESTING: [u64; 16] = [
    0,
    1,
    2,
    7,
    8,
    16,
    0x40,
    0x7f,
    0x80,
    0xff,
    0x1000,
    0x7fff_ffff,
    0xffff_ffff,
    0x8000_0000_0000_0000,
    u64::MAX - 1,
    u64::MAX,
];

/// Inputs grow no larger than this: big enough for any seed, small enough
/// that a duplication loop cannot fill the memory of the fuzzer itself.
const MAX_LEN: usize = 8 << 20;

/// Nor more than this beyond their seed: more of the same makes the
/// readers slower, not different.
const MAX_GROWTH: usize = 64 << 10;

/// A mutated copy of `input`: one to sixteen mutations stacked, fewer
/// more often. `seeds` are spliced in; `dictionary` holds tokens of the
/// target's format.
pub(crate) fn mutate(
    rng: &mut Rng,
    input: &[u8],
    seeds: &[Vec<u8>],
    dictionary: &[&[u8]],
) -> Vec<u8> {
    let mut data = input.to_vec();
    let count = 1 << rng.below(5);
    for _ in 0..count {
        mutate_once(rng, &mut data, seeds, dictionary);
    }
    data.truncate(input.len().saturating_add(MAX_GROWTH).min(MAX_LEN));
    data
}

fn mutate_once(rng: &mut Rng, data: &mut Vec<u8>, seeds: &[Vec<u8>], dictionary: &[&[u8]]) {
    if data.is_empty() {
        data.push(rng.next() as u8);
        return;
    }
    let len = data.len();
    match rng.below(11) {
        0 => {
            let at = rng.below(len);
            data[at] ^= 1 << rng.below(8);
        }
        1 => {
            let at = rng.below(len);
            data[at] = rng.next() as u8;
        }
        2 | 3 => {
            let value = INTERESTING[rng.below(INTERESTING.len())];
            let width = [1, 2, 4, 8][rng.below(4)];
            let value = match rng.one_in(4) {
                true => value.wrapping_neg(),
                false => value,
            };
            put_word(rng, data, value, width);
        }
        4 => {
            // A word nudged: counts and lengths one off, either way.
            let width = [1, 2, 4, 8][rng.below(4)];
            let at = aligned(rng, len, width);
            let end = (at + width).min(len);
            let mut word = [0; 8];
            word[..end - at].copy_from_slice(&data[at..end]);
            let delta = 1 + rng.below(16) as u64;
            let value = match rng.one_in(2) {
                true => u64::from_le_bytes(word).wrapping_add(delta),
                false => u64::from_le_bytes(word).wrapping_sub(delta),
            };
            data[at..end].copy_from_slice(&value.to_le_bytes()[..end - at]);
        }
        5 => {
            let (start, end) = range(rng, len);
            let copy = data[start..end].to_vec();
            let at = rng.below(len + 1);
            data.splice(at..at, copy);
        }
        6 => {
            let (start, end) = range(rng, len);
            data.drain(start..end);
        }
        7 => data.truncate(rng.below(len)),
        8 => {
            let (start, end) = range(rng, len);
            let copy = data[start..end].to_vec();
            let at = rng.below(len);
            let end = (at + copy.len()).min(len);
            data[at..end].copy_from_slice(&copy[..end - at]);
        }
        9 => {
            let Some(other) = seeds.get(rng.below(seeds.len())).filter(|s| !s.is_empty()) else {
                return;
            };
            let at = rng.below(len);
            let (start, end) = range(rng, other.len());
            match rng.one_in(2) {
                // The head of this input, the tail of the other.
                true => {
                    data.truncate(at);
                    data.extend_from_slice(&other[start..]);
                }
                false => {
                    data.splice(at..at, other[start..end].iter().copied());
                }
            }
        }
        _ => {
            let Some(token) = dictionary.get(rng.below(dictionary.len())) else {
                return;
            };
            let at = rng.below(len + 1);
            match rng.one_in(2) {
                true => {
                    data.splice(at..at, token.iter().copied());
                }
                false => {
                    let end = (at + token.len()).min(len);
                    data[at..end].copy_from_slice(&token[..end - at]);
                }
            }
        }
    }
}

/// Writes `value`'s low `width` bytes at a position aligned to `width`
/// most of the time (as the fields of binary formats are), little-endian
/// mostly, big-endian sometimes.
fn put_word(rng: &mut Rng, data: &mut [u8], value: u64, width: usize) {
    let at = aligned(rng, data.len(), width);
    let end = (at + width).min(data.len());
    let bytes = match rng.one_in(4) {
        true => value.to_be_bytes()[8 - width..].to_vec(),
        false => value.to_le_bytes()[..width].to_vec(),
    };
    data[at..end].copy_from_slice(&bytes[..end - at]);
}

fn aligned(rng: &mut Rng, len: usize, width: usize) -> usize {
    let at = rng.below(len);
    match rng.one_in(4) {
        true => at,
        false => at - at % width,
    }
}

/// A range of a `len`-byte input, short ones more often.
fn range(rng: &mut Rng, len: usize) -> (usize, usize) {
    let start = rng.below(len);
    let most = (len - start).min(1 << rng.below(16));
    (
        start,
        start + 1 + rng.below(most.max(1)).min(len - start - 1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_inputs_and_every_input_differs_in_some() {
        let seed: Vec<u8> = (0..=255).collect();
        let seeds = vec![seed.clone(), b"another seed".to_vec()];
        let dictionary: &[&[u8]] = &[b"TOKEN"];
        let run = |s| {
            let mut rng = Rng::new(s);
            (0..2000)
                .map(|_| mutate(&mut rng, &seed, &seeds, dictionary))
                .collect::<Vec<_>>()
        };
        let first = run(7);
        assert_eq!(first, run(7));
        assert_ne!(first, run(8));
        let changed = first.iter().filter(|m| **m != seed).count();
        assert!(changed > 1900, "{changed} of 2000 changed");
        assert!(first.iter().any(|m| m.len() < seed.len()));
        assert!(first.iter().any(|m| m.len() > seed.len()));
        assert!(first.iter().any(|m| m.windows(5).any(|w| w == b"TOKEN")));
        assert!(first.iter().any(|m| m.windows(4).any(|w| w == [0xff; 4])));
    }
}
