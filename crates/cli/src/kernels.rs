//! Kernel inputs of `check` (docs/ptx.md): `.ptx` files are read, `.cu`
//! files compiled to PTX by nvcc (`BC_NVCC`, else `nvcc` on `PATH`), each
//! file's header (`// barrier-check: FLAGS`, `// expect KINDS`) merged
//! with the command line's flags, and every entry becomes an input of its
//! own. The only place that runs nvcc for `check`.

use crate::inputs::{read_capped, Input, MAX_LITMUS_BYTES};
use barrier_check::kernel::{kernel_jobs, KernelFlags};
use bc_report::TestReport;
use bc_syntax::{Diagnostic, SourceFile};
use std::path::{Path, PathBuf};
use std::process::Command;

/// PTX and CUDA inputs may be larger than litmus files.
pub const MAX_KERNEL_BYTES: u64 = 16 * MAX_LITMUS_BYTES;

/// `check`'s launch flags for kernels.
#[derive(clap::Args, Clone, Debug, Default)]
#[command(next_help_heading = "Kernels (PTX and CUDA)")]
pub struct KernelArgs {
    /// Check only this entry of each PTX module (its PTX or source name).
    #[arg(long, value_name = "NAME")]
    entry: Option<String>,
    /// Threads per block of a kernel: X, XxY or XxYxZ [default: the
    /// kernel's .reqntid or .maxntid].
    #[arg(long, value_name = "X[xYxZ]", value_parser = bc_ptx::parse_dims)]
    block: Option<[u64; 3]>,
    /// Blocks of a kernel's grid: X, XxY or XxYxZ [default: 1].
    #[arg(long, value_name = "X[xYxZ]", value_parser = bc_ptx::parse_dims)]
    grid: Option<[u64; 3]>,
    /// Blocks per cluster (sm_90; 1-D): X [default: the kernel's
    /// .reqnctapercluster, else no clusters].
    #[arg(long, value_name = "X", value_parser = bc_ptx::parse_dims)]
    cluster: Option<[u64; 3]>,
    /// The kernel is launched cooperatively (cudaLaunchCooperativeKernel):
    /// all its blocks run together, and it may use grid sync.
    #[arg(long)]
    cooperative: bool,
    /// A kernel parameter's value (NAME: the parameter's index, `param_N`
    /// or its PTX name); repeatable. Unknown integer parameters stay
    /// unknown, and a result that depends on one is inconclusive.
    #[arg(long, value_name = "NAME=VALUE", value_parser = bc_ptx::parse_param)]
    param: Vec<(String, i64)>,
    /// The architecture nvcc compiles `.cu` files for [default: sm_80].
    #[arg(long, value_name = "sm_XX")]
    arch: Option<String>,
    /// Folders also yield their `*.cu` files (they always yield `*.litmus`
    /// and `*.ptx`).
    #[arg(long)]
    cu: bool,
    /// Keep every memory access of a kernel: by default the PTX front end
    /// leaves out the accesses of locations that no two threads share
    /// with a plain write, which cannot race (docs/ptx.md, "Values").
    #[arg(long)]
    no_prune: bool,
}

impl KernelArgs {
    /// The extensions of the files a folder yields.
    pub fn folder_kinds(&self) -> &'static [&'static str] {
        if self.cu {
            &["litmus", "ptx", "cu"]
        } else {
            &["litmus", "ptx"]
        }
    }

    fn flags(&self) -> KernelFlags {
        KernelFlags {
            entry: self.entry.clone(),
            block: self.block,
            grid: self.grid,
            cluster: self.cluster,
            params: self.param.clone(),
            arch: self.arch.clone(),
            // The command line's `--model` reaches `kernel_jobs` on its own.
            model: None,
            every_access: self.no_prune,
            cooperative: self.cooperative,
        }
    }
}

fn is_kernel(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "ptx" || e == "cu")
}

/// The inputs with every kernel file replaced by its entries, in order.
/// Up to `jobs` kernel files are read (and compiled by nvcc) side by side,
/// on the one worker pool (`schedule.rs`).
pub fn expand(inputs: Vec<Input>, args: &KernelArgs, model: Option<&bc_models::Model>, jobs: usize) -> Vec<Input> {
    let flags = args.flags();
    let kernels: Vec<(usize, &Path)> = inputs
        .iter()
        .enumerate()
        .filter_map(|(i, input)| match input {
            Input::File(p) if is_kernel(p) => Some((i, p.as_path())),
            _ => None,
        })
        .collect();
    let mut done: Vec<Option<Vec<Input>>> = (0..inputs.len()).map(|_| None).collect();
    let work = |&(_, p): &(usize, &Path)| kernel_inputs(p, &flags, model);
    let _ = barrier_check::schedule::side_by_side(&kernels, jobs.max(1), work, |k, entries| {
        done[kernels[k].0] = Some(entries);
        Ok::<(), std::convert::Infallible>(())
    });
    let mut out = Vec::new();
    for (input, entries) in inputs.into_iter().zip(done) {
        match entries {
            Some(entries) => out.extend(entries),
            None => out.push(input),
        }
    }
    out
}

