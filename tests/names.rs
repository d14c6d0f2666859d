//! Names anyone can choose (symbols of a binary, a process's command name,
//! a file's path, a JIT map's entries, the recorded command) reach no
//! output raw: every control character is escaped in text, JSON, folded
//! stacks, flame graphs, pprof and the other exports, and a flame graph is
//! well-formed XML whatever the names.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Command;

use profiler_model::{Avma, Comm, FileOffset, Mmap, Record};

use crate::pprof_text::pprof_strings;
use crate::synthetic::*;
use crate::util::*;

/// Each control byte, DEL, bytes that are not UTF-8, the C1 control NEL,
/// a right-to-left override, and what ends a CDATA section and starts an
/// XML comment: spread over three names.
fn hostile_names() -> [Vec<u8>; 3] {
    let mut first = b"first".to_vec();
    first.extend(1u8..0x10);
    first.extend(b"]]>\xff");
    let mut second = b"second".to_vec();
    second.extend(0x10u8..0x20);
    second.extend(b"\x7f<!--\xc3(");
    let third = b"third\x1b[2J\x1b]0;title\x07\xc2\x85\xe2\x80\xaeend".to_vec();
    [first, second, third]
}

/// Whether `text` holds a character no output may carry raw (`\n` ends
/// lines of text outputs, and is allowed where `newlines`).
fn unprintable(text: &str, newlines: bool) -> Option<char> {
    text.chars().find(|&c| {
        (c.is_control() && !(newlines && c == '\n'))
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    })
}

/// Every string of a JSON document.
fn json_strings(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(items) => items.iter().for_each(|v| json_strings(v, out)),
        serde_json::Value::Object(map) => {
            for (key, v) in map {
                out.push(key.clone());
                json_strings(v, out);
            }
        }
        _ => {}
    }
}

/// Checks that `svg` is well-formed XML: parsed to its end, with no
/// character, raw or by reference, that XML 1.0 does not allow.
fn assert_well_formed(svg: &str) {
    let mut reader = quick_xml::Reader::from_str(svg);
    loop {
        match reader.read_event() {
            Ok(quick_xml::events::Event::Eof) => break,
            Ok(_) => {}
            Err(error) => panic!("the flame graph is not well-formed XML: {error}"),
        }
    }
    let allowed = |c: u32| matches!(c, 0x9 | 0xa | 0xd | 0x20..=0xd7ff | 0xe000..=0xfffd | 0x10000..=0x10ffff);
    if let Some(c) = svg.chars().find(|&c| !allowed(u32::from(c))) {
        panic!(
            "the flame graph holds U+{:04X}, which XML does not allow",
            u32::from(c)
        );
    }
    for reference in svg.split("&#").skip(1) {
        let number = reference.split(';').next().unwrap_or_default();
        let value = match number.strip_prefix('x') {
            Some(hex) => u32::from_str_radix(hex, 16),
            None => number.parse(),
        };
        let value = value.unwrap_or_else(|_| panic!("a bad character reference &#{number};"));
        assert!(allowed(value), "the flame graph refers to U+{value:04X}");
    }
}

