//! Flame graphs: folded stacks drawn by inferno as an interactive SVG
//! (hover for counts, click to zoom, search), coloured by the kind of module
//! each frame belongs to; and differential flame graphs of two profiles.

use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::io::{BufWriter, Write};

use inferno::flamegraph::color::{BackgroundColor, Color, PaletteMap};
use inferno::flamegraph::{Direction, Options, from_lines};

use crate::ReportError;
use crate::views::folded::{FoldedStacks, FrameKind, StackWeight};

/// How to draw a flame graph.
#[derive(Clone, Debug, PartialEq)]
pub struct FlameOptions {
    pub title: String,
    pub subtitle: Option<String>,
    /// Stacks leaf first (inferno's `--reverse`): the bottom row holds the
    /// functions that had samples themselves, each with its callers above.
    pub reverse: bool,
    /// An icicle graph: the first frame of each stack at the top.
    pub inverted: bool,
    /// Frames narrower than this are left out, in percent of the graph's
    /// width: inferno's `min_width`, whose default is 0.01. The graph is
    /// 1200 pixels wide before the browser stretches it, so 0.1 is about
    /// one pixel.
    pub min_width: f64,
    /// What the weights count, for the tooltips: "samples", "cycles", ...
    pub count_name: String,
}

impl Default for FlameOptions {
    fn default() -> Self {
        FlameOptions {
            title: "Flame Graph".into(),
            subtitle: None,
            reverse: false,
            inverted: false,
            min_width: 0.01,
            count_name: "samples".into(),
        }
    }
}

/// Draws `stacks` as an SVG flame graph. Frames of the program are in warm
/// reds, of shared libraries in aqua, of the kernel in orange,
/// and others (JIT code, the vdso, unknown) in green; functions inlined into
/// their caller in violet, named `NAME (inlined)` in their tooltips. Each
/// name keeps one shade, so that the same function looks the same everywhere.
/// Off-CPU stacks are drawn cool, as off-CPU flame graphs are: blues on a
/// blue background, the kinds of module told apart by hue.
pub fn render_flamegraph(
    stacks: &FoldedStacks,
    options: &FlameOptions,
    out: impl Write,
) -> Result<(), ReportError> {
    let mut out = BufWriter::new(out);
    if stacks.total() == 0 {
        return write_empty(options, &mut out);
    }
    let lines = flame_lines(stacks);
    let divisor = fitting_divisor(lines.iter().map(|(_, weight)| *weight));
    let lines: Vec<String> = (lines.into_iter())
        .map(|(stack, weight)| format!("{stack} {}", weight / divisor))
        .collect();
    let cool = stacks.weight == StackWeight::OffCpu;
    let mut palette = module_palette(stacks, cool);
    let mut inferno_options = inferno_options(options);
    inferno_options.palette_map = Some(&mut palette);
    if cool {
        inferno_options.bgcolors = Some(BackgroundColor::Blue);
    }
    from_lines(&mut inferno_options, lines.iter().map(String::as_str), out)?;
    Ok(())
}

/// Draws the stacks of `new` as a differential flame graph against `base`:
/// a frame is red where `new` spends more of its time there than `base`
/// did, blue where less, the deeper the hue the larger the change. As in
/// Brendan Gregg's difffolded and flamegraph, the colour measures a frame's
/// own (self) weight, so frames with none of their own stay white.
///
/// `base` is scaled to `new`'s total first (difffolded's `-n`), so that
/// profiles of different lengths compare by proportion.
pub fn render_diff_flamegraph(
    base: &FoldedStacks,
    new: &FoldedStacks,
    options: &FlameOptions,
    out: impl Write,
) -> Result<(), ReportError> {
    let mut out = BufWriter::new(out);
    if new.total() == 0 {
        return write_empty(options, &mut out);
    }
    let lines = diff_lines(base, new);
    let base_divisor = fitting_divisor(lines.values().map(|(base, _)| *base));
    let new_divisor = fitting_divisor(lines.values().map(|(_, new)| *new));
    let lines: Vec<String> = (lines.into_iter())
        .map(|(stack, (base, new))| {
            format!("{stack} {} {}", base / base_divisor, new / new_divisor)
        })
        .collect();
    let mut inferno_options = inferno_options(options);
    from_lines(&mut inferno_options, lines.iter().map(String::as_str), out)?;
    Ok(())
}

