//! Screens drawn on ratatui's test backend, without a terminal, from counts
//! the tests make, compared with expected screens under
//! `tests/expected/tui/` (`PROFILER_BLESS=1` rewrites them, never under
//! CI): the table at 80x24 and 160x50, a resize, narrow terminals, the
//! panel of callers, the annotated listing, the help, the filter.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

use crossterm::event::{KeyCode, KeyEvent};
use profiler_model::{
    AddressSymbol, AsmSyntax, Detail, Disassembler, FileOffset, Flow, Frame, FunctionListing,
    FunctionSymbol, Instruction, Location, Module, ModuleSymbols, RelativeAddress, SourceReader,
    SourceText, Svma, Symbolizer,
};

use crate::app::Request;
use crate::code::Code;
use crate::draw::Header;
use crate::intake::{HitKey, Intake, Weight};
use crate::screen::Screen;

/// Functions of the test module: each 0x100 bytes from its start.
const FUNCTIONS: &[(u64, &str)] = &[
    (0x1000, "burn_60"),
    (0x1100, "burn_30"),
    (0x1200, "burn_10"),
    (0x1300, "main"),
    (0x1400, "evil\u{1b}[2Jname"),
];

struct Fixture;

impl Symbolizer for Fixture {
    fn symbolize(&self, _: &Module, offsets: &[FileOffset], _: Detail) -> ModuleSymbols {
        let addresses = offsets
            .iter()
            .map(|offset| {
                let start = offset.0 & !0xff;
                let name = FUNCTIONS.iter().find(|(s, _)| *s == start).map(|(_, n)| *n);
                AddressSymbol {
                    svma: Some(Svma(offset.0)),
                    relative: Some(RelativeAddress(offset.0)),
                    function: name.map(|name| FunctionSymbol {
                        name: Some(Arc::from(name)),
                        linkage_name: None,
                        start: RelativeAddress(start),
                    }),
                    frames: Vec::new(),
                }
            })
            .collect();
        ModuleSymbols {
            problem: None,
            addresses,
            notes: Vec::new(),
        }
    }
}

impl Disassembler for Fixture {
    fn listing(&self, _: &Module, address: Svma, _: AsmSyntax) -> Result<FunctionListing, String> {
        let start = address.0 & !0xff;
        let frame = |line| Frame {
            function: Some(Arc::from("burn_60")),
            linkage_name: None,
            file: Some(Arc::from("/src/split.c")),
            line: Some(line),
        };
        let instruction = |at: u64, text: &str, line: u32| Instruction {
            svma: Svma(at),
            offset: FileOffset(at),
            len: 4,
            text: text.to_owned(),
            flow: if text.starts_with("jne") {
                Flow::Jump(Svma(start + 4))
            } else {
                Flow::Next
            },
            callee: None,
            frames: vec![frame(line)],
        };
        Ok(FunctionListing {
            name: FUNCTIONS
                .iter()
                .find(|(s, _)| *s == start)
                .map(|(_, n)| (*n).to_owned()),
            start: Svma(start),
            end: Svma(start + 16),
            has_lines: true,
            instructions: vec![
                instruction(start, "mov %rsi,%rax", 3),
                instruction(start + 4, "imul %rsi,%rax", 4),
                instruction(start + 8, "add $0x1,%rdx", 4),
                instruction(start + 12, "jne 0x1004", 5),
            ],
        })
    }
}

impl SourceReader for Fixture {
    fn lines(&self, path: &str, wanted: &BTreeSet<u32>) -> Result<Arc<SourceText>, String> {
        let lines = [
            "#include \"burn.h\"",
            "",
            "uint64_t burn_60(uint64_t n) {",
            "\tfor (;;) x *= K;",
            "}",
        ];
        Ok(Arc::new(SourceText {
            path: path.to_owned(),
            lines: (1u32..)
                .zip(lines)
                .filter(|(number, _)| wanted.contains(number))
                .map(|(number, line)| (number, line.to_owned()))
                .collect(),
            cut: None,
        }))
    }
}

fn code() -> Code<'static> {
    Code {
        symbolizer: &Fixture,
        disassembler: &Fixture,
        sources: &Fixture,
        syntax: AsmSyntax::Att,
    }
}

fn header() -> Header {
    Header {
        title: "profiler top".into(),
        target: "command ./split".into(),
        events: vec!["cpu-clock 4000 Hz".into()],
        time: "3.0 s".into(),
        status: None,
    }
}

