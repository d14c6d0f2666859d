//! A pprof export as text, for expected outputs: the gzipped profile.proto
//! decoded with the types the exporter encodes with, every string-table
//! index replaced by its string, one table entry a line.

use std::fmt::Write as _;
use std::io::Read;

use flate2::read::GzDecoder;
use prost::Message;

#[allow(dead_code)]
#[path = "../crates/report/src/export/pprof/proto.rs"]
mod proto;

/// `gzipped` (a pprof file) as text; panics if it is not one.
pub(crate) fn pprof_text(gzipped: &[u8]) -> String {
    let mut bytes = Vec::new();
    GzDecoder::new(gzipped)
        .read_to_end(&mut bytes)
        .expect("a pprof export is gzipped");
    let profile = proto::Profile::decode(&bytes[..]).expect("a pprof export is a profile.proto");
    let mut out = String::new();
    let printer = Printer { profile: &profile };
    printer.header(&mut out).unwrap();
    printer.mappings(&mut out).unwrap();
    printer.locations(&mut out).unwrap();
    printer.functions(&mut out).unwrap();
    printer.samples(&mut out).unwrap();
    out
}

/// The string table of `gzipped` (a pprof file): every name it holds.
pub(crate) fn pprof_strings(gzipped: &[u8]) -> Vec<String> {
    let mut bytes = Vec::new();
    GzDecoder::new(gzipped)
        .read_to_end(&mut bytes)
        .expect("a pprof export is gzipped");
    let profile = proto::Profile::decode(&bytes[..]).expect("a pprof export is a profile.proto");
    profile.string_table
}

struct Printer<'a> {
    profile: &'a proto::Profile,
}

impl Printer<'_> {
    /// String `index` of the table, quoted.
    fn text(&self, index: i64) -> String {
        let string = usize::try_from(index)
            .ok()
            .and_then(|i| self.profile.string_table.get(i));
        format!("{:?}", string.expect("a string-table index in range"))
    }

    fn value_type(&self, t: &proto::ValueType) -> String {
        format!("{}/{}", self.text(t.r#type), self.text(t.unit))
    }

    /// The sample types, the period, the times and the comments.
    fn header(&self, out: &mut String) -> std::fmt::Result {
        let p = self.profile;
        let types: Vec<String> = p.sample_type.iter().map(|t| self.value_type(t)).collect();
        writeln!(out, "sample types: {}", types.join(" "))?;
        writeln!(out, "default: {}", self.text(p.default_sample_type))?;
        let period_type = p.period_type.as_ref().map(|t| self.value_type(t));
        let period_type = period_type.unwrap_or_default();
        writeln!(out, "period: {} {period_type}", p.period)?;
        writeln!(
            out,
            "time: {} ns, for {} ns",
            p.time_nanos, p.duration_nanos
        )?;
        let comments: Vec<String> = p.comment.iter().map(|&c| self.text(c)).collect();
        writeln!(out, "comments: {}", comments.join(" "))?;
        writeln!(
            out,
            "drop frames: {}, keep frames: {}, doc url: {}",
            self.text(p.drop_frames),
            self.text(p.keep_frames),
            self.text(p.doc_url)
        )
    }

    fn mappings(&self, out: &mut String) -> std::fmt::Result {
        for m in &self.profile.mapping {
            let has = [
                (m.has_functions, "functions"),
                (m.has_filenames, "filenames"),
                (m.has_line_numbers, "lines"),
                (m.has_inline_frames, "inline frames"),
            ];
            let has: Vec<&str> = (has.iter()).filter(|(h, _)| *h).map(|(_, n)| *n).collect();
            writeln!(
                out,
                "mapping {}: {:#x}-{:#x} at file offset {:#x}: {} build id {}; has {}",
                m.id,
                m.memory_start,
                m.memory_limit,
                m.file_offset,
                self.text(m.filename),
                self.text(m.build_id),
                has.join(", ")
            )?;
        }
        Ok(())
    }

    fn locations(&self, out: &mut String) -> std::fmt::Result {
        for l in &self.profile.location {
            let lines: Vec<String> = (l.line.iter())
                .map(|line| format!("function {} line {}", line.function_id, line.line))
                .collect();
            let folded = if l.is_folded { " (folded)" } else { "" };
            writeln!(
                out,
                "location {}: mapping {} {:#x}{folded}: {}",
                l.id,
                l.mapping_id,
                l.address,
                lines.join(", ")
            )?;
        }
        Ok(())
    }

    fn functions(&self, out: &mut String) -> std::fmt::Result {
        for f in &self.profile.function {
            writeln!(
                out,
                "function {}: {} system name {} in {} from line {}",
                f.id,
                self.text(f.name),
                self.text(f.system_name),
                self.text(f.filename),
                f.start_line
            )?;
        }
        Ok(())
    }

    fn samples(&self, out: &mut String) -> std::fmt::Result {
        for s in &self.profile.sample {
            let labels: Vec<String> = (s.label.iter())
                .map(|l| match (l.str, l.num_unit) {
                    (0, 0) => format!("{}={}", self.text(l.key), l.num),
                    (0, unit) => format!("{}={} {}", self.text(l.key), l.num, self.text(unit)),
                    (string, _) => format!("{}={}", self.text(l.key), self.text(string)),
                })
                .collect();
            let labels = match labels.is_empty() {
                true => String::new(),
                false => format!(" labels {}", labels.join(" ")),
            };
            writeln!(
                out,
                "sample {:?} at locations {:?}{labels}",
                s.value, s.location_id
            )?;
        }
        Ok(())
    }
}
