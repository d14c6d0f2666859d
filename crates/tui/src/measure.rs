//! What the refresh costs, for `cargo bench --bench top`: a screen over
//! counts of many distinct functions, named by a symbolizer that makes up
//! a name per function, each refresh timed from taking an interval's
//! counts to the frame drawn on ratatui's test backend.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;

use profiler_model::{
    AddressSymbol, AsmSyntax, Detail, Disassembler, FileOffset, FunctionListing, FunctionSymbol,
    Location, Module, ModuleSymbols, RelativeAddress, SourceReader, SourceText, Svma, Symbolizer,
};

use crate::code::Code;
use crate::draw::Header;
use crate::intake::{HitKey, Intake, Weight};
use crate::screen::Screen;

/// Names the function at every 0x100 bytes `f_N`.
pub(crate) struct MadeUp;

impl Symbolizer for MadeUp {
    fn symbolize(&self, _: &Module, offsets: &[FileOffset], _: Detail) -> ModuleSymbols {
        let addresses = (offsets.iter())
            .map(|offset| AddressSymbol {
                svma: Some(Svma(offset.0)),
                relative: Some(RelativeAddress(offset.0)),
                function: Some(FunctionSymbol {
                    name: Some(Arc::from(format!("f_{}", offset.0 >> 8))),
                    linkage_name: None,
                    start: RelativeAddress(offset.0 & !0xff),
                }),
                frames: Vec::new(),
            })
            .collect();
        ModuleSymbols {
            problem: None,
            addresses,
            notes: Vec::new(),
        }
    }
}

impl Disassembler for MadeUp {
    fn listing(&self, _: &Module, _: Svma, _: AsmSyntax) -> Result<FunctionListing, String> {
        Err("no code".into())
    }
}

impl SourceReader for MadeUp {
    fn lines(&self, _: &str, _: &BTreeSet<u32>) -> Result<Arc<SourceText>, String> {
        Err("no sources".into())
    }
}

/// Times `refreshes` refreshes of a 160x50 screen whose counts hold
/// `functions` distinct functions, each interval bringing `samples`
/// samples spread over all of them (in 4 processes). The first
/// refresh names every function; the times are those of the others.
#[doc(hidden)]
pub fn refresh_times(functions: u64, samples: u64, refreshes: usize) -> Vec<Duration> {
    let code = Code {
        symbolizer: &MadeUp,
        disassembler: &MadeUp,
        sources: &MadeUp,
        syntax: AsmSyntax::Att,
    };
    let header = Header {
        title: "profiler top".into(),
        target: "all CPUs".into(),
        events: vec!["cpu-clock 4000 Hz".into()],
        time: "1.0 s".into(),
        status: None,
    };
    let mut screen = Screen::new(header, code, true);
    let mut intake = Intake::new(1);
    intake.modules.push(Module {
        path: "/usr/lib/libbig.so".into(),
        build_id: None,
        pid: None,
    });
    intake.commands.push(Arc::from("app"));
    let Ok(mut terminal) = Terminal::new(TestBackend::new(160, 50)) else {
        return Vec::new();
    };
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut times = Vec::new();
    for round in 0..=refreshes {
        // Every function at least once in the first interval, then at
        // random (xorshift), the low ones more often.
        let count = if round == 0 {
            functions.max(samples)
        } else {
            samples
        };
        for n in 0..count {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let function = match round {
                0 if n < functions => n,
                _ => (state % functions) * (state >> 60) / 16,
            };
            let key = HitKey {
                event: 0,
                pid: 1000 + (state >> 62) as u32,
                command: 0,
                location: Location::Module {
                    module: 0,
                    offset: FileOffset(0x10_0000 + function * 0x100 + (state & 0x3f)),
                },
            };
            let weight = Weight {
                samples: 1,
                period: 250_000,
            };
            intake.hit(key, weight, &[]);
        }
        let started = Instant::now();
        let delivery = screen.take(&mut intake);
        screen.add(delivery);
        if terminal.draw(|frame| screen.draw(frame)).is_err() {
            return Vec::new();
        }
        if round > 0 {
            times.push(started.elapsed());
        }
    }
    times
}