/// The one input of `file` for a command that takes one test (`explain`,
/// `graph`): a kernel file expanded to its entries must have exactly one
/// (else the message naming them, for `--entry`).
pub fn one_entry(file: &Path, args: &KernelArgs, model: Option<&bc_models::Model>) -> Result<Input, String> {
    let mut inputs = expand(vec![Input::File(file.to_path_buf())], args, model, 1);
    if inputs.len() == 1 {
        return Ok(inputs.remove(0));
    }
    let names: Vec<&str> = (inputs.iter())
        .filter_map(|i| match i {
            // `FILE::ENTRY` (a file name holds no `::`).
            Input::Kernel(job) => Some(job.test.split_once("::").map_or(job.test.as_str(), |(_, e)| e)),
            _ => None,
        })
        .collect();
    Err(format!(
        "{}: {} entries ({}); pick one with --entry",
        file.display(),
        inputs.len(),
        names.join(", ")
    ))
}

/// The report of a kernel file that cannot be checked, named after it.
fn failed(source: SourceFile, diags: Vec<Diagnostic>) -> Vec<Input> {
    let mut r = TestReport::bare(source, diags);
    r.test = Some(r.source.name.rsplit('/').next().unwrap_or_default().to_string());
    vec![Input::Failed(Box::new(r))]
}

fn kernel_inputs(path: &Path, cli: &KernelFlags, model: Option<&bc_models::Model>) -> Vec<Input> {
    let name = path.display().to_string();
    let text = match read_capped(path, MAX_KERNEL_BYTES)
        .and_then(|b| String::from_utf8(b).map_err(|_| "not UTF-8 text".to_string()))
    {
        Ok(t) => t,
        Err(e) => return vec![Input::Unreadable(path.to_path_buf(), e)],
    };
    let header = bc_ptx::header(&text);
    let own = SourceFile::new(name.clone(), text.clone());
    if !header.errors.is_empty() {
        return failed(own, header.errors);
    }
    // The file's header flags; the command line's apply over them (and
    // over each entry's own, in `kernel_jobs`).
    let flags = match KernelFlags::parse(&header.args) {
        Ok(f) => f,
        Err(e) => {
            return failed(
                own,
                vec![Diagnostic::file_error(format!(
                    "in the `// barrier-check:` header: {e}"
                ))],
            )
        }
    };
    let file = path
        .file_name()
        .map_or(name.clone(), |f| f.to_string_lossy().into_owned());
    let cu = path.extension().is_some_and(|e| e == "cu");
    let source = if cu {
        let arch = (cli.arch.clone().or_else(|| flags.arch.clone())).unwrap_or_else(|| "sm_80".into());
        match compile(path, &arch) {
            Ok(ptx) => {
                // Reports that point into files (SARIF) point into the `.cu`.
                let origin = bc_ptx::origin(&ptx, own.clone()).map(std::sync::Arc::new);
                let mut source = SourceFile::new(format!("{name}.ptx"), ptx);
                source.origin = origin;
                source
            }
            Err(d) => return failed(own, vec![d]),
        }
    } else {
        own
    };
    match kernel_jobs(source, &file, &flags, cli, model.cloned(), &header, !cu) {
        Ok(jobs) => jobs.into_iter().map(|j| Input::Kernel(Box::new(j))).collect(),
        Err(r) => vec![Input::Failed(r)],
    }
}

/// How to get a CUDA compiler, for the error when there is none.
pub const NVCC_HINT: &str = "pip install nvidia-cuda-nvcc nvidia-cuda-runtime nvidia-cuda-cccl (in a venv)";
/// Where that nvcc is, and the recipe that does both.
pub const NVCC_WHERE: &str =
    "e.g. in .venv-cuda: BC_NVCC=.venv-cuda/lib/python3*/site-packages/nvidia/cu13/bin/nvcc; `just cuda`";

/// The nvcc to run: `BC_NVCC`, else `nvcc` on `PATH`.
pub fn nvcc() -> Result<PathBuf, Diagnostic> {
    let none = |why: String| {
        Diagnostic::file_error(format!("no CUDA compiler: {why}"))
            .with_note(NVCC_HINT)
            .with_note(NVCC_WHERE)
    };
    if let Some(p) = std::env::var_os("BC_NVCC").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(none(format!("BC_NVCC={} is not a file", p.display())))
        };
    }
    std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join("nvcc"))
                .find(|p| p.is_file())
        })
        .ok_or_else(|| none("BC_NVCC is not set and no nvcc is on PATH".into()))
}

/// nvcc's PTX for a `.cu` file (`-ptx -lineinfo -arch=ARCH -o -`).
pub fn compile(cu: &Path, arch: &str) -> Result<String, Diagnostic> {
    let nvcc = nvcc()?;
    let fail = |m: String| Diagnostic::file_error(m);
    let out = Command::new(&nvcc)
        .args(["-ptx", "-lineinfo", &format!("-arch={arch}"), "-o", "-"])
        .arg(cu)
        .output()
        .map_err(|e| fail(format!("{}: {e}", nvcc.display())))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = stderr.lines().take(20).collect();
        return Err(fail(format!("nvcc failed ({})", out.status)).with_note(tail.join("\n")));
    }
    String::from_utf8(out.stdout).map_err(|_| fail("nvcc wrote output that is not UTF-8".into()))
}
