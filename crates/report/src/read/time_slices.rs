//! `--time`: the stretches of a recording whose samples a view counts, as
//! `perf report --time` takes them: `START,STOP` in seconds (from the
//! recording's first sample here, where perf takes its clock's own
//! timestamps), several separated by spaces, either end left open; or
//! shares of the time from the first sample to the last: `10%-20%`, or
//! `10%/2` for the second tenth, several separated by commas.

use profiler_model::{Recording, Sample};

use crate::error::ReportError;

/// The slices `--time` names, before they are placed in a recording.
#[derive(Clone, Debug, PartialEq)]
pub struct TimeSlices {
    /// As given, for messages.
    text: String,
    slices: Vec<Slice>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Slice {
    /// Seconds from the recording's first sample; `None`: open.
    Seconds {
        start: Option<f64>,
        stop: Option<f64>,
    },
    /// Shares (0 to 1) of the time from the first sample to the last.
    Shares { start: f64, end: f64 },
}

/// Where samples count: inclusive ranges of perf-clock nanoseconds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct TimeWindows(Vec<(u64, u64)>);

impl TimeWindows {
    /// Whether a sample taken at `time` counts.
    pub(crate) fn admits(&self, time: u64) -> bool {
        self.0.is_empty() || (self.0.iter()).any(|&(start, end)| start <= time && time <= end)
    }
}

impl TimeSlices {
    /// `1.5,3`, `,2`, `4,`, `0,1 2,3`; `10%-20%`, `10%/2`, `0%-10%,30%-40%`.
    pub fn parse(text: &str) -> Result<TimeSlices, String> {
        let slices: Result<Vec<Slice>, String> = match text.contains('%') {
            true => text.split(',').map(share_slice).collect(),
            false => text.split_whitespace().map(seconds_slice).collect(),
        };
        let slices = slices.map_err(|problem| {
            format!(
                "{problem}; give START,STOP in seconds from the recording's first sample \
                 (e.g. 1.5,3, or ,2 or 4, with one end open; several separated by spaces), or \
                 perf's shares of its time: 10%-20%, or 10%/2 for the second tenth"
            )
        })?;
        if slices.is_empty() {
            return Err("--time names no stretch of time; e.g. 1.5,3 or 10%/2".into());
        }
        Ok(TimeSlices {
            text: text.trim().to_owned(),
            slices,
        })
    }

