//! The exports in a real browser: Debian's Chromium, headless, renders the
//! page and the test reads back the DOM its scripts left (`--dump-dom`).
//! speedscope's own built page, from the npm package tests/browser pins
//! (`npm ci` there), served with the export from a local server, imports
//! the speedscope export of the deep recursion and lists its functions with
//! their shares; the flame graph SVG draws every frame and its search
//! highlights the function searched for. Screenshots, left in
//! target/test-artifacts/, are read back: speedscope's table shows each
//! function's swatch, its flame chart (drawn with WebGL) and the flame
//! graph fill the window with frames, the searched ones highlighted.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::synthetic::{At, Synthetic};
use crate::util::*;

const CHROMIUM: &str = "/usr/bin/chromium";

/// speedscope's built page in its npm package.
fn speedscope_release() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/node_modules/speedscope/dist/release")
}

/// Whether Chromium and speedscope's page are there; if not, skips the
/// running test (`.ci/run` installs both).
fn browser_installed() -> bool {
    if !profiler_testing::tool(CHROMIUM) {
        return false;
    }
    let page = speedscope_release().join("index.html");
    if !page.exists() {
        profiler_testing::skip(format_args!(
            "{} is missing: run npm ci in tests/browser",
            page.display()
        ));
        return false;
    }
    true
}

/// Chromium, headless, as root; the page's scripts get up to 15 s of
/// virtual time (which waits for the page's own requests) to settle.
/// speedscope draws with WebGL, which Chromium without a GPU no longer
/// falls back to software for unless told to (SwiftShader through ANGLE):
/// without it the page says "Something went wrong".
fn chromium(url: &str, what: &[&str]) -> String {
    let output = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--use-angle=swiftshader",
            "--enable-unsafe-swiftshader",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            "--no-first-run",
            "--hide-scrollbars",
            "--virtual-time-budget=15000",
        ])
        .args(what)
        .arg(url)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "chromium {url}: {}",
        stderr(&output)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Takes a screenshot of `url` at `width`×`height` into
/// target/test-artifacts/NAME, and returns its pixels.
fn screenshot(url: &str, name: &str, (width, height): (u32, u32)) -> Vec<[u8; 3]> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    chromium(
        url,
        &[
            &format!("--screenshot={}", path.display()),
            &format!("--window-size={width},{height}"),
        ],
    );
    let file = std::fs::File::open(&path);
    let file = file.unwrap_or_else(|e| panic!("no screenshot of {url} at {}: {e}", path.display()));
    let mut decoder = png::Decoder::new(BufReader::new(file));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().unwrap();
    let mut buffer = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut buffer).unwrap();
    assert_eq!(
        (frame.width, frame.height),
        (width, height),
        "{}",
        path.display()
    );
    let channels = frame.color_type.samples();
    (buffer[..frame.buffer_size()].chunks_exact(channels))
        .map(|p| match p {
            [gray] | [gray, _] => [*gray; 3],
            [r, g, b, ..] => [*r, *g, *b],
            _ => unreachable!("1 to 4 channels"),
        })
        .collect()
}

/// The share of `pixels` in colour (not white, black or grey): what frames
/// of a flame chart are drawn in, and text and backgrounds are not.
fn coloured_share(pixels: &[[u8; 3]]) -> f64 {
    let coloured = |p: &&[u8; 3]| {
        let (max, min) = (p.iter().max().unwrap_or(&0), p.iter().min().unwrap_or(&0));
        max - min >= 30
    };
    pixels.iter().filter(coloured).count() as f64 / pixels.len().max(1) as f64
}

/// Serves `profile` as /profile.json and the files of `dir` by name on
/// 127.0.0.1: speedscope loads a profile by URL with fetch, which Chromium
/// refuses on file:// URLs. Returns the port.
fn serve(dir: PathBuf, profile: PathBuf) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (dir, profile) = (dir.clone(), profile.clone());
            std::thread::spawn(move || respond(stream, &dir, &profile));
        }
    });
    port
}

