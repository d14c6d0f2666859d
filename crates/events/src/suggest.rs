//! The nearest known name to a misspelt one, for "did you mean" hints: an
//! edit distance, ignoring case, within a limit that grows with the name.

/// The candidate closest to `name` (ignoring case) within a few edits.
pub(crate) fn closest<'a>(
    name: &str,
    candidates: impl Iterator<Item = &'a str>,
) -> Option<&'a str> {
    let length = name.chars().count();
    let limit = (length / 3).clamp(1, 2);
    let name = name.to_ascii_lowercase();
    candidates
        .map(|candidate| {
            (
                edit_distance(&name, &candidate.to_ascii_lowercase()),
                candidate,
            )
        })
        .filter(|(distance, _)| *distance <= limit)
        .min()
        .map(|(_, candidate)| candidate)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_needs_a_near_name() {
        let names = ["cs", "cpu-clock", "umask"];
        assert_eq!(closest("xx", names.iter().copied()), None);
        assert_eq!(closest("umsk", names.iter().copied()), Some("umask"));
        assert_eq!(
            closest("CPU-CLOK", names.iter().copied()),
            Some("cpu-clock")
        );
    }
}
