//! How big each CPU's ring buffer is: what the samples need between two
//! drains, within the memory the kernel lets this user lock for them
//! (`kernel.perf_event_mlock_kb` per CPU, then `ulimit -l`), and said when
//! that is less than the user asked for.

use crate::call_stacks::CallStacks;
use crate::privileges::Privileges;

/// Ring-buffer data bytes per CPU without stack copies: no losses at
/// 100 kHz on this class of machine, and within an unprivileged user's
/// default mlock budget.
pub const DEFAULT_RING_BYTES: usize = 512 << 10;
/// Ring-buffer data bytes per CPU with the stack copies of `--call-graph
/// dwarf`: about a second of 8 KiB samples at 4 kHz, so that a drain held
/// up by a busy machine loses nothing.
pub const DEFAULT_STACK_RING_BYTES: usize = 32 << 20;
/// With frame pointers and the top of the stack copied (some 600 bytes a
/// sample): over a second of samples at 20 kHz, for the same reason.
pub(crate) const DEFAULT_FP_RING_BYTES: usize = 16 << 20;
/// The most that default ring buffers take over all CPUs together: on a
/// machine with many CPUs each gets less.
const DEFAULT_TOTAL_BYTES: usize = 256 << 20;
/// The smallest ring buffer tried when the locked-memory budget is tight.
pub(crate) const MIN_RING_BYTES: usize = 16 << 10;

/// What the rings carry besides the samples' addresses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RingUse {
    pub stacks: Option<CallStacks>,
    /// Every context switch (`--off-cpu`): three records each, some
    /// 130 bytes, a hundred thousand a second on a busy machine; the rings
    /// of frame-pointer stacks hold over a second of them.
    pub switches: bool,
}

/// The data bytes per ring to ask the kernel for: `requested` (from
/// `--mmap-pages`) or the default for what the rings carry, over `rings` rings, within
/// the locked-memory budget of `privileges` (whose per-CPU part counts
/// `online` CPUs). A request the budget cannot hold is cut, with a notice.
pub(crate) fn plan(
    requested: Option<usize>,
    carried: RingUse,
    rings: usize,
    online: usize,
    privileges: &Privileges,
    page: usize,
    notices: &mut Vec<String>,
) -> usize {
    let rings = rings.max(1);
    let wanted = requested.unwrap_or_else(|| default_bytes(carried, rings));
    let Some(budget) = privileges.ring_budget_bytes(online) else {
        return wanted;
    };
    // Each ring also locks its header page.
    let per_ring = (budget / rings as u64).saturating_sub(page as u64);
    let fits = match usize::try_from(per_ring) {
        Ok(0) | Err(_) => MIN_RING_BYTES,
        Ok(bytes) => (1 << bytes.ilog2()).max(MIN_RING_BYTES),
    };
    if wanted <= fits {
        return wanted;
    }
    if requested.is_some() {
        notices.push(cut_notice(wanted, fits, Some(budget), rings));
    }
    fits
}

/// The default data bytes per ring for what the rings carry.
fn default_bytes(carried: RingUse, rings: usize) -> usize {
    let wanted = match carried.stacks {
        Some(CallStacks::Dwarf { .. }) => DEFAULT_STACK_RING_BYTES,
        Some(CallStacks::FramePointer { copy_bytes }) if copy_bytes > 0 => DEFAULT_FP_RING_BYTES,
        _ if carried.switches => DEFAULT_FP_RING_BYTES,
        _ => return DEFAULT_RING_BYTES,
    };
    let share = DEFAULT_TOTAL_BYTES / rings;
    let share = match share {
        0 => MIN_RING_BYTES,
        share => 1 << share.ilog2(),
    };
    wanted.min(share).max(DEFAULT_RING_BYTES)
}

/// The notice for rings of `used` bytes where `asked` were meant, the
/// budget being `budget` bytes (`None`: what the kernel allowed at the
/// time, less than planned).
pub(crate) fn cut_notice(asked: usize, used: usize, budget: Option<u64>, rings: usize) -> String {
    let why = match budget {
        Some(budget) => format!(
            "the locked-memory budget allows {} for {rings} CPU{}",
            size(budget as usize),
            if rings == 1 { "" } else { "s" }
        ),
        None => "the kernel refused more of the locked-memory budget (other ring buffers of this \
                 user may hold part of it)"
            .to_owned(),
    };
    format!(
        "ring buffers of {} per CPU instead of {}: {why}, so samples may be lost at high rates; \
         raise `ulimit -l` or kernel.perf_event_mlock_kb, or grant CAP_IPC_LOCK, for more",
        size(used),
        size(asked)
    )
}