fn respond(mut stream: TcpStream, dir: &Path, profile: &Path) {
    let mut reader = BufReader::new(&stream);
    let mut request = String::new();
    if reader.read_line(&mut request).is_err() {
        return;
    }
    let mut header = String::new();
    while reader.read_line(&mut header).is_ok_and(|n| n > 2) {
        header.clear();
    }
    let path = request.split_whitespace().nth(1).unwrap_or("/");
    let path = path.split(['?', '#']).next().unwrap_or(path);
    let file = match path {
        "/profile.json" => profile.to_owned(),
        path => dir.join(path.rsplit('/').next().unwrap_or("")),
    };
    let kind = match file.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html",
        Some("js") => "text/javascript",
        Some("css") => "text/css",
        Some("json") => "application/json",
        Some("wasm") => "application/wasm",
        Some("png") => "image/png",
        _ => "application/octet-stream",
    };
    let _ = match std::fs::read(&file) {
        Ok(body) => stream
            .write_all(
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\
                     Connection: close\r\n\r\n",
                    body.len()
                )
                .as_bytes(),
            )
            .and_then(|()| stream.write_all(&body)),
        Err(_) => stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"),
    };
}

/// The text of an HTML document, one line per element's text.
fn text_of(html: &str) -> Vec<String> {
    let mut text = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => {
                in_tag = true;
                text.push('\n');
            }
            '>' => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    text.lines()
        .map(|l| l.trim().replace("&amp;", "&"))
        .filter(|l| !l.is_empty())
        .collect()
}

/// The share of `function`'s own time in speedscope's sandwich table,
/// whose rows read `TOTAL (P%)`, `SELF (P%)`, then the name.
fn sandwich_self_percent(text: &[String], function: &str) -> f64 {
    let row = text.iter().position(|l| l == function);
    let row = row.unwrap_or_else(|| panic!("no {function} in the sandwich view: {text:?}"));
    let own = &text[row - 1];
    let percent = own.split('(').nth(1).and_then(|p| p.strip_suffix("%)"));
    percent
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no share in {own:?}"))
}

/// The functions of speedscope's sandwich table, each the line after its
/// row's `TOTAL (P%)` and `SELF (P%)`.
fn table_functions(text: &[String]) -> Vec<&str> {
    let share = |line: &String| line.ends_with("%)");
    (2..text.len())
        .filter(|&i| share(&text[i - 2]) && share(&text[i - 1]) && !share(&text[i]))
        .map(|i| text[i].as_str())
        .collect()
}

/// The colour of each swatch in `pixels` (rows `width` wide), top to
/// bottom: an 8x8 square of one colour, not grey, framed by a 1-pixel
/// border of another.
fn swatches(pixels: &[[u8; 3]], width: usize) -> Vec<[u8; 3]> {
    const SIDE: usize = 10;
    let height = pixels.len() / width;
    let at = |x: usize, y: usize| pixels[y * width + x];
    let mut found = Vec::new();
    for y in 0..height.saturating_sub(SIDE - 1) {
        for x in 0..width.saturating_sub(SIDE - 1) {
            let (frame, inside) = (at(x, y), at(x + 1, y + 1));
            let grey = inside.iter().max() == inside.iter().min();
            if frame == inside || grey {
                continue;
            }
            let ring = (0..SIDE).all(|i| {
                [
                    (x + i, y),
                    (x + i, y + SIDE - 1),
                    (x, y + i),
                    (x + SIDE - 1, y + i),
                ]
                .iter()
                .all(|&(u, v)| at(u, v) == frame)
            });
            let filled = (1..SIDE - 1).all(|v| (1..SIDE - 1).all(|u| at(x + u, y + v) == inside));
            if ring && filled {
                found.push(inside);
            }
        }
    }
    found
}

/// A frame of the flame graph as the browser left it: its title, its
/// rectangle's width and fill, and its label.
#[derive(Debug, Default)]
struct SvgFrame {
    title: String,
    width: f64,
    fill: String,
    label: String,
}

