//! Flame graphs: folded stacks drawn by inferno as an interactive SVG
//! (hover for counts, click to zoom, search), coloured by the kind of module
//! each frame belongs to; and differential flame graphs of two profiles.

use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::io::{BufWriter, Write};

use inferno::flamegraph::color::{BackgroundColor, Color, PaletteMap};
use inferno::flamegraph::{Direction, Options, TextTruncateDirection, from_lines};
use profiler_model::printable;

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

/// Draws the stacks of `new` as a differential flame graph against `base`,
/// as Brendan Gregg's differential flame graphs are read: widths are
/// `new`'s; a function is red where its total share (its samples and its
/// callees', each sample once) grew from `base` to `new`, blue where it
/// shrank, near white where it kept its share, the deeper the hue the
/// larger the change against the largest one in the graph. Shares are of
/// each recording's own total, so profiles of different lengths compare by
/// proportion. Each tooltip adds the change, and the subtitle (unless
/// `options` gives one) is the legend.
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
    let changes = total_changes(base, new);
    let largest = changes.values().fold(0.0f64, |most, d| most.max(d.abs()));
    let mut palette = PaletteMap::default();
    palette.insert("", change_color(0.0, largest));
    for (name, change) in &changes {
        palette.insert(name, change_color(*change, largest));
    }
    let lines = flame_lines(new);
    let divisor = fitting_divisor(lines.iter().map(|(_, weight)| *weight));
    let lines: Vec<String> = (lines.into_iter())
        .map(|(stack, weight)| format!("{stack} {}", weight / divisor))
        .collect();
    let mut inferno_options = inferno_options(options);
    inferno_options.subtitle = Some(options.subtitle.clone().unwrap_or_else(|| {
        format!(
            "red: a function's total share grew, blue: it shrank, the deeper the more (the \
             deepest: {largest:.2} points); widths are the new recording's"
        )
    }));
    inferno_options.palette_map = Some(&mut palette);
    let mut svg = Vec::new();
    from_lines(
        &mut inferno_options,
        lines.iter().map(String::as_str),
        &mut svg,
    )?;
    out.write_all(with_changes(&String::from_utf8_lossy(&svg), &changes).as_bytes())?;
    out.flush()?;
    Ok(())
}

/// The change, in points, of each function's total share from `base` to
/// `new`, by its label (as inferno reads it): a stack counts once for
/// every function in it, however often it recurses.
fn total_changes(base: &FoldedStacks, new: &FoldedStacks) -> BTreeMap<String, f64> {
    let shares = |stacks: &FoldedStacks| {
        let total = stacks.total().max(1) as f64;
        let mut weights: BTreeMap<String, f64> = BTreeMap::new();
        for (stack, weight) in &stacks.stacks {
            let mut labels: Vec<String> = (stacks.frames_of(stack))
                .map(|frame| protect_number(&frame.label()))
                .collect();
            labels.sort_unstable();
            labels.dedup();
            for label in labels {
                *weights.entry(label).or_default() += *weight as f64;
            }
        }
        weights.values_mut().for_each(|w| *w *= 100.0 / total);
        weights
    };
    let (before, mut changes) = (shares(base), shares(new));
    for (label, share) in &mut changes {
        *share -= before.get(label).copied().unwrap_or(0.0);
    }
    changes
}

/// Red for growth, blue for shrinkage, from near white to deep as
/// `change` nears the `largest` change (inferno's differential scale).
fn change_color(change: f64, largest: f64) -> Color {
    // Changes under a hundredth of a point are none.
    if change.abs() < 0.005 || largest <= 0.0 {
        return Color {
            r: 250,
            g: 250,
            b: 250,
        };
    }
    let depth = (change.abs() / largest).min(1.0);
    let c = (100.0 + 150.0 * (1.0 - depth)).round() as u8;
    match change > 0.0 {
        true => Color { r: 255, g: c, b: c },
        false => Color { r: c, g: c, b: 255 },
    }
}

