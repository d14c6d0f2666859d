//! CPU lists as the kernel writes them (/sys/devices/system/cpu/online) and
//! `-C` takes them: numbers and ranges, `0-3,8`.

use crate::error::EventsError;

/// Parses a CPU list such as `0-3,8,10-11`: sorted, each CPU once, at
/// least one.
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, EventsError> {
    let bad = || EventsError::BadCpuList {
        text: text.to_owned(),
    };
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|part| !part.is_empty()) {
        match part.split_once('-') {
            Some((first, last)) => {
                let first: usize = first.parse().map_err(|_| bad())?;
                let last: usize = last.parse().map_err(|_| bad())?;
                if first > last {
                    return Err(bad());
                }
                cpus.extend(first..=last);
            }
            None => cpus.push(part.parse().map_err(|_| bad())?),
        }
    }
    if cpus.is_empty() {
        return Err(bad());
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Writes sorted CPU numbers the way the kernel lists them (`0-3,6`).
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for &cpu in cpus {
        match ranges.last_mut() {
            Some((_, last)) if *last + 1 == cpu => *last = cpu,
            _ => ranges.push((cpu, cpu)),
        }
    }
    ranges
        .iter()
        .map(|&(first, last)| match first == last {
            true => first.to_string(),
            false => format!("{first}-{last}"),
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_and_print_like_the_kernels() {
        assert_eq!(parse_cpu_list("0").unwrap(), vec![0]);
        assert_eq!(parse_cpu_list("0-3\n").unwrap(), vec![0, 1, 2, 3]);
        assert_eq!(parse_cpu_list("0-1,4,6-7").unwrap(), vec![0, 1, 4, 6, 7]);
        assert_eq!(parse_cpu_list("3,0-1,1").unwrap(), vec![0, 1, 3]);
        for bad in ["", ",", "x", "2-1", "-1", "0,,a"] {
            let error = parse_cpu_list(bad).unwrap_err().to_string();
            assert!(error.contains("e.g. 0,2-3"), "{bad}: {error}");
        }
        assert_eq!(format_cpu_list(&[0, 1, 2, 3]), "0-3");
        assert_eq!(format_cpu_list(&[0, 2, 3, 5]), "0,2-3,5");
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 8]), "0-3,8");
        assert_eq!(format_cpu_list(&[0]), "0");
        assert_eq!(format_cpu_list(&[]), "");
    }
}