    /// The slices as given.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The slices placed in a recording whose samples were taken from
    /// `first` to `last` (perf-clock nanoseconds). A slice of shares ends a
    /// nanosecond before the next begins, as perf's do.
    pub(crate) fn windows(&self, first: u64, last: u64) -> TimeWindows {
        let span = last.saturating_sub(first);
        let at = |share: f64| first.saturating_add((share * span as f64).round() as u64);
        let seconds = |s: f64| first.saturating_add((s * 1e9).round() as u64);
        let windows = (self.slices.iter())
            .map(|slice| match *slice {
                Slice::Seconds { start, stop } => {
                    (start.map_or(0, seconds), stop.map_or(u64::MAX, seconds))
                }
                Slice::Shares { start, end } => {
                    let (start, mut end) = (at(start), at(end));
                    if end > start && end != last {
                        end -= 1;
                    }
                    (start, end)
                }
            })
            .collect();
        TimeWindows(windows)
    }
}

/// `START,STOP`, either end empty.
fn seconds_slice(text: &str) -> Result<Slice, String> {
    let Some((start, stop)) = text.split_once(',') else {
        return Err(format!("'{text}' is not START,STOP"));
    };
    let seconds = |part: &str| -> Result<Option<f64>, String> {
        match part.trim() {
            "" => Ok(None),
            part => match part.parse::<f64>() {
                Ok(s) if s.is_finite() && s >= 0.0 => Ok(Some(s)),
                _ => Err(format!("'{part}' is not a number of seconds")),
            },
        }
    };
    let (start, stop) = (seconds(start)?, seconds(stop)?);
    if let (Some(a), Some(b)) = (start, stop)
        && b < a
    {
        return Err(format!("'{text}' stops before it starts"));
    }
    Ok(Slice::Seconds { start, stop })
}

/// `A%-B%` or `A%/N`.
fn share_slice(text: &str) -> Result<Slice, String> {
    let text = text.trim();
    let share = |part: &str| -> Result<f64, String> {
        let number = (part.trim().strip_suffix('%'))
            .ok_or_else(|| format!("'{part}' is not a percentage"))?;
        match number.parse::<f64>() {
            Ok(p) if p.is_finite() => Ok(p / 100.0),
            _ => Err(format!("'{part}' is not a percentage")),
        }
    };
    let (start, end) = if let Some((size, nth)) = text.split_once('/') {
        let size = share(size)?;
        let nth: u32 = (nth.trim().parse())
            .map_err(|_| format!("'{nth}' in '{text}' is not a slice number (1 for the first)"))?;
        if size <= 0.0 || nth == 0 {
            return Err(format!("'{text}' names no slice"));
        }
        (size * f64::from(nth - 1), size * f64::from(nth))
    } else if let Some((start, end)) = text.split_once('-') {
        (share(start)?, share(end)?)
    } else {
        return Err(format!("'{text}' is neither A%-B% nor A%/N"));
    };
    if !(0.0..=1.0).contains(&start) || !(0.0..=1.0).contains(&end) || end < start {
        return Err(format!("'{text}' lies outside 0%-100%"));
    }
    Ok(Slice::Shares { start, end })
}

/// The times of the first and the last sample of `recording` (perf-clock
/// nanoseconds), whatever their order in the file; `None` without samples.
pub(crate) fn sample_span(recording: &Recording) -> Result<Option<(u64, u64)>, ReportError> {
    let (_, mut samples) = recording.replay()?;
    let mut sample = Sample::default();
    let mut span: Option<(u64, u64)> = None;
    while let Some(read) = samples.next_into(&mut sample) {
        read?;
        let (first, last) = span.get_or_insert((sample.time, sample.time));
        *first = (*first).min(sample.time);
        *last = (*last).max(sample.time);
    }
    Ok(span)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn windows(text: &str, first: u64, last: u64) -> Vec<(u64, u64)> {
        TimeSlices::parse(text).unwrap().windows(first, last).0
    }

    #[test]
    fn seconds_count_from_the_first_sample() {
        let s = 1_000_000_000;
        assert_eq!(windows("1,2.5", 7 * s, 20 * s), [(8 * s, 9 * s + s / 2)]);
        assert_eq!(windows(",2", 7 * s, 20 * s), [(0, 9 * s)]);
        assert_eq!(windows("3,", 7 * s, 20 * s), [(10 * s, u64::MAX)]);
        assert_eq!(
            windows("0,1 2,3", 0, 9 * s),
            [(0, s), (2 * s, 3 * s)],
            "several stretches, separated by spaces"
        );
    }

    #[test]
    fn shares_are_perfs_slices_of_first_to_last() {
        // perf-report(1): 10%/2 is the second tenth; 0%-10% the first.
        assert_eq!(windows("10%/2", 1000, 2000), [(1100, 1199)]);
        assert_eq!(windows("0%-10%", 1000, 2000), [(1000, 1099)]);
        assert_eq!(windows("10%/1,10%/2", 0, 1000), [(0, 99), (100, 199)]);
        assert_eq!(windows("90%-100%", 0, 1000), [(900, 1000)]);
        assert_eq!(windows("50%/2", 0, 1000), [(500, 1000)]);
    }

    #[test]
    fn nonsense_is_refused_with_the_forms_that_work() {
        for bad in [
            "", "1", "2,1", "a,b", "10%", "10%/0", "0%/3", "50%-20%", "90%-110%", "x%/2", "-1,2",
        ] {
            let error = TimeSlices::parse(bad).unwrap_err();
            assert!(error.contains("e.g."), "{bad}: {error}");
        }
    }

    #[test]
    fn a_window_admits_its_ends() {
        let windows = TimeWindows(vec![(10, 20), (30, 40)]);
        let admitted: Vec<u64> = (0..50).filter(|&t| windows.admits(t)).collect();
        assert_eq!(
            admitted,
            [(10..=20).collect::<Vec<_>>(), (30..=40).collect()].concat()
        );
        assert!(TimeWindows::default().admits(5));
    }
}