/// What to divide `weights` by for their sum to fit in 64 bits, as
/// inferno adds them up: 1 unless a recording states counts near 2^64,
/// which are then scaled down together, keeping their proportions.
fn fitting_divisor(weights: impl Iterator<Item = u64>) -> u64 {
    let sum: u128 = weights.map(u128::from).sum();
    u64::try_from(sum.div_ceil(u128::from(u64::MAX))).map_or(u64::MAX, |d| d.max(1))
}

fn inferno_options(options: &FlameOptions) -> Options<'static> {
    let mut inferno_options = Options::default();
    inferno_options.title = options.title.clone();
    inferno_options.subtitle = options.subtitle.clone();
    inferno_options.reverse_stack_order = options.reverse;
    inferno_options.direction = if options.inverted {
        Direction::Inverted
    } else {
        Direction::Straight
    };
    inferno_options.min_width = options.min_width;
    inferno_options.count_name = options.count_name.clone();
    // Frames missing from the palette map (none should) get a colour of
    // their name, not of inferno's random generator, whose state carries
    // over from one graph to the next.
    inferno_options.deterministic = true;
    inferno_options
}

/// The folded lines of `stacks`, each frame named as inferno will read it.
fn flame_lines(stacks: &FoldedStacks) -> Vec<(String, u64)> {
    stacks
        .lines()
        .into_iter()
        .map(|(line, weight)| {
            if !line.contains(' ') {
                return (line, weight);
            }
            let line = line
                .split(';')
                .map(protect_number)
                .collect::<Vec<_>>()
                .join(";");
            (line, weight)
        })
        .collect()
}

/// Each stack of either profile with its weight in `base`, scaled to
/// `new`'s total and rounded (difffolded truncates, which would tint every
/// frame blue), and in `new`; sorted by stack.
fn diff_lines(base: &FoldedStacks, new: &FoldedStacks) -> BTreeMap<String, (u64, u64)> {
    let (base_total, new_total) = (base.total(), new.total());
    let scale = |weight: u64| {
        if base_total == 0 {
            return weight;
        }
        let scaled = (u128::from(weight) * u128::from(new_total) + u128::from(base_total) / 2)
            / u128::from(base_total);
        u64::try_from(scaled).unwrap_or(u64::MAX)
    };
    let mut merged: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for (line, weight) in flame_lines(base) {
        merged.entry(line).or_default().0 = scale(weight);
    }
    for (line, weight) in flame_lines(new) {
        merged.entry(line).or_default().1 = weight;
    }
    merged
}

fn protect_number(name: &str) -> String {
    match name.rsplit_once(' ') {
        Some((head, tail))
            if !tail.is_empty() && tail.chars().all(|c| c.is_ascii_digit() || c == '.') =>
        {
            format!("{head}\u{a0}{tail}")
        }
        _ => name.to_string(),
    }
}

/// A colour for every frame name, by the kind of its module (or its being
/// inlined). A name found in modules of several kinds takes the first kind
/// in `FrameKind`'s order. Names are the frames' labels as inferno reads
/// them from the folded lines (see [`flame_lines`]).
fn module_palette(stacks: &FoldedStacks, cool: bool) -> PaletteMap {
    let mut kinds: FxHashMap<String, (FrameKind, bool)> = FxHashMap::default();
    for frame in &stacks.frames {
        kinds
            .entry(protect_number(&frame.label()))
            .and_modify(|(kind, _)| *kind = (*kind).min(frame.kind))
            .or_insert((frame.kind, frame.inlined));
    }
    let mut palette = PaletteMap::default();
    // inferno names the root frame, "all", with an empty string.
    let color = match cool {
        true => cool_color,
        false => kind_color,
    };
    palette.insert("", color(FrameKind::Program, false, "all"));
    for (name, (kind, inlined)) in kinds {
        palette.insert(&name, color(kind, inlined, &name));
    }
    palette
}

