//! `barrier-check emit`: a program per test for running it on hardware
//! (docs/hardware.md): `emit cuda` writes a CUDA harness per CUDA-model
//! test and a manifest of what was emitted and skipped.

use crate::inputs::{collect, read_capped, Input, MAX_LITMUS_BYTES};
use crate::output::{err, usage_error, write_file};
use barrier_check::lower_bytes;
use clap::Subcommand;
use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What `emit` writes.
#[derive(Subcommand)]
pub enum EmitTarget {
    /// A self-contained CUDA program (`DIR/NAME.cu`) per CUDA-model test,
    /// and DIR/manifest.json listing what was emitted and what was skipped
    /// and why (directories are searched for *.litmus).
    Cuda(CudaArgs),
}

/// `emit cuda`'s command line.
#[derive(clap::Args)]
pub struct CudaArgs {
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// The output folder (created if missing).
    #[arg(
        short = 'o',
        long = "output",
        visible_alias = "out",
        value_name = "DIR",
        required = true
    )]
    out: PathBuf,
    /// The kernel alone, for `check --cu DIR` (no harness): no start
    /// delays, observation or host side; each file's header carries its
    /// launch and the litmus test's `expect` (docs/ptx.md, "The round
    /// trip").
    #[arg(long)]
    kernel_only: bool,
    /// The GPU architecture the harness is built for (the `-arch` of its
    /// nvcc line): `sm_90` (H100/H200) by default, `sm_80` for an A100,
    /// which builds only tests under `cuda-sm80` (the others are skipped
    /// with the reason). A kernel-only file takes its model's.
    #[arg(long, value_name = "sm_XX", default_value = "sm_90")]
    arch: String,
}

impl EmitTarget {
    /// `barrier-check emit TARGET`.
    pub fn run(self) -> io::Result<ExitCode> {
        match self {
            EmitTarget::Cuda(a) => emit_cuda(&a.paths, &a.out, a.kernel_only, &a.arch),
        }
    }
}

/// `emit cuda`: one `.cu` per CUDA-model test; the rest are skipped with a
/// reason (stderr and the manifest). Exit 2 when an input is unreadable or
/// does not parse, else 0.
fn emit_cuda(paths: &[PathBuf], dir: &Path, kernel_only: bool, arch: &str) -> io::Result<ExitCode> {
    use bc_hw::observed::{Emitted, Skipped};
    if let Err(e) = std::fs::create_dir_all(dir) {
        return usage_error(&format!("{}: {e}", dir.display()));
    }
    let mut emitted = Vec::new();
    let mut skipped = Vec::new();
    let mut stems = std::collections::HashSet::new();
    let mut bad = false;
    for input in collect(paths) {
        let file = match input {
            Input::File(f) => f,
            Input::Unreadable(p, why) => {
                err(&format!("barrier-check: error: {}: {why}\n", p.display()))?;
                bad = true;
                continue;
            }
            // `collect` lists litmus files only.
            Input::Kernel(_) | Input::Failed(_) | Input::Text(..) => continue,
        };
        let name = file.display().to_string();
        let bytes = match read_capped(&file, MAX_LITMUS_BYTES) {
            Ok(b) => b,
            Err(e) => {
                err(&format!("barrier-check: error: {name}: {e}\n"))?;
                bad = true;
                continue;
            }
        };
        let (source, result) = lower_bytes(&name, &bytes, None, None);
        let prog = match result {
            Ok(p) => p,
            Err(ds) => {
                err(&bc_report::diagnostic::render_all(&source, &ds))?;
                bad = true;
                continue;
            }
        };
        let (lit, _) = bc_syntax::parse(&source.text);
        // A file name, told apart from another folder's file of that name.
        let base: String = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let mut stem = base.clone();
        let mut n = 1;
        while !stems.insert(stem.clone()) {
            n += 1;
            stem = format!("{base}-{n}");
        }
        let emitted_program = if kernel_only {
            bc_hw::emit::emit_kernel_only(&lit, &prog, &stem)
        } else {
            bc_hw::emit::emit_cuda_for(&lit, &prog, &stem, arch)
        };
        match emitted_program {
            Ok(p) => {
                let cu = format!("{stem}.cu");
                if let Err(e) = write_file(&dir.join(&cu), p.source.as_bytes()) {
                    return usage_error(&format!("{}: {e}", dir.join(&cu).display()));
                }
                emitted.push(Emitted {
                    file: name,
                    cu,
                    test: p.test,
                    mapping: Some(p.mapping.name().to_string()),
                    nvcc: Some(p.nvcc),
                });
            }
            Err(r) => {
                stems.remove(&stem);
                err(&format!("skipped {name}: {r}\n"))?;
                skipped.push(Skipped {
                    file: name,
                    reason: r.0,
                });
            }
        }
    }
    let manifest = dir.join("manifest.json");
    let counts = (emitted.len(), skipped.len());
    if let Err(e) = write_file(&manifest, bc_hw::emit::manifest(emitted, skipped).as_bytes()) {
        return usage_error(&format!("{}: {e}", manifest.display()));
    }
    err(&format!(
        "emitted {} program(s), skipped {} test(s); manifest: {}\n",
        counts.0,
        counts.1,
        manifest.display()
    ))?;
    Ok(ExitCode::from(if bad { 2 } else { 0 }))
}