#[test]
fn names_of_any_bytes_reach_no_output_raw() {
    let dir = scratch("names-hostile");
    // A binary whose three functions have the names.
    let binary = dir.join("split");
    let [first, second, third] = hostile_names();
    let mut objcopy = Command::new("objcopy");
    for (old, new) in [
        ("burn_60", &first),
        ("burn_30", &second),
        ("burn_10", &third),
    ] {
        let mut rename = format!("--redefine-sym={old}=").into_bytes();
        rename.extend(new);
        objcopy.arg(OsStr::from_bytes(&rename));
    }
    let status = objcopy.arg(fixture("split")).arg(&binary).status().unwrap();
    assert!(status.success());
    // The same binary at a path of control characters, which no longer
    // reads as the file it was.
    let hostile_path = dir.join(OsStr::from_bytes(b"path\x1b[31m\nend\x07"));
    std::fs::copy(&binary, &hostile_path).unwrap();
    // A JIT map of every name, believed: it is this user's.
    let jit_pid = 0x5000_0000 + std::process::id() % 0x1000_0000;
    let map = format!("/tmp/perf-{jit_pid}.map");
    let mut entries = Vec::new();
    for (i, name) in hostile_names().iter().enumerate() {
        entries.extend(format!("{:x} 10 \0jit", 0x7100_0000_0000u64 + 0x10 * i as u64).bytes());
        entries.extend(name);
        entries.push(b'\n');
    }
    std::fs::write(&map, entries).unwrap();

    let mut recording = Synthetic::with_stacks();
    recording.process(100, 0, "split", &binary);
    for (burn, count) in [("burn_60", 6), ("burn_30", 3), ("burn_10", 1)] {
        let (start, _) = function_range(&fixture("split"), burn);
        recording.samples(100, start + 4, &[], count);
    }
    recording.push_raw(Record::Comm(Comm {
        time: 1,
        pid: 100,
        tid: 100,
        name: "comm\0\n\x1b[31m\u{85}\u{202e}".into(),
        exec: false,
    }));
    recording.process(200, 0, "hostile", &binary);
    recording.push_raw(Record::Mmap(Mmap {
        time: 2,
        pid: 200,
        tid: 200,
        start: Avma(0x6000_0000_0000),
        len: 0x1000,
        offset: FileOffset(0x1000),
        path: String::from_utf8_lossy(hostile_path.as_os_str().as_bytes()).into_owned(),
        build_id: None,
    }));
    let at = |pid, address| At {
        pid,
        user: vec![address, address + 0x100],
        ..At::default()
    };
    recording.take(&at(200, 0x6000_0000_0250), 4);
    recording.push_raw(crate::reading::jit_mapping(3, jit_pid));
    for i in 0..3 {
        recording.take(&at(jit_pid, 0x7100_0000_0004 + 0x10 * i), 2);
    }
    recording.write(
        &dir.join("names.data"),
        &["./split\x1b]0;owned\x07", "\u{9b}31m"],
    );

    // Text, one record a line.
    for view in [
        &["report"][..],
        &["report", "--children"],
        &["report", "--call-graph=caller"],
        &["report", "--sort", "comm,dso,sym"],
        &["report", "--sort", "line"],
        &["hist"],
        &["diff", "names.data", "names.data"],
    ] {
        let mut args = view.to_vec();
        if view[0] != "diff" {
            args.extend(["-i", "names.data"]);
        }
        let text = String::from_utf8(run_ok(&dir, &args).stdout).unwrap();
        assert!(text.contains("first"), "{args:?}: {text}");
        if let Some(c) = unprintable(&text, true) {
            panic!("{args:?} printed {c:?} raw: {text}");
        }
    }
    let report = String::from_utf8(run_ok(&dir, &["report", "-i", "names.data"]).stdout).unwrap();
    for escaped in [
        "first\\x01\\x02",
        "second\\x10",
        "\\x7f<!--",
        "third\\x1b[2J",
        "\\u{202e}end",
    ] {
        assert!(report.contains(escaped), "{escaped}: {report}");
    }
    // JSON, whose strings hold no control character once decoded.
    for view in [
        &["report", "--format", "json"][..],
        &["hist", "--format", "json"],
        &[
            "export",
            "--format",
            "speedscope",
            "-o",
            "names.speedscope.json",
        ],
        &["export", "--format", "firefox", "-o", "names.firefox.json"],
    ] {
        let mut args = view.to_vec();
        args.extend(["-i", "names.data"]);
        let output = run_ok(&dir, &args);
        let json = match view.iter().position(|&a| a == "-o") {
            Some(at) => std::fs::read(dir.join(view[at + 1])).unwrap(),
            None => output.stdout,
        };
        let value: serde_json::Value = serde_json::from_slice(&json).unwrap();
        let mut strings = Vec::new();
        json_strings(&value, &mut strings);
        assert!(strings.iter().any(|s| s.contains("first")), "{args:?}");
        if let Some(s) = strings.iter().find(|s| unprintable(s, false).is_some()) {
            panic!("{args:?} holds {s:?}");
        }
    }
    // Folded stacks: one stack a line, its count last.
    run_ok(
        &dir,
        &[
            "export",
            "--format",
            "folded",
            "-i",
            "names.data",
            "-o",
            "names.folded",
        ],
    );
    let folded = std::fs::read_to_string(dir.join("names.folded")).unwrap();
    for line in folded.lines() {
        assert!(unprintable(line, false).is_none(), "{line:?}");
        let count = line.rsplit(' ').next().unwrap();
        assert!(count.parse::<u64>().is_ok(), "{line:?}");
    }
    // pprof: every string of its table.
    run_ok(
        &dir,
        &[
            "export",
            "--format",
            "pprof",
            "-i",
            "names.data",
            "-o",
            "names.pb.gz",
        ],
    );
    let strings = pprof_strings(&std::fs::read(dir.join("names.pb.gz")).unwrap());
    assert!(strings.iter().any(|s| s.contains("third")));
    if let Some(s) = strings.iter().find(|s| unprintable(s, false).is_some()) {
        panic!("the pprof export holds {s:?}");
    }
    // The flame graph, with its default title (the command) and one given.
    for title in [&[][..], &["--title", "t\x01\x1b]]><!--"]] {
        let args = [
            &["flamegraph", "-i", "names.data", "-o", "names.svg"][..],
            title,
        ]
        .concat();
        run_ok(&dir, &args);
        let svg = std::fs::read_to_string(dir.join("names.svg")).unwrap();
        assert!(svg.contains("first"), "{svg}");
        assert_well_formed(&svg);
    }
    let _ = std::fs::remove_file(&map);
    assert!(Path::new(&dir).exists());
}
