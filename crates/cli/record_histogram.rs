//! `record --histogram`'s flags: checked before the kernel is asked for
//! anything, then, once the command's program is known, turned into the
//! histograms' options (regions of the program in file offsets).

use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use profiler_histogram::{BucketWidth, Flags, HistogramConfig, OnFull, Scale};
use profiler_model::{FileOffset, HistogramOptions, ProgramRegion, Svma};

use crate::args::HistogramArgs;

/// The histogram flags, checked.
pub(crate) struct HistogramRequest {
    config: HistogramConfig,
    scale: Scale,
    regions: Vec<RegionRequest>,
}

/// `START:END[:SCALE]`: stated addresses of the program, END excluded.
struct RegionRequest {
    given: String,
    start: u64,
    end: u64,
    scale: Scale,
}

impl HistogramRequest {
    /// Checks the flags of `--histogram`, if it was given.
    pub(crate) fn check(args: &HistogramArgs) -> Result<Option<HistogramRequest>> {
        if !args.histogram {
            return Ok(None);
        }
        let width = BucketWidth::from_bits(args.bucket).context("--bucket")?;
        let scale = Scale::new(args.scale).context("--scale")?;
        let regions = (args.regions.iter())
            .map(|text| RegionRequest::parse(text, scale))
            .collect::<Result<_>>()?;
        let on_full = match args.wrap {
            true => OnFull::Wrap,
            false => OnFull::Saturate,
        };
        let flags = Flags {
            random: args.random,
            compress: args.compress,
            weighted: args.weighted,
        };
        Ok(Some(HistogramRequest {
            config: HistogramConfig {
                width,
                on_full,
                flags,
                overflow_bin: false,
            },
            scale,
            regions,
        }))
    }

    /// The histograms' options for a command whose program is `program`
    /// (as the recorder resolved it), which the regions are of.
    pub(crate) fn options(self, program: Option<String>) -> Result<HistogramOptions> {
        let program_regions = match (self.regions.is_empty(), &program) {
            (true, _) => Vec::new(),
            (false, None) => {
                bail!("--region needs the command's executable, which could not be resolved")
            }
            (false, Some(path)) => (self.regions.into_iter())
                .map(|region| region.in_file(Path::new(path)))
                .collect::<Result<_>>()?,
        };
        Ok(HistogramOptions {
            config: self.config,
            scale: self.scale,
            program_regions,
            program,
        })
    }
}

impl RegionRequest {
    /// Parses `START:END[:SCALE]` (hexadecimal stated addresses).
    fn parse(text: &str, default_scale: Scale) -> Result<RegionRequest> {
        let bad = || {
            anyhow!(
                "--region {text}: expected START:END[:SCALE], e.g. 0x1130:0x1200 or \
                 0x1130:0x1200:131072"
            )
        };
        let parts: Vec<&str> = text.split(':').collect();
        let address =
            |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).map_err(|_| bad());
        let (start, end) = match parts.as_slice() {
            [start, end] | [start, end, _] => (address(start)?, address(end)?),
            _ => return Err(bad()),
        };
        let scale = match parts.get(2) {
            Some(scale) => Scale::new(scale.parse().map_err(|_| bad())?)
                .with_context(|| format!("--region {text}"))?,
            None => default_scale,
        };
        if end <= start {
            bail!("--region {text}: the end must lie after the start");
        }
        Ok(RegionRequest {
            given: text.to_owned(),
            start,
            end,
            scale,
        })
    }

    /// The region in file offsets of `program`, which must hold it in one
    /// loadable segment.
    fn in_file(self, program: &Path) -> Result<ProgramRegion> {
        let text = &self.given;
        let (start, end) = (self.start, self.end);
        let offsets = profiler_symbols::file_offsets(program, &[Svma(start), Svma(end - 1)])
            .with_context(|| format!("--region {text}"))?;
        match offsets.as_slice() {
            [Some(first), Some(last)] if last.0 - first.0 == end - 1 - start => Ok(ProgramRegion {
                start: FileOffset(first.0),
                size: end - start,
                scale: self.scale,
                given: self.given,
            }),
            _ => bail!(
                "--region {text}: {} does not hold that range in one loadable segment; give \
                 addresses as `nm` or `objdump -d` print them",
                program.display()
            ),
        }
    }
}