/// `svg` with each frame's tooltip, `NAME (N samples, P%)`, saying how its
/// total share changed: `NAME (N samples, P%; total +1.50 points)`.
fn with_changes(svg: &str, changes: &BTreeMap<String, f64>) -> String {
    let escaped: FxHashMap<String, f64> = (changes.iter())
        .map(|(name, change)| (escape_xml(name), *change))
        .collect();
    let mut text = String::with_capacity(svg.len() + 32 * changes.len());
    let mut rest = svg;
    while let Some(at) = rest.find("<title>") {
        let (before, title) = rest.split_at(at + "<title>".len());
        text.push_str(before);
        let Some(end) = title.find("</title>") else {
            rest = title;
            break;
        };
        let content = &title[..end];
        let change = (content.rsplit_once(" ("))
            .filter(|_| content.ends_with(')'))
            .and_then(|(name, _)| escaped.get(name));
        match change {
            Some(change) => {
                text.push_str(&content[..content.len() - 1]);
                text.push_str(&format!("; total {change:+.2} points)"));
            }
            None => text.push_str(content),
        }
        rest = &title[end..];
    }
    text.push_str(rest);
    text
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
    // Titles name commands, which anyone may have named.
    inferno_options.title = printable(&options.title).into_owned();
    inferno_options.subtitle = (options.subtitle.as_deref()).map(|s| printable(s).into_owned());
    inferno_options.reverse_stack_order = options.reverse;
    inferno_options.direction = if options.inverted {
        Direction::Inverted
    } else {
        Direction::Straight
    };
    inferno_options.min_width = options.min_width;
    // A label too long for its frame keeps its start, as inferno's own
    // text does before the script runs.
    inferno_options.text_truncate_direction = TextTruncateDirection::Right;
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
        escape_xml(&printable(&options.title)),
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
        assert!(
            svg.contains("truncate_text_right = true"),
            "labels keep their start"
        );
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
    fn diff_changes_are_of_each_functions_total_share_once_per_stack() {
        // main -> work -> work (recursing) -> leaf: work counts once.
        let stacks = |leaf: u64, other: u64| FoldedStacks {
            frames: vec![
                frame("main", FrameKind::Program),
                frame("work", FrameKind::Program),
                frame("leaf", FrameKind::Program),
                frame("other", FrameKind::Program),
            ],
            stacks: vec![(vec![0, 1, 1, 2], leaf), (vec![0, 3], other)],
            weight: StackWeight::Samples,
        };
        // Twice the samples in the base: shares compare, not counts.
        let changes = total_changes(&stacks(60, 140), &stacks(60, 40));
        let near = |name: &str, points: f64| (changes[name] - points).abs() < 1e-9;
        assert!(near("main", 0.0), "{changes:?}");
        assert!(near("work", 30.0), "{changes:?}");
        assert!(near("leaf", 30.0), "{changes:?}");
        assert!(near("other", -30.0), "{changes:?}");
    }

    fn render_diff(base: &FoldedStacks, new: &FoldedStacks) -> String {
        let mut out = Vec::new();
        render_diff_flamegraph(base, new, &options(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn diff_colours_by_the_change_of_each_functions_total() {
        // compute keeps its self share (40%) while its total grows from 60%
        // to 75% through memcpy: red, as memcpy; page_fault and jitted
        // shrink: blue; main keeps 100%: white. The base has twice the
        // samples, which shares cancel.
        let svg = render_diff(&sample_stacks(80, 40, 0, 80), &sample_stacks(40, 35, 0, 25));
        assert_well_formed(&svg);
        for name in ["compute", "memcpy"] {
            let (r, g, b) = fill_of(&svg, name);
            assert!(
                r == 255 && g < 200 && g == b,
                "{name} grew: {:?}",
                (r, g, b)
            );
        }
        let (r, g, b) = fill_of(&svg, "jitted");
        assert!(
            b == 255 && r < 200 && r == g,
            "jitted shrank: {:?}",
            (r, g, b)
        );
        assert_eq!(fill_of(&svg, "main"), (250, 250, 250));
        // The larger change is the deeper.
        assert!(fill_of(&svg, "compute").1 <= fill_of(&svg, "memcpy").1);
        // Tooltips say the change; the subtitle is the legend.
        assert!(
            svg.contains("<title>compute (75 samples, 75.00%; total +15.00 points)</title>"),
            "{svg}"
        );
        assert!(svg.contains("<title>jitted (25 samples, 25.00%; total -15.00 points)</title>"));
        assert!(svg.contains("red: a function&apos;s total share grew, blue: it shrank"));
        assert!(svg.contains("the deepest: 15.00 points"));
    }
}