/// A screen that has counted `split`'s 60/30/10 (and a little more).
fn screen(color: bool) -> Screen<'static> {
    let mut screen = Screen::new(header(), code(), color);
    screen.app.stacks = true;
    let mut intake = Intake::new(1);
    intake.modules.push(Module {
        path: "/work/split".into(),
        build_id: None,
        pid: None,
    });
    intake.commands.push(Arc::from("split"));
    let at = |offset| Location::Module {
        module: 0,
        offset: FileOffset(offset),
    };
    let mut hit = |offset, samples, stack: &[Location]| {
        let key = HitKey {
            event: 0,
            pid: 4242,
            command: 0,
            location: at(offset),
        };
        for _ in 0..samples {
            let weight = Weight {
                samples: 1,
                period: 250_000,
            };
            intake.hit(key, weight, stack);
        }
    };
    hit(0x1004, 1500, &[at(0x1310)]);
    hit(0x1008, 300, &[at(0x1310)]);
    hit(0x1104, 900, &[at(0x1320)]);
    hit(0x1204, 290, &[at(0x1330)]);
    hit(0x1310, 7, &[]);
    hit(0x1404, 3, &[at(0x1340)]);
    let delivery = screen.take(&mut intake);
    screen.add(delivery);
    screen
}

fn draw(screen: &mut Screen<'_>, terminal: &mut Terminal<TestBackend>) -> Buffer {
    terminal.draw(|frame| screen.draw(frame)).unwrap();
    terminal.backend().buffer().clone()
}

fn drawn(screen: &mut Screen<'_>, width: u16, height: u16) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    draw(screen, &mut terminal)
}