/// The cool colour of `name` within the hues of `kind`: blues for the
/// program, cyans for libraries, slate violets for the kernel, grey blues
/// for the rest, lavender for inlined functions.
fn cool_color(kind: FrameKind, inlined: bool, name: &str) -> Color {
    let hash = name_hash(name);
    let shade = |byte: u32| f32::from((hash >> (8 * byte)) as u8) / 255.0;
    let tint = |base: u8, range: f32, shade: f32| base + (range * shade) as u8;
    let (v1, v2) = (shade(0), shade(1));
    let (r, g, b) = match kind {
        _ if inlined => (
            tint(160, 40.0, v1),
            tint(150, 40.0, v1),
            tint(225, 30.0, v2),
        ),
        FrameKind::Program => (tint(40, 60.0, v1), tint(90, 70.0, v1), tint(190, 60.0, v2)),
        FrameKind::Library => (tint(30, 50.0, v1), tint(160, 60.0, v1), tint(190, 60.0, v2)),
        FrameKind::Kernel => (
            tint(110, 50.0, v1),
            tint(100, 50.0, v1),
            tint(190, 60.0, v2),
        ),
        FrameKind::Other => (
            tint(110, 50.0, v1),
            tint(140, 50.0, v1),
            tint(170, 50.0, v2),
        ),
    };
    Color { r, g, b }
}

/// The colour of `name` within the hues of `kind`: inferno's "hot" (less
/// its orange and yellow end, which the kernel's orange would blur with),
/// "aqua", "orange" and "green" palettes, with the shade taken from a hash
/// of the name rather than at random; inlined functions in violets.
fn kind_color(kind: FrameKind, inlined: bool, name: &str) -> Color {
    let hash = name_hash(name);
    let shade = |byte: u32| f32::from((hash >> (8 * byte)) as u8) / 255.0;
    let tint = |base: u8, range: f32, shade: f32| base + (range * shade) as u8;
    let (v1, v2, v3) = (shade(0), shade(1), shade(2));
    let (r, g, b) = match kind {
        _ if inlined => (
            tint(160, 50.0, v1),
            tint(110, 50.0, v2),
            tint(215, 40.0, v1),
        ),
        FrameKind::Program => (tint(205, 50.0, v3), tint(0, 80.0, v1), tint(0, 55.0, v2)),
        FrameKind::Library => (tint(50, 60.0, v1), tint(165, 55.0, v1), tint(165, 55.0, v1)),
        FrameKind::Kernel => (tint(190, 65.0, v1), tint(90, 65.0, v1), 0),
        FrameKind::Other => (tint(50, 60.0, v1), tint(200, 55.0, v1), tint(50, 60.0, v1)),
    };
    Color { r, g, b }
}

/// FNV-1a, then SplitMix64's finaliser so that every byte of the result
/// depends on every byte of the name; stable across builds and machines,
/// which `std`'s hasher does not promise.
fn name_hash(name: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in name.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash ^= hash >> 30;
    hash = hash.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    hash ^= hash >> 27;
    hash = hash.wrapping_mul(0x94d0_49bb_1331_11eb);
    hash ^ (hash >> 31)
}

/// A small SVG saying there is nothing to draw: inferno refuses empty
/// input, with an SVG whose script is missing.
fn write_empty(options: &FlameOptions, out: &mut impl Write) -> Result<(), ReportError> {
    write!(
        out,
        concat!(
            r#"<?xml version="1.0" standalone="no"?>"#,
            "\n",
            r#"<svg version="1.1" width="1200" height="70" viewBox="0 0 1200 70" xmlns="http://www.w3.org/2000/svg">"#,
            "\n",
            r##"<rect x="0" y="0" width="100%" height="100%" fill="#eeeeee"/>"##,
            "\n",
            r#"<text x="50%" y="24" text-anchor="middle" font-family="monospace" font-size="17">{}</text>"#,
            "\n",
            r#"<text x="50%" y="52" text-anchor="middle" font-family="monospace" font-size="12">No {} to show</text>"#,
            "\n</svg>\n"
        ),
        escape_xml(&options.title),
        escape_xml(&options.count_name),
    )?;
    out.flush()?;
    Ok(())
}