/// `512 KiB`, `32 MiB`.
fn size(bytes: usize) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / (1 << 20) as f64),
        b => format!("{} KiB", b >> 10),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: usize = 4096;
    const DWARF: Option<CallStacks> = Some(CallStacks::Dwarf { stack_bytes: 8192 });

    /// An ordinary user at paranoid 2 with Debian's defaults: 516 KiB per
    /// CPU, then `ulimit -l` of 8 MiB.
    fn user() -> Privileges {
        Privileges {
            euid: 1000,
            paranoid: Some(2),
            mlock_kb: Some(516),
            memlock_bytes: Some(8 << 20),
            capabilities: Some(0),
        }
    }

    fn root() -> Privileges {
        Privileges {
            euid: 0,
            capabilities: Some(u64::MAX >> 23),
            ..user()
        }
    }

    #[test]
    fn defaults_follow_the_stacks_and_the_number_of_cpus() {
        let mut notices = Vec::new();
        let mut plan = |stacks, rings, who: &Privileges| {
            let carried = RingUse {
                stacks,
                switches: false,
            };
            plan(None, carried, rings, rings, who, PAGE, &mut notices)
        };
        assert_eq!(plan(None, 2, &root()), 512 << 10);
        assert_eq!(plan(DWARF, 2, &root()), 32 << 20);
        assert_eq!(plan(DWARF, 64, &root()), 4 << 20);
        let fp = Some(CallStacks::FramePointer { copy_bytes: 512 });
        assert_eq!(plan(fp, 2, &root()), 16 << 20);
        assert_eq!(plan(fp, 2, &user()), 4 << 20);
        let kernel_chain = Some(CallStacks::FramePointer { copy_bytes: 0 });
        assert_eq!(plan(kernel_chain, 2, &root()), 512 << 10);
        // Within the budget, quietly: 9 MiB over 2 CPUs holds 4 MiB each.
        assert_eq!(plan(DWARF, 2, &user()), 4 << 20);
        assert_eq!(plan(DWARF, 16, &user()), 1 << 20);
        assert_eq!(plan(None, 2, &user()), 512 << 10);
        assert_eq!(notices, Vec::<String>::new());
        // Every switch, with or without stacks.
        let switches = |stacks| RingUse {
            stacks,
            switches: true,
        };
        let mut notices = Vec::new();
        for stacks in [None, fp, kernel_chain] {
            let planned = super::plan(None, switches(stacks), 2, 2, &root(), PAGE, &mut notices);
            assert_eq!(planned, 16 << 20);
        }
        assert_eq!(
            super::plan(None, switches(DWARF), 2, 2, &root(), PAGE, &mut notices),
            32 << 20
        );
    }

    #[test]
    fn a_request_beyond_the_budget_is_cut_and_said() {
        let mut notices = Vec::new();
        let asked = Some(32 << 20);
        assert_eq!(
            plan(asked, RingUse::default(), 2, 2, &root(), PAGE, &mut notices),
            32 << 20
        );
        assert!(notices.is_empty());
        assert_eq!(
            plan(asked, RingUse::default(), 2, 2, &user(), PAGE, &mut notices),
            4 << 20
        );
        assert_eq!(
            notices,
            [
                "ring buffers of 4 MiB per CPU instead of 32 MiB: the locked-memory budget allows \
              9.0 MiB for 2 CPUs, so samples may be lost at high rates; raise `ulimit -l` or \
              kernel.perf_event_mlock_kb, or grant CAP_IPC_LOCK, for more"
            ]
        );
        // No budget to speak of: the smallest ring, left for the kernel
        // to refuse.
        let tight = Privileges {
            mlock_kb: Some(0),
            memlock_bytes: Some(0),
            ..user()
        };
        assert_eq!(
            plan(asked, RingUse::default(), 2, 2, &tight, PAGE, &mut notices),
            MIN_RING_BYTES
        );
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(size(512 << 10), "512 KiB");
        assert_eq!(size(4 << 20), "4 MiB");
        assert_eq!(size((9 << 20) + (1 << 19)), "9.5 MiB");
        let later = cut_notice(4 << 20, 1 << 20, None, 2);
        assert!(later.starts_with("ring buffers of 1 MiB per CPU instead of 4 MiB: the kernel"));
    }
}
