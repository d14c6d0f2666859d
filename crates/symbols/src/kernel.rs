//! Kernel addresses named from /proc/kallsyms (readable with real addresses
//! by root, or by anyone at kernel.kptr_restrict=0 and
//! kernel.perf_event_paranoid 1 or less).

const KALLSYMS: &str = "/proc/kallsyms";

/// What kernel samples are, unnamed.
const UNNAMED: &str = "kernel samples are shown as one [kernel] row";

/// Why kallsyms named nothing: its addresses read 0 (or it lists none).
fn hidden(text: &str) -> String {
    if text.trim().is_empty() {
        return format!("{KALLSYMS} lists no symbols: {UNNAMED}");
    }
    let level = std::fs::read_to_string("/proc/sys/kernel/kptr_restrict");
    let level = level.as_deref().map(str::trim).unwrap_or("unknown");
    format!(
        "kernel addresses are hidden ({KALLSYMS} reads 0, kernel.kptr_restrict is {level}): \
         {UNNAMED}; {} to name kernel functions",
        allow(level)
    )
}

/// What shows kallsyms' addresses at kptr_restrict `level`: at 0 to anyone
/// where perf_event_paranoid is 1 or less, at 1 to root (CAP_SYSLOG), at 2
/// to nobody.
fn allow(level: &str) -> &'static str {
    match level {
        "0" => "report as root, or with kernel.perf_event_paranoid at 1 or less,",
        "2" => "report as root after `sysctl kernel.kptr_restrict=1`",
        _ => "report as root, or at kernel.kptr_restrict 0 and perf_event_paranoid 1 or less,",
    }
}

/// The kernel's text symbols, sorted by address.
#[derive(Debug)]
pub(crate) struct Kallsyms {
    symbols: Vec<(u64, String)>,
}

impl Kallsyms {
    /// The running kernel's symbols; or, where they are hidden (all
    /// addresses read as zero, as `kernel.kptr_restrict` has it for this
    /// user) or unreadable, why, and what kernel samples are then.
    pub(crate) fn load() -> Result<Kallsyms, String> {
        let text = std::fs::read_to_string(KALLSYMS)
            .map_err(|error| format!("{KALLSYMS} cannot be read ({error}): {UNNAMED}"))?;
        Kallsyms::parse(&text).ok_or_else(|| hidden(&text))
    }

    fn parse(text: &str) -> Option<Kallsyms> {
        let mut symbols: Vec<(u64, String)> = text
            .lines()
            .filter_map(|line| {
                let mut fields = line.split_whitespace();
                let address = u64::from_str_radix(fields.next()?, 16).ok()?;
                let kind = fields.next()?;
                let name = fields.next()?;
                (matches!(kind, "t" | "T" | "w" | "W") && address != 0)
                    .then(|| (address, name.to_owned()))
            })
            .collect();
        if symbols.is_empty() {
            return None;
        }
        symbols.sort_unstable();
        Some(Kallsyms { symbols })
    }

    /// The function containing `address`: the last symbol at or below it.
    pub(crate) fn name(&self, address: u64) -> Option<&str> {
        let after = self.symbols.partition_point(|(a, _)| *a <= address);
        self.symbols
            .get(after.checked_sub(1)?)
            .map(|(_, name)| name.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_fall_in_the_symbol_below_them() {
        let text = "ffffffff81000000 T _stext\nffffffff81000100 t do_thing\n\
                    ffffffff81000200 D some_data\nffffffff81000300 T other [module]\n";
        let symbols = Kallsyms::parse(text).unwrap();
        assert_eq!(symbols.name(0xffff_ffff_8100_0150), Some("do_thing"));
        assert_eq!(symbols.name(0xffff_ffff_8100_0250), Some("do_thing"));
        assert_eq!(symbols.name(0xffff_ffff_8100_0300), Some("other"));
        assert_eq!(symbols.name(0x1000), None);
        assert!(Kallsyms::parse("0000000000000000 T _stext\n").is_none());
    }

    #[test]
    fn hidden_addresses_are_said_to_be_hidden() {
        // As kernel.kptr_restrict shows kallsyms to a user it hides them from.
        let text = "0000000000000000 T _stext\n0000000000000000 t do_thing\n";
        assert!(Kallsyms::parse(text).is_none());
        let why = hidden(text);
        assert!(why.contains("/proc/kallsyms reads 0"), "{why}");
        assert!(why.contains("one [kernel] row"), "{why}");
        assert!(why.contains("kptr_restrict"), "{why}");
    }

    #[test]
    fn the_advice_fits_the_restriction() {
        assert!(allow("0").contains("perf_event_paranoid at 1 or less"));
        assert!(!allow("0").contains("kptr_restrict=0"));
        assert!(allow("1").contains("kptr_restrict 0"));
        assert!(allow("2").contains("kptr_restrict=1"));
    }
}
