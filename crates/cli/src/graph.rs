//! `barrier-check graph`: a test's operation graph (per-thread control flow
//! and thread-barrier-order) as DOT.

use crate::flags::ModelArgs;
use crate::inputs::{read_capped, Input, MAX_LITMUS_BYTES};
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
    /// `{"schema": 1, "nodes": [{thread, pc, statement, line, col,
    /// barrier}], "edges": [{from, to, kind: "po" | "tbo"}]}`.
    Json,
}

/// `graph`'s command line.
#[derive(clap::Args)]
pub struct GraphArgs {
    file: PathBuf,
    #[arg(long, value_enum, default_value = "dot")]
    format: GraphFormat,
    #[command(flatten)]
    model: ModelArgs,
    /// A `.ptx` or `.cu` file's launch (docs/ptx.md); a module of several
    /// entries needs `--entry`.
    #[command(flatten)]
    kernel: Box<crate::kernels::KernelArgs>,
    #[command(flatten)]
    project: crate::config::ConfigArgs,
}

impl GraphArgs {
    /// `graph` of one entry of a kernel file.
    fn kernel_graph(&self, model: Option<bc_models::Model>) -> io::Result<ExitCode> {
        let input = match crate::kernels::one_entry(&self.file, &self.kernel, model.as_ref()) {
            Ok(i) => i,
            Err(m) => {
                err(&format!("barrier-check: error: {m}\n"))?;
                return Ok(ExitCode::from(2));
            }
        };
        let input = &input;
        let result = match input {
            Input::Kernel(job) => {
                barrier_check::kernel::lower_kernel(job, model).map_err(|ds| (job.source.as_ref().clone(), ds))
            }
            Input::Failed(r) => Err((r.source.clone(), r.diagnostics.clone())),
            Input::Unreadable(p, e) => return usage_error(&format!("{}: {e}", p.display())),
            Input::File(_) | Input::Text(..) => return usage_error("not a kernel file"),
        };
        match result {
            Ok(p) => {
                let Input::Kernel(job) = input else {
                    unreachable!("only a kernel lowers here")
                };
                self.print(&p, &job.source)
            }
            Err((source, mut ds)) => {
                bc_report::diagnostic::cap(&mut ds);
                err(&bc_report::diagnostic::render_all(&source, &ds))?;
                Ok(ExitCode::from(2))
            }
        }
    }

    /// The graph of `p` (lowered from `source`) in the chosen format.
    fn print(&self, p: &bc_graph::Program, source: &bc_syntax::SourceFile) -> io::Result<ExitCode> {
        match self.format {
            GraphFormat::Dot => out(&bc_graph::dot::to_dot(p))?,
            GraphFormat::Json => out(&format!("{}\n", bc_report::wire::graph_json(p, source)))?,
        }
        Ok(ExitCode::SUCCESS)
    }

    /// `barrier-check graph FILE`: exit 2 when the file does not lower.
    pub fn run(self) -> io::Result<ExitCode> {
        let model = match self.model.load() {
            Ok(m) => m,
            Err(e) => return usage_error(&e),
        };
        let file = &self.file;
        if file.extension().is_some_and(|e| e == "ptx" || e == "cu") {
            return self.kernel_graph(model);
        }
        let bytes = match read_capped(file, MAX_LITMUS_BYTES) {
            Ok(b) => b,
            Err(e) => return usage_error(&format!("{}: {e}", file.display())),
        };
        // The project configuration's model, for a file with no `model` line.
        let config = match self.project.load() {
            Ok(c) => c,
            Err(e) => {
                err(&format!("{e}\n"))?;
                return Ok(ExitCode::from(2));
            }
        };
        let (source, result) = lower_bytes(&file.display().to_string(), &bytes, model, config.model);
        match result {
            Ok(p) => self.print(&p, &source),
            Err(ds) => {
                err(&bc_report::diagnostic::render_all(&source, &ds))?;
                Ok(ExitCode::from(2))
            }
        }
    }
}