/// The screen's text, each line without its trailing spaces.
fn text(buffer: &Buffer) -> String {
    let area = buffer.area;
    let mut out = String::new();
    for y in 0..area.height {
        let line: String = (0..area.width).map(|x| buffer[(x, y)].symbol()).collect();
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn expected_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/expected/tui")
        .join(name)
}

/// Compares the screen with `tests/expected/tui/{name}`, or writes it there
/// when blessing.
fn assert_screen(name: &str, buffer: &Buffer) {
    let actual = text(buffer);
    let path = expected_path(name);
    let bless = std::env::var_os("PROFILER_BLESS").is_some_and(|v| v == "1");
    assert!(
        !(bless && profiler_testing::ci()),
        "PROFILER_BLESS=1 under CI=true"
    );
    if bless {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; PROFILER_BLESS=1 writes it", path.display()));
    assert_eq!(expected, actual, "{name} differs from the screen drawn");
}

fn press(screen: &mut Screen<'_>, code: KeyCode) {
    let request = screen.app.key(KeyEvent::from(code), &screen.table, 10);
    match request {
        Request::Annotate(function) => screen.annotate(function),
        Request::Zero => screen.tally.zero(),
        Request::Nothing | Request::Quit | Request::Window(_) => {}
    }
    screen.rebuild();
}

fn row_of(buffer: &Buffer, needle: &str) -> u16 {
    let text = text(buffer);
    let line = text.lines().position(|l| l.contains(needle));
    line.unwrap_or_else(|| panic!("no line holds {needle}:\n{text}")) as u16
}

#[test]
fn the_table_at_80x24_and_160x50() {
    let mut screen = screen(false);
    let small = drawn(&mut screen, 80, 24);
    assert_screen("top-80x24.txt", &small);
    assert_screen("top-160x50.txt", &drawn(&mut screen, 160, 50));
    // The shares are the counts' own: 60/30/10 of 3,000 samples.
    let text = text(&small);
    for (share, name) in [
        ("60.00%", "burn_60"),
        ("30.00%", "burn_30"),
        ("9.67%", "burn_10"),
    ] {
        let line = text.lines().find(|l| l.ends_with(name)).unwrap();
        assert!(line.contains(share), "{line}");
    }
    // The selected row is in reverse video, the others not.
    let first = row_of(&small, "burn_60");
    assert!(small[(0, first)].modifier.contains(Modifier::REVERSED));
    assert!(!small[(0, first + 1)].modifier.contains(Modifier::REVERSED));
}

#[test]
fn control_characters_in_names_are_never_drawn_raw() {
    let mut screen = screen(false);
    let buffer = drawn(&mut screen, 80, 24);
    let text = text(&buffer);
    assert!(text.contains("evil\\x1b[2Jname"), "{text}");
    assert!(!text.chars().any(|c| c.is_control() && c != '\n'));
}

#[test]
fn a_resize_redraws_to_the_new_size() {
    let mut screen = screen(false);
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    draw(&mut screen, &mut terminal);
    terminal.backend_mut().resize(120, 30);
    let resized = draw(&mut screen, &mut terminal);
    assert_eq!(resized.area.width, 120);
    assert_eq!(text(&resized), text(&drawn(&mut screen, 120, 30)));
    assert_screen("top-resized-120x30.txt", &resized);
}

#[test]
fn narrow_terminals_keep_the_share_and_the_name() {
    let mut screen = screen(false);
    assert_screen("top-narrow-40x12.txt", &drawn(&mut screen, 40, 12));
    let tiny = drawn(&mut screen, 20, 4);
    assert_eq!(tiny.area.height, 4, "drawing in 20x4 does not fail");
}

#[test]
fn sort_keys_group_the_rows() {
    let mut screen = screen(false);
    press(&mut screen, KeyCode::Char('s'));
    assert_eq!(screen.table.rows.len(), 1, "one module");
    assert_screen("top-by-module-80x24.txt", &drawn(&mut screen, 80, 24));
    press(&mut screen, KeyCode::Char('s'));
    press(&mut screen, KeyCode::Char('s'));
    assert_eq!(screen.table.rows[0].pid, Some(4242));
    assert!((screen.table.rows[0].percent - 100.0).abs() < 1e-9);
}

#[test]
fn the_filter_keeps_the_rows_whose_name_holds_it() {
    let mut screen = screen(false);
    press(&mut screen, KeyCode::Char('/'));
    for c in "BURN_".chars() {
        press(&mut screen, KeyCode::Char(c));
    }
    assert_eq!(screen.table.rows.len(), 3);
    assert_screen("top-filter-80x24.txt", &drawn(&mut screen, 80, 24));
}

#[test]
fn the_panel_lists_callers_and_callees() {
    let mut screen = screen(false);
    press(&mut screen, KeyCode::Char('g'));
    assert_screen("top-callers-160x50.txt", &drawn(&mut screen, 160, 50));
    let text = text(&drawn(&mut screen, 80, 24));
    assert!(text.contains("<-     1,800  main"), "{text}");
}

#[test]
fn enter_opens_the_listing_at_the_hot_line() {
    let mut screen = screen(false);
    press(&mut screen, KeyCode::Enter);
    let buffer = drawn(&mut screen, 80, 24);
    assert_screen("annotate-80x24.txt", &buffer);
    assert_screen("annotate-160x50.txt", &drawn(&mut screen, 160, 50));
    // burn_60's samples lie on line 4: the hottest, marked.
    let hot = row_of(&buffer, "*    4");
    assert!(
        text(&buffer)
            .lines()
            .nth(hot as usize)
            .unwrap()
            .contains("100.00%")
    );
    assert!(buffer[(0, hot)].modifier.contains(Modifier::REVERSED));
    press(&mut screen, KeyCode::Esc);
    assert!(screen.app.annotate.is_none());
}

#[test]
fn help_lists_the_keys() {
    let mut screen = screen(false);
    press(&mut screen, KeyCode::Char('?'));
    assert_screen("help-80x24.txt", &drawn(&mut screen, 80, 24));
}

#[test]
fn colours_mark_hot_rows_unless_no_color() {
    let mut plain = screen(false);
    let buffer = drawn(&mut plain, 80, 24);
    let all = buffer.content.iter();
    assert!(
        all.clone()
            .all(|c| c.fg == Color::Reset && c.bg == Color::Reset)
    );
    let mut coloured = screen(true);
    let buffer = drawn(&mut coloured, 80, 24);
    let hot = row_of(&buffer, "burn_30");
    assert_eq!(buffer[(2, hot)].fg, Color::Red);
}

#[test]
fn decay_and_zero_change_the_counts() {
    let mut screen = screen(false);
    press(&mut screen, KeyCode::Char('d'));
    screen.add(Default::default());
    assert_eq!(screen.table.total.samples, 3000 - 3000 / 8);
    press(&mut screen, KeyCode::Char('z'));
    assert_eq!(screen.table.total.samples, 0);
    assert!(text(&drawn(&mut screen, 80, 24)).contains("no samples yet"));
}

#[test]
fn the_recording_browser_at_80x24() {
    let mut screen = screen(false);
    screen.app.replay = true;
    screen.header.title = "profiler report".into();
    screen.header.target = "split.data".into();
    screen.header.time = "0.0-1.0 s of 3.0 s".into();
    press(&mut screen, KeyCode::Char('c'));
    assert_screen("report-80x24.txt", &drawn(&mut screen, 80, 24));
    press(&mut screen, KeyCode::Char('z'));
    assert_eq!(
        screen.table.total.samples, 3000,
        "a recording's counts stay"
    );
}

#[test]
fn counts_stay_under_their_ceilings_however_many_functions() {
    use crate::measure::MadeUp;
    use crate::names::MAX_FUNCTIONS;
    use crate::tally::{MAX_PLACES, MAX_ROWS};
    let code = Code {
        symbolizer: &MadeUp,
        disassembler: &MadeUp,
        sources: &MadeUp,
        syntax: AsmSyntax::Att,
    };
    let mut screen = Screen::new(header(), code, false);
    // Every refresh names its places (no module waits its turn here).
    screen.name_all = true;
    let mut intake = Intake::new(1);
    intake.modules.push(Module {
        path: "/usr/lib/libbig.so".into(),
        build_id: None,
        pid: None,
    });
    intake.commands.push(Arc::from("app"));
    let mut next = 0u64;
    for _ in 0..4 {
        for _ in 0..30_000 {
            let key = HitKey {
                event: 0,
                pid: 1,
                command: 0,
                location: Location::Module {
                    module: 0,
                    offset: FileOffset(next * 0x100),
                },
            };
            next += 1;
            intake.hit(
                key,
                Weight {
                    samples: 1,
                    period: 1,
                },
                &[],
            );
        }
        let delivery = screen.take(&mut intake);
        screen.add(delivery);
        assert!(
            screen.tally.rows.len() <= MAX_ROWS,
            "{}",
            screen.tally.rows.len()
        );
        assert!(screen.tally.places.len() <= MAX_PLACES);
        assert!(screen.names.functions.len() <= MAX_FUNCTIONS.max(MAX_ROWS + 30_000));
    }
    // The rows left name their own functions still.
    for (row, _) in screen.tally.rows.iter().take(100) {
        let name = &screen.names.functions[row.function as usize].name;
        assert!(name.starts_with("f_"), "{name}");
    }
    // What was let go still counts in the totals, so shares stay shares
    // of everything sampled.
    assert_eq!(screen.table.total.samples, 120_000);
    assert!(screen.tally.rows.len() < 120_000, "the coldest were let go");
}

/// A symbolizer that takes 10 ms a module.
struct Slow;

impl Symbolizer for Slow {
    fn symbolize(&self, module: &Module, offsets: &[FileOffset], detail: Detail) -> ModuleSymbols {
        std::thread::sleep(std::time::Duration::from_millis(10));
        Fixture.symbolize(module, offsets, detail)
    }
}

#[test]
fn a_module_slow_to_name_waits_its_turn_and_loses_nothing() {
    let code = Code {
        symbolizer: &Slow,
        ..code()
    };
    let mut screen = Screen::new(header(), code, false);
    let mut intake = Intake::new(1);
    intake.modules.push(Module {
        path: "/work/split".into(),
        build_id: None,
        pid: None,
    });
    intake.commands.push(Arc::from("split"));
    let hit = |intake: &mut Intake, offset| {
        let location = Location::Module {
            module: 0,
            offset: FileOffset(offset),
        };
        let key = HitKey {
            event: 0,
            pid: 1,
            command: 0,
            location,
        };
        intake.hit(
            key,
            Weight {
                samples: 1,
                period: 1,
            },
            &[],
        );
    };
    hit(&mut intake, 0x1004);
    let delivery = screen.take(&mut intake);
    screen.add(delivery);
    assert_eq!(screen.table.total.samples, 1);
    // At once again: the module was named 10 ms ago, so its new place
    // waits (half a second), and is not counted yet.
    hit(&mut intake, 0x1104);
    let delivery = screen.take(&mut intake);
    screen.add(delivery);
    assert_eq!(screen.table.total.samples, 1);
    screen.name_all = true;
    screen.add(Default::default());
    assert_eq!(screen.table.total.samples, 2, "counted once named");
    assert!(screen.table.rows.iter().any(|r| &*r.name == "burn_30"));
}

#[test]
fn a_table_of_the_hottest_rows_is_the_whole_tables_head() {
    let mut screen = screen(false);
    for _ in 0..4 {
        screen.rows = usize::MAX;
        screen.rebuild();
        let whole = screen.table.clone();
        assert!(!whole.rows.is_empty());
        if screen.app.key == crate::table::SortKey::Symbol {
            assert!(whole.rows.len() > 2, "{:?}", whole.rows);
        }
        for limit in [1, 2] {
            screen.rows = limit;
            screen.rebuild();
            let head = &whole.rows[..limit.min(whole.rows.len())];
            assert_eq!(screen.table.rows, head, "{:?}", screen.app.key);
            assert_eq!(screen.table.total, whole.total);
        }
        screen.app.key = screen.app.key.next();
    }
}
