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

/// The kernel's text symbols, sorted by address (and name).
#[derive(Debug)]
pub(crate) struct Kallsyms {
    /// The text of /proc/kallsyms, which the names lie in.
    text: String,
    /// Each symbol's address, and where its name lies in `text`: one
    /// allocation for the 100k names of a kernel with its modules, not one
    /// each.
    symbols: Vec<(u64, u32, u32)>,
}

impl Kallsyms {
    /// The running kernel's symbols; or, where they are hidden (all
    /// addresses read as zero, as `kernel.kptr_restrict` has it for this
    /// user) or unreadable, why, and what kernel samples are then.
    pub(crate) fn load() -> Result<Kallsyms, String> {
        let text = std::fs::read_to_string(KALLSYMS)
            .map_err(|error| format!("{KALLSYMS} cannot be read ({error}): {UNNAMED}"))?;
        Kallsyms::parse(text).map_err(|text| hidden(&text))
    }

    /// The text symbols of `text`; `text` itself back where it has none.
    fn parse(text: String) -> Result<Kallsyms, String> {
        let base = text.as_ptr() as usize;
        let Ok(_) = u32::try_from(text.len()) else {
            return Err(text);
        };
        let mut symbols: Vec<(u64, u32, u32)> = text
            .lines()
            .filter_map(|line| {
                let mut fields = line.split_ascii_whitespace();
                let address = u64::from_str_radix(fields.next()?, 16).ok()?;
                let kind = fields.next()?;
                let name = fields.next()?;
                // Within `text`, whose length fits in 32 bits.
                let at = (name.as_ptr() as usize - base) as u32;
                (matches!(kind, "t" | "T" | "w" | "W") && address != 0).then_some((
                    address,
                    at,
                    name.len() as u32,
                ))
            })
            .collect();
        if symbols.is_empty() {
            return Err(text);
        }
        // Mostly in order already: a stable sort takes its runs as they are.
        let name = |&(_, at, len): &(u64, u32, u32)| &text[at as usize..(at + len) as usize];
        symbols.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| name(a).cmp(name(b))));
        Ok(Kallsyms { text, symbols })
    }

    /// The function containing `address`: the last symbol at or below it.
    pub(crate) fn name(&self, address: u64) -> Option<&str> {
        let after = self.symbols.partition_point(|(a, _, _)| *a <= address);
        let &(_, at, len) = self.symbols.get(after.checked_sub(1)?)?;
        self.text.get(at as usize..(at + len) as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_fall_in_the_symbol_below_them() {
        let text = "ffffffff81000000 T _stext\nffffffff81000100 t do_thing\n\
                    ffffffff81000200 D some_data\nffffffff81000300 T other [module]\n";
        let symbols = Kallsyms::parse(text.to_owned()).unwrap();
        assert_eq!(symbols.name(0xffff_ffff_8100_0150), Some("do_thing"));
        assert_eq!(symbols.name(0xffff_ffff_8100_0250), Some("do_thing"));
        assert_eq!(symbols.name(0xffff_ffff_8100_0300), Some("other"));
        assert_eq!(symbols.name(0x1000), None);
        assert!(Kallsyms::parse("0000000000000000 T _stext\n".to_owned()).is_err());
        // Of symbols at one address, the last by name names what follows.
        let text = "ffffffff81000100 t zed\nffffffff81000000 T _stext\nffffffff81000100 t alpha\n";
        let symbols = Kallsyms::parse(text.to_owned()).unwrap();
        assert_eq!(symbols.name(0xffff_ffff_8100_0180), Some("zed"));
        assert_eq!(symbols.name(0xffff_ffff_8100_0080), Some("_stext"));
    }

    #[test]
    fn hidden_addresses_are_said_to_be_hidden() {
        // As kernel.kptr_restrict shows kallsyms to a user it hides them from.
        let text = "0000000000000000 T _stext\n0000000000000000 t do_thing\n";
        assert!(Kallsyms::parse(text.to_owned()).is_err());
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
