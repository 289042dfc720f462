//! `barrier-check graph`: a test's operation graph (per-thread control flow
//! and thread-barrier-order) as DOT.

use crate::flags::ModelArgs;
use crate::inputs::{read_capped, MAX_LITMUS_BYTES};
use crate::output::{err, out, usage_error};
use barrier_check::lower_bytes;
use clap::ValueEnum;
use std::io;
use std::path::PathBuf;
use std::process::ExitCode;

/// `graph`'s output formats.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GraphFormat {
    Dot,
}

/// `graph`'s command line.
#[derive(clap::Args)]
pub struct GraphArgs {
    file: PathBuf,
    #[arg(long, value_enum, default_value = "dot")]
    format: GraphFormat,
    #[command(flatten)]
    model: ModelArgs,
}

impl GraphArgs {
    /// `barrier-check graph FILE`: exit 2 when the file does not lower.
    pub fn run(self) -> io::Result<ExitCode> {
        let GraphFormat::Dot = self.format;
        let model = match self.model.load() {
            Ok(m) => m,
            Err(e) => return usage_error(&e),
        };
        let file = &self.file;
        let bytes = match read_capped(file, MAX_LITMUS_BYTES) {
            Ok(b) => b,
            Err(e) => return usage_error(&format!("{}: {e}", file.display())),
        };
        let (source, result) = lower_bytes(&file.display().to_string(), &bytes, model);
        match result {
            Ok(p) => {
                out(&bc_graph::dot::to_dot(&p))?;
                Ok(ExitCode::SUCCESS)
            }
            Err(ds) => {
                err(&bc_report::diagnostic::render_all(&source, &ds))?;
                Ok(ExitCode::from(2))
            }
        }
    }
}
