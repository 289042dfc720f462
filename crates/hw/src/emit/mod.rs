//! `barrier-check emit cuda`: one self-contained CUDA program per litmus
//! test of a CUDA model (docs/hardware.md, "Mapping"). The program runs the
//! test `ITERATIONS` times with randomised start delays, copies out exactly
//! the values [`bc_graph::Program::observables`] names after each run,
//! histograms them on the host, and prints one JSON object (schema 1) on
//! stdout; a watchdog ends it with `"hung": true` when a run outlives
//! `TIMEOUT_MS`.
//!
//! With `--kernel-only` it writes the kernel alone, for the PTX front end
//! (the round trip of issue 35).
//!
//! The emitter refuses (a [`Refusal`] with the reason) every construct it
//! cannot map exactly, rather than emit something approximate.

mod forms;
mod plan;
mod text;

pub use plan::Mapping;

use bc_graph::Program;
use bc_syntax::Litmus;

/// One emitted harness.
#[derive(Clone, Debug)]
pub struct CudaProgram {
    /// The litmus test's name.
    pub test: String,
    pub mapping: Mapping,
    /// The nvcc command line that builds it (also the file's first line).
    pub nvcc: String,
    /// The `.cu` text.
    pub source: String,
}

/// Why a test is not emitted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal(pub String);

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Builds the harness of `prog` (lowered from `lit`); `stem` names the
/// file (`STEM.cu`, built into `./STEM`) in the nvcc line.
pub fn emit_cuda(lit: &Litmus, prog: &Program, stem: &str) -> Result<CudaProgram, Refusal> {
    emit_cuda_for(lit, prog, stem, "sm_90")
}

/// [`emit_cuda`] for GPU architecture `arch` (`sm_80`, `sm_90`, ...: the
/// nvcc line's `-arch`). A test under a model of a later architecture than
/// `arch` is refused: every CUDA model but `cuda-sm80` has the sm_90 forms
/// (clusters, TMA, `fence.proxy.async`), which an sm_80 build cannot
/// compile.
pub fn emit_cuda_for(lit: &Litmus, prog: &Program, stem: &str, arch: &str) -> Result<CudaProgram, Refusal> {
    let Some(n) = arch.strip_prefix("sm_").and_then(|n| n.parse::<u32>().ok()) else {
        return refuse(format!(
            "`--arch {arch}`: an architecture is `sm_` and a number (`sm_80`, `sm_90`)"
        ));
    };
    if n < 70 {
        return refuse(format!(
            "`--arch {arch}`: the harness needs sm_70 or later (independent thread scheduling)"
        ));
    }
    let m = &prog.model;
    let sm80 = m.name == "cuda-sm80" || m.base.as_deref() == Some("cuda-sm80");
    if n < 90 && !sm80 {
        return refuse(format!(
            "model `{}` is an sm_90 model, which `--arch {arch}` cannot build: check the test under `cuda-sm80` or emit for sm_90",
            m.name
        ));
    }
    let plan = plan::Plan::new(lit, prog, false)?;
    let (nvcc, source) = text::program(&plan, stem, arch)?;
    Ok(CudaProgram {
        test: prog.test.clone(),
        mapping: plan.mapping,
        nvcc,
        source,
    })
}

/// The kernel alone (`emit cuda --kernel-only`), for checking through
/// nvcc's PTX: the file carries its launch and the test's `expect` in the
/// header `check` reads (docs/ptx.md, "The round trip").
pub fn emit_kernel_only(lit: &Litmus, prog: &Program, stem: &str) -> Result<CudaProgram, Refusal> {
    let plan = plan::Plan::new(lit, prog, true)?;
    let (nvcc, source) = text::kernel_only(&plan, stem)?;
    Ok(CudaProgram {
        test: prog.test.clone(),
        mapping: plan.mapping,
        nvcc,
        source,
    })
}

/// Shorthand for a refusal.
pub(crate) fn refuse<T>(why: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal(why.into()))
}

/// `DIR/manifest.json`: `{"schema":1,"emitted":[...],"skipped":[...]}`,
/// in the wire types `hw run` reads it with.
pub fn manifest(emitted: Vec<crate::observed::Emitted>, skipped: Vec<crate::observed::Skipped>) -> String {
    let m = crate::observed::Manifest {
        schema: crate::observed::SCHEMA,
        emitted,
        skipped,
    };
    let mut s = serde_json::to_string_pretty(&m).unwrap_or_default();
    s.push('\n');
    s
}