fn escape_xml(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&apos;"),
            c => escaped.push(c),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::views::folded::FoldedFrame;
    use quick_xml::Reader;
    use quick_xml::events::Event;

    fn frame(name: &str, kind: FrameKind) -> FoldedFrame {
        let module = match kind {
            FrameKind::Program => "app",
            FrameKind::Library => "libc.so.6",
            FrameKind::Kernel => "[kernel]",
            FrameKind::Other => "[anon]",
        };
        FoldedFrame {
            name: name.into(),
            module: module.into(),
            kind,
            inlined: false,
        }
    }

    /// main (program) -> compute (program) -> memcpy (library) ->
    /// page_fault (kernel); main -> jitted (other).
    fn sample_stacks(compute: u64, memcpy: u64, fault: u64, jitted: u64) -> FoldedStacks {
        FoldedStacks {
            frames: vec![
                frame("main", FrameKind::Program),
                frame("compute", FrameKind::Program),
                frame("memcpy", FrameKind::Library),
                frame("page_fault", FrameKind::Kernel),
                frame("jitted", FrameKind::Other),
            ],
            stacks: vec![
                (vec![0, 1], compute),
                (vec![0, 1, 2], memcpy),
                (vec![0, 1, 2, 3], fault),
                (vec![0, 4], jitted),
            ],
            weight: StackWeight::Samples,
        }
    }

    fn options() -> FlameOptions {
        FlameOptions {
            title: "Test <graph>".into(),
            ..FlameOptions::default()
        }
    }

    /// Reads every event of `svg`, failing on malformed XML.
    fn assert_well_formed(svg: &str) {
        let trimmed = svg.trim_end();
        assert!(trimmed.starts_with("<?xml") || trimmed.starts_with("<svg"));
        assert!(trimmed.ends_with("</svg>"), "{svg}");
        let mut reader = Reader::from_str(svg);
        let mut depth = 0usize;
        loop {
            match reader.read_event() {
                Ok(Event::Start(_)) => depth += 1,
                Ok(Event::End(_)) => depth -= 1,
                Ok(Event::Eof) => break,
                Ok(_) => {}
                Err(error) => panic!("malformed SVG at {}: {error}", reader.buffer_position()),
            }
        }
        assert_eq!(depth, 0, "unclosed elements");
    }

    /// The fill of the rectangle of the frame whose tooltip starts with
    /// `name (`.
    fn fill_of(svg: &str, name: &str) -> (u8, u8, u8) {
        let title = format!("<title>{name} (");
        let at = svg
            .find(&title)
            .unwrap_or_else(|| panic!("no frame {name}"));
        let fill = &svg[at..][svg[at..].find("fill=\"rgb(").expect("a fill") + 10..];
        let fill = &fill[..fill.find(')').expect("a closing parenthesis")];
        let parts: Vec<u8> = fill.split(',').map(|p| p.parse().unwrap()).collect();
        (parts[0], parts[1], parts[2])
    }

    fn render(stacks: &FoldedStacks, options: &FlameOptions) -> String {
        let mut out = Vec::new();
        render_flamegraph(stacks, options, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn flamegraph_is_well_formed_and_names_every_frame() {
        let svg = render(&sample_stacks(50, 30, 10, 10), &options());
        assert_well_formed(&svg);
        for name in ["main", "compute", "memcpy", "page_fault", "jitted"] {
            assert!(svg.contains(&format!("<title>{name} (")), "{name}");
        }
        assert!(svg.contains("Test &lt;graph&gt;"));
        assert!(svg.contains("<script"), "the interactive script is kept");
    }

    #[test]
    fn flamegraph_options_reach_the_svg() {
        let options = FlameOptions {
            subtitle: Some("a subtitle".into()),
            reverse: true,
            inverted: true,
            count_name: "cycles".into(),
            ..options()
        };
        let svg = render(&sample_stacks(50, 30, 10, 10), &options);
        assert_well_formed(&svg);
        assert!(svg.contains("a subtitle"));
        assert!(svg.contains("all (100 cycles, 100%)"));
        // Leaf first: compute's self weight and page_fault's become roots.
        assert!(svg.contains("<title>compute (50 cycles"), "{svg}");
        assert!(svg.contains("<title>page_fault (10 cycles"));
        assert!(svg.contains(r#"inverted = true"#), "icicle");
    }

    #[test]
    fn flamegraph_colours_frames_by_module_kind() {
        let svg = render(&sample_stacks(50, 30, 10, 10), &options());
        let (program, library) = (fill_of(&svg, "compute"), fill_of(&svg, "memcpy"));
        let (kernel, other) = (fill_of(&svg, "page_fault"), fill_of(&svg, "jitted"));
        assert!(
            program.0 >= 205 && program.1 <= 80 && program.2 <= 55,
            "red: {program:?}"
        );
        assert!(
            library.1 > library.0 && library.2 > library.0,
            "aqua: {library:?}"
        );
        assert!(
            kernel.0 >= 190 && kernel.1 >= 90 && kernel.2 == 0,
            "orange: {kernel:?}"
        );
        assert!(other.1 > other.0 && other.1 > other.2, "green: {other:?}");
        let fills = [program, library, kernel, other];
        for (i, a) in fills.iter().enumerate() {
            for b in &fills[i + 1..] {
                assert_ne!(a, b);
            }
        }
        // Stable: the same graph again is the same bytes.
        assert_eq!(svg, render(&sample_stacks(50, 30, 10, 10), &options()));
    }

    #[test]
    fn inlined_functions_are_violet_and_say_so_in_their_tooltips() {
        let mut stacks = sample_stacks(50, 30, 10, 10);
        stacks.frames.push(FoldedFrame {
            inlined: true,
            ..frame("mix", FrameKind::Program)
        });
        stacks.stacks.push((vec![0, 1, 5], 40));
        let svg = render(&stacks, &options());
        assert_well_formed(&svg);
        let (r, g, b) = fill_of(&svg, "mix (inlined)");
        assert!(b >= 215 && r >= 160 && g < r, "violet: {:?}", (r, g, b));
        assert_ne!(fill_of(&svg, "compute"), (r, g, b));
    }

    #[test]
    fn empty_stacks_give_a_valid_svg_saying_so() {
        let svg = render(&FoldedStacks::default(), &options());
        assert_well_formed(&svg);
        assert!(svg.contains("No samples to show"));
        let mut out = Vec::new();
        render_diff_flamegraph(
            &sample_stacks(1, 1, 1, 1),
            &FoldedStacks::default(),
            &options(),
            &mut out,
        )
        .unwrap();
        assert_well_formed(&String::from_utf8(out).unwrap());
    }

    #[test]
    fn names_ending_in_a_number_are_not_read_as_counts() {
        let stacks = FoldedStacks {
            frames: vec![
                frame("main", FrameKind::Program),
                frame("worker 12", FrameKind::Program),
            ],
            stacks: vec![(vec![0, 1], 7)],
            weight: StackWeight::Samples,
        };
        let svg = render(&stacks, &options());
        assert_well_formed(&svg);
        assert!(svg.contains("<title>worker\u{a0}12 (7 samples"), "{svg}");
    }

    #[test]
    fn diff_scales_base_to_new_and_keeps_stacks_only_in_base() {
        let base = FoldedStacks {
            frames: vec![
                frame("main", FrameKind::Program),
                frame("gone", FrameKind::Program),
            ],
            stacks: vec![(vec![0], 10), (vec![0, 1], 30)],
            weight: StackWeight::Samples,
        };
        let new = FoldedStacks {
            frames: vec![frame("main", FrameKind::Program)],
            stacks: vec![(vec![0], 20)],
            weight: StackWeight::Samples,
        };
        let lines = diff_lines(&base, &new);
        assert_eq!(lines["main"], (5, 20));
        assert_eq!(lines["main;gone"], (15, 0));
    }

    fn render_diff(base: &FoldedStacks, new: &FoldedStacks) -> String {
        let mut out = Vec::new();
        render_diff_flamegraph(base, new, &options(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn diff_colours_growth_red_and_shrinkage_blue() {
        // compute shrinks from 50% to 20%, memcpy grows from 30% to 60%;
        // the base has twice the samples, which normalising cancels.
        let svg = render_diff(
            &sample_stacks(100, 60, 20, 20),
            &sample_stacks(20, 60, 10, 10),
        );
        assert_well_formed(&svg);
        let (grew, shrank) = (fill_of(&svg, "memcpy"), fill_of(&svg, "compute"));
        assert!(grew.0 > grew.2, "grew: {grew:?}");
        assert!(shrank.2 > shrank.0, "shrank: {shrank:?}");
        // page_fault and jitted kept their share: neither red nor blue.
        for name in ["page_fault", "jitted"] {
            let (r, _, b) = fill_of(&svg, name);
            assert_eq!(r, b, "{name}");
        }
    }
}