/// The frames (each `<g>` in `#frames`) and the `#matched` text of a
/// flame graph.
fn svg_frames(svg: &str) -> (Vec<SvgFrame>, String) {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(svg);
    let (mut frames, mut matched) = (Vec::new(), String::new());
    let (mut in_frames, mut depth, mut element) = (false, 0, Vec::new());
    loop {
        let event = reader.read_event();
        let event = event.unwrap_or_else(|e| panic!("the DOM is not well-formed XML: {e}"));
        let attribute = |e: &quick_xml::events::BytesStart, name: &str| {
            (e.try_get_attribute(name).ok().flatten())
                .map(|a| String::from_utf8_lossy(&a.value).into_owned())
        };
        match event {
            Event::Eof => break,
            Event::Start(e) => {
                let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                if attribute(&e, "id").as_deref() == Some("frames") {
                    in_frames = true;
                    depth = 0;
                } else if in_frames && name == "g" {
                    depth += 1;
                    if depth == 1 {
                        frames.push(SvgFrame::default());
                    }
                }
                element.push(name);
            }
            Event::Empty(e) if in_frames && depth == 1 && e.name().as_ref() == b"rect" => {
                let frame = frames.last_mut().unwrap();
                let width = attribute(&e, "width").unwrap_or_default();
                frame.width = width.trim_end_matches('%').parse().unwrap_or(0.0);
                frame.fill = attribute(&e, "fill").unwrap_or_default();
            }
            Event::Text(t) => {
                let text = String::from_utf8_lossy(&t).into_owned();
                match element.last().map(String::as_str) {
                    Some("title") if in_frames && depth == 1 => {
                        frames.last_mut().unwrap().title = text;
                    }
                    Some("text") if in_frames && depth == 1 => {
                        frames.last_mut().unwrap().label = text;
                    }
                    Some("text") if text.starts_with("Matched") => matched = text,
                    _ => {}
                }
            }
            Event::End(e) => {
                element.pop();
                if in_frames {
                    match (depth, e.name().as_ref()) {
                        (0, _) => in_frames = false,
                        (_, b"g") => depth -= 1,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    (frames, matched)
}

live_test!(
    speedscope_and_the_flame_graph_show_the_recursion_in_chromium,
    || {
        if !browser_installed() {
            return;
        }
        let dir = scratch("browser");
        let program = fixture("recurse");
        // User space only: the recursion, without the kernel's frames.
        let options = ["-e", "cpu-clock:u", "-g"];
        record(
            &dir,
            "recurse.data",
            &options,
            &[program.to_str().unwrap(), "3"],
        );
        let input = ["-i", "recurse.data"];
        run_ok(
            &dir,
            &[&["export", "--format", "speedscope"], &input[..]].concat(),
        );
        run_ok(
            &dir,
            &[&["flamegraph", "-o", "flame.svg"], &input[..]].concat(),
        );
        let report = report_json(&dir, "recurse.data");

        let port = serve(speedscope_release(), dir.join("profile.speedscope.json"));
        let base = format!("http://127.0.0.1:{port}");
        let page = |view: &str| {
            let profile = format!("{base}/profile.json")
                .replace(':', "%3A")
                .replace('/', "%2F");
            format!("{base}/index.html#profileURL={profile}&view={view}")
        };
        // The table's rows come a frame after the import; on a busy machine
        // past the virtual time, so the page is read up to three times.
        let mut dom = chromium(&page("sandwich"), &["--dump-dom"]);
        for _ in 0..2 {
            if text_of(&dom).iter().any(|l| l == "main") {
                break;
            }
            dom = chromium(&page("sandwich"), &["--dump-dom"]);
        }
        // The title names the profile once speedscope has imported it; a file
        // it cannot import leaves `speedscope` and says so in the page.
        assert!(
            dom.contains("recurse 3 - speedscope</title>"),
            "not imported:\n{dom}"
        );
        let text = text_of(&dom);
        assert!(
            !text.iter().any(|l| l.contains("Something went wrong")),
            "{text:?}"
        );
        for function in ["leaf", "side", "descend", "main"] {
            assert!(
                text.iter().any(|l| l == function),
                "no {function}: {text:?}"
            );
        }
        for function in ["leaf", "side"] {
            let shown = sandwich_self_percent(&text, function);
            let ours = percent(&report, function);
            assert!(
                (shown - ours).abs() <= 1.0,
                "{function}: {shown}% in speedscope, {ours:.2}% in report"
            );
        }
        // Each row of the table with its function's colour swatch: a square
        // of 8x8 pixels in a colour of its own, framed in grey. The colours
        // are pale, some barely coloured, so a swatch is found by its shape.
        let rows = table_functions(&text);
        let mut colours = Vec::new();
        for _ in 0..3 {
            let sandwich = screenshot(
                &page("sandwich"),
                "speedscope-recurse-sandwich.png",
                (1280, 800),
            );
            colours = swatches(&sandwich, 1280);
            // Drawn a frame after the import, as the table's text is.
            if colours.len() >= rows.len() {
                break;
            }
        }
        let distinct: BTreeSet<_> = colours.iter().collect();
        assert!(
            colours.len() == rows.len() && distinct.len() == rows.len(),
            "{} swatches, {} colours, for the sandwich view's {} rows {rows:?}: {colours:?}",
            colours.len(),
            distinct.len(),
            rows.len()
        );
        // The time-ordered flame chart, drawn with WebGL: its frames fill
        // most of the window.
        let chart = screenshot(
            &page("time-ordered"),
            "speedscope-recurse-time-order.png",
            (1280, 800),
        );
        let drawn = coloured_share(&chart);
        assert!(drawn > 0.5, "frames cover {drawn:.2} of the flame chart");

        // The SVG runs its own search for `?s=` when it loads, as its Search
        // button and Ctrl-F do.
        let svg = format!("file://{}", dir.join("flame.svg").display());
        let searched = format!("{svg}?s=%5Eleaf%5Cb");
        let dom = chromium(&searched, &["--dump-dom"]);
        let (frames, matched) = svg_frames(&dom);
        let titles: Vec<&str> = frames.iter().map(|f| f.title.as_str()).collect();
        assert!(
            frames.len() > 65,
            "the recursion's frames are not all there: {titles:?}"
        );
        assert!(
            frames.iter().all(|f| f.width > 0.0),
            "a frame without width: {frames:?}"
        );
        for function in ["leaf", "side", "descend", "main"] {
            let drawn = titles
                .iter()
                .any(|t| t.starts_with(&format!("{function} (")));
            assert!(drawn, "no {function} frame: {titles:?}");
        }
        // Highlighted: given inferno's search colour, the old one kept aside.
        let highlighted: Vec<&str> = (frames.iter())
            .filter(|f| f.fill == "rgb(230,0,230)")
            .map(|f| f.title.as_str())
            .collect();
        assert!(
            !highlighted.is_empty(),
            "search highlighted nothing: {frames:?}"
        );
        assert!(
            highlighted.iter().all(|t| t.starts_with("leaf (")),
            "search highlighted others: {highlighted:?}"
        );
        let share: f64 = (matched
            .strip_prefix("Matched: ")
            .and_then(|m| m.strip_suffix('%')))
        .and_then(|m| m.parse().ok())
        .unwrap_or_else(|| panic!("no match share: {matched:?}"));
        assert!((share - percent(&report, "leaf")).abs() <= 1.0, "{matched}");
        // As tall as the graph, searched.
        let height = (dom.split_once(" height=\""))
            .and_then(|(_, rest)| rest.split('"').next()?.parse().ok())
            .unwrap_or(1200);
        let flame = screenshot(&searched, "flamegraph-recurse.png", (1280, height));
        let drawn = coloured_share(&flame);
        assert!(drawn > 0.5, "frames cover {drawn:.2} of the flame graph");
        let highlighted = flame.iter().filter(|p| **p == [230, 0, 230]).count();
        assert!(highlighted > 1000, "{highlighted} highlighted pixels");
    }
);

#[test]
fn flame_graph_labels_keep_their_start_in_chromium() {
    if !profiler_testing::tool(CHROMIUM) {
        return;
    }
    // A long name in a frame a tenth of the graph wide, made by hand: its
    // JIT code is named by a jitdump beside the recording.
    let dir = scratch("browser-labels");
    let long = "compute_the_weighted_moving_average_of_every_sensor_reading_in_the_buffer";
    let (pid, jit) = (4243, 0x7f00_0000_0000);
    let mut recording = Synthetic::with_stacks();
    recording.process(pid, 0, "labels", &fixture("stable"));
    recording.jit(
        pid,
        &dir,
        jit,
        &[(0, long), (0x100, "short"), (0x200, "caller")],
    );
    for (offset, count) in [(0x10, 100), (0x110, 900)] {
        let at = At {
            pid,
            user: vec![jit + offset, jit + 0x210],
            ..At::default()
        };
        recording.take(&at, count);
    }
    recording.write(&dir.join("labels.data"), &["labels"]);
    run_ok(
        &dir,
        &["flamegraph", "-i", "labels.data", "-o", "flame.svg"],
    );
    let svg = format!("file://{}", dir.join("flame.svg").display());
    let (frames, _) = svg_frames(&chromium(&svg, &["--dump-dom"]));
    let frame = (frames.iter())
        .find(|f| f.title.starts_with(long))
        .unwrap_or_else(|| panic!("no frame of {long}: {frames:?}"));
    let kept = frame
        .label
        .strip_suffix("..")
        .unwrap_or_else(|| panic!("{frame:?}"));
    assert!(kept.len() >= 3 && long.starts_with(kept), "{frame:?}");
}
