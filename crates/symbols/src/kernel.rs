//! Kernel addresses named from /proc/kallsyms (readable with real addresses
//! by root, or with kernel.kptr_restrict=0).

/// The kernel's text symbols, sorted by address.
#[derive(Debug)]
pub(crate) struct Kallsyms {
    symbols: Vec<(u64, String)>,
}

impl Kallsyms {
    /// The running kernel's symbols; `None` when they are hidden (all
    /// addresses read as zero) or unreadable.
    pub fn load() -> Option<Kallsyms> {
        Kallsyms::parse(&std::fs::read_to_string("/proc/kallsyms").ok()?)
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
    pub fn name(&self, address: u64) -> Option<&str> {
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
}
