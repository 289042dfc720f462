//! `barrier-check hw run` and `hw compare` (docs/hardware.md): the files,
//! processes and environment of holding verdicts against a GPU. The
//! decisions (compile plans, time limits, what a process's end means, the
//! comparison) are bc-hw's; this module only reads, spawns and writes.

use crate::{
    check_files, err, jobs_or_cores, out, parse_count, parse_jobs, parse_secs, read_capped, usage_error, Input,
};
use barrier_check::CheckOptions;
use bc_hw::compare::{self, Allowed, Comparison, Observed, Row, Table};
use bc_hw::observed::{self, Emitted, Run, Sanitizer};
use bc_hw::runner::{self, End, Finished};
use bc_report::TestReport;
use bc_syntax::FindingKind;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Caps on what is read: a manifest or an observation record, and a
/// program's or tool's output (kept up to this much, the rest drained).
const MAX_MANIFEST_BYTES: u64 = 16 << 20;
const MAX_OBSERVED_BYTES: u64 = 64 << 20;
const MAX_OUTPUT_BYTES: u64 = 16 << 20;
/// nvcc gets this long per program.
const COMPILE_LIMIT: Duration = Duration::from_secs(600);

/// How `hw run` runs (its command-line arguments).
#[derive(clap::Args)]
pub struct RunArgs {
    /// The folder `emit cuda -o` wrote (with its manifest.json).
    pub dir: PathBuf,
    /// Iterations per test.
    #[arg(long, default_value_t = 1000, value_parser = parse_count)]
    pub iterations: u64,
    /// The seed every program gets (start delays, schedules).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// A program's own deadline, in ms: an iteration that misses it is
    /// a hang (the runner kills the process 10 s after it).
    #[arg(long, default_value_t = 2000, value_parser = parse_count)]
    pub timeout_ms: u64,
    /// Programs compiled and run side by side [default: every core].
    #[arg(long, value_name = "N", value_parser = parse_jobs)]
    pub jobs: Option<usize>,
    /// Also run each program under compute-sanitizer synccheck and
    /// racecheck (few iterations).
    #[arg(long)]
    pub sanitizer: bool,
    /// Iterations of a program under compute-sanitizer.
    #[arg(long, default_value_t = 10, value_parser = parse_count)]
    pub sanitizer_iterations: u64,
    /// Time limit of one compute-sanitizer run, in seconds.
    #[arg(long, value_name = "SECS", default_value = "120", value_parser = parse_secs)]
    pub sanitizer_timeout: Duration,
    /// The runner's watchdog margin over --timeout-ms (for tests).
    #[arg(long, hide = true, default_value_t = bc_hw::runner::MARGIN_MS)]
    pub margin_ms: u64,
    /// Where to write the observations.
    #[arg(short, long, value_name = "OBSERVED.json")]
    pub output: PathBuf,
}

/// A CUDA tool: found on `PATH`, else under `$CUDA_HOME/bin` or
/// `/usr/local/cuda/bin` (where the toolkit installs and `PATH` often
/// does not look).
fn find_tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    if let Some(home) = std::env::var_os("CUDA_HOME") {
        dirs.push(PathBuf::from(home).join("bin"));
    }
    dirs.push(PathBuf::from("/usr/local/cuda/bin"));
    dirs.into_iter().map(|d| d.join(name)).find(|p| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// Reads a pipe to its end, keeping the first [`MAX_OUTPUT_BYTES`].
fn drain(mut r: impl Read) -> String {
    let mut kept = Vec::new();
    let _ = (&mut r).take(MAX_OUTPUT_BYTES).read_to_end(&mut kept);
    let _ = io::copy(&mut r, &mut io::sink());
    String::from_utf8_lossy(&kept).into_owned()
}

/// Kills process group `pgid` (a program and whatever it started).
fn kill_group(pgid: u32) {
    if let Ok(id) = i32::try_from(pgid) {
        // SAFETY: kill(2) takes plain integers; the group is one this
        // process started, and its leader is not yet reaped or has just
        // been (so the id is not reused).
        unsafe {
            libc::kill(-id, libc::SIGKILL);
        }
    }
}

/// Runs `cmd` in its own process group with `limit`: past it, the whole
/// group is killed (a hang costs this process only; the GPU is never
/// reset: ending the process ends its CUDA context and its kernels).
fn run_limited(mut cmd: Command, limit: Duration) -> Finished {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return Finished {
                end: End::NotStarted,
                stdout: String::new(),
                stderr: e.to_string(),
            }
        }
    };
    let pid = child.id();
    let stdout = child.stdout.take().map(|p| std::thread::spawn(move || drain(p)));
    let stderr = child.stderr.take().map(|p| std::thread::spawn(move || drain(p)));
    let start = Instant::now();
    let end = loop {
        match child.try_wait() {
            Ok(Some(st)) => {
                break match (st.code(), st.signal()) {
                    (Some(c), _) => End::Exited(c),
                    (None, Some(s)) => End::Signalled(s),
                    (None, None) => End::Exited(-1),
                }
            }
            Ok(None) if start.elapsed() < limit => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                kill_group(pid);
                let _ = child.kill();
                let _ = child.wait();
                break End::Killed(limit);
            }
        }
    };
    // Something the program started may still hold its pipes: give it a
    // moment, then end the group.
    let deadline = Instant::now() + Duration::from_secs(2);
    let finished = |h: &Option<std::thread::JoinHandle<String>>| h.as_ref().is_none_or(|h| h.is_finished());
    while !(finished(&stdout) && finished(&stderr)) {
        if Instant::now() > deadline {
            kill_group(pid);
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let join = |h: Option<std::thread::JoinHandle<String>>| h.and_then(|h| h.join().ok()).unwrap_or_default();
    Finished {
        end,
        stdout: join(stdout),
        stderr: join(stderr),
    }
}

/// The GPU's name from `nvidia-smi`, or `unknown`.
fn device_name() -> String {
    let Some(smi) = find_tool("nvidia-smi") else {
        return "unknown".into();
    };
    let mut cmd = Command::new(smi);
    cmd.args(["--query-gpu=name", "--format=csv,noheader"]);
    let f = run_limited(cmd, Duration::from_secs(20));
    match f.end {
        End::Exited(0) => f
            .stdout
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("unknown")
            .to_string(),
        _ => "unknown".into(),
    }
}

/// Compiles, runs and (with `--sanitizer`) sanitizes one program.
fn run_one(e: &Emitted, dir: &Path, nvcc: &Path, sanitizer: Option<&Path>, a: &RunArgs) -> Run {
    let cu = dir.join(&e.cu);
    let text = match read_capped(&cu, MAX_MANIFEST_BYTES) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(why) => return runner::compile_failed(e, a.iterations, format!("{}: {why}", cu.display())),
    };
    let plan = match runner::compile_plan(&e.cu, &text) {
        Ok(p) => p,
        Err(why) => return runner::compile_failed(e, a.iterations, why),
    };
    let mut cmd = Command::new(nvcc);
    cmd.args(&plan.args).current_dir(dir);
    if let Some(why) = runner::compile_error(&run_limited(cmd, COMPILE_LIMIT)) {
        return runner::compile_failed(e, a.iterations, why);
    }
    let binary = dir.join(&plan.binary);
    let program = |iterations: u64, timeout_ms: u64| [iterations, a.seed, timeout_ms].map(|n| n.to_string());
    let mut cmd = Command::new(&binary);
    cmd.args(program(a.iterations, a.timeout_ms)).current_dir(dir);
    let limit = runner::process_limit(a.timeout_ms, a.iterations, a.margin_ms);
    let mut run = runner::run_record(e, a.iterations, &run_limited(cmd, limit));
    if let Some(tool) = sanitizer {
        let timeout = runner::sanitizer_program_timeout(a.timeout_ms, a.sanitizer_timeout);
        let check = |name: &str| {
            let mut cmd = Command::new(tool);
            cmd.args(["--tool", name])
                .arg(&binary)
                .args(program(a.sanitizer_iterations, timeout))
                .current_dir(dir);
            let f = run_limited(cmd, a.sanitizer_timeout);
            runner::sanitizer_report(&format!("{}\n{}", f.stdout, f.stderr), f.end)
        };
        run.sanitizer = Some(Sanitizer {
            synccheck: check("synccheck"),
            racecheck: check("racecheck"),
        });
    }
    run
}

/// A one-line account of a run, for the progress lines on stderr.
fn run_line(r: &Run) -> String {
    if r.compile_error.is_some() {
        return "compile error".into();
    }
    let mut s = format!(
        "{}/{} completed, {} distinct",
        r.completed,
        r.iterations,
        r.outcomes.len()
    );
    if r.hung {
        s += ", hung";
    }
    if r.cuda_error.is_some() {
        s += ", cuda error";
    }
    if let Some(san) = &r.sanitizer {
        let n = |t: &observed::ToolReport| t.errors.map_or("?".into(), |n| n.to_string());
        s += &format!(", synccheck {} racecheck {}", n(&san.synccheck), n(&san.racecheck));
    }
    s
}

/// `barrier-check hw run DIR -o OBSERVED.json`.
pub fn run(a: &RunArgs) -> io::Result<ExitCode> {
    let manifest_path = a.dir.join("manifest.json");
    let manifest = match read_capped(&manifest_path, MAX_MANIFEST_BYTES)
        .and_then(|b| String::from_utf8(b).map_err(|_| "not UTF-8 text".to_string()))
        .and_then(|t| observed::parse_manifest(&t))
    {
        Ok(m) => m,
        Err(e) => return usage_error(&format!("{}: {e}", manifest_path.display())),
    };
    let Some(nvcc) = find_tool("nvcc") else {
        return usage_error(
            "nvcc not found (on PATH, in $CUDA_HOME/bin or /usr/local/cuda/bin): \
             `hw run` compiles the harnesses with the CUDA toolkit",
        );
    };
    let sanitizer = if a.sanitizer {
        match find_tool("compute-sanitizer") {
            Some(s) => Some(s),
            None => {
                return usage_error(
                    "compute-sanitizer not found (on PATH, in $CUDA_HOME/bin or /usr/local/cuda/bin): \
                     `--sanitizer` runs it",
                )
            }
        }
    } else {
        None
    };
    let dir = match std::fs::canonicalize(&a.dir) {
        Ok(d) => d,
        Err(e) => return usage_error(&format!("{}: {e}", a.dir.display())),
    };
    for s in &manifest.skipped {
        err(&format!("skipped  {}: {}\n", s.file, s.reason))?;
    }
    let device = device_name();
    let jobs = jobs_or_cores(a.jobs)?;
    let total = manifest.emitted.len();
    let runs: Mutex<Vec<Option<Run>>> = Mutex::new(vec![None; total]);
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(total).max(1) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(e) = manifest.emitted.get(i) else { break };
                let r = run_one(e, &dir, &nvcc, sanitizer.as_deref(), a);
                let k = done.fetch_add(1, Ordering::Relaxed) + 1;
                let _ = err(&format!("[{k}/{total}] {}: {}\n", e.file, run_line(&r)));
                runs.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(r);
            });
        }
    });
    let runs: Vec<Run> = runs
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .flatten()
        .collect();
    let hung = runs.iter().filter(|r| r.hung).count();
    let failed = runs.iter().filter(|r| r.compile_error.is_some()).count();
    let record = observed::Observed {
        schema: observed::SCHEMA,
        device,
        iterations: a.iterations,
        seed: a.seed,
        runs,
    };
    if let Err(e) = std::fs::write(&a.output, observed::to_json(&record)) {
        return usage_error(&format!("{}: {e}", a.output.display()));
    }
    err(&format!(
        "{total} programs on {}: {failed} did not compile, {hung} hung; wrote {}\n",
        record.device,
        a.output.display()
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// What the model allows of a checked test: its outcome set (`check
/// --outcomes`) and the verdict's non-terminating and UB findings.
fn allowed_of(r: &TestReport) -> Result<Allowed, String> {
    let Some(o) = &r.outcome else {
        let why = r
            .diagnostics
            .first()
            .map_or("it does not check".into(), |d| d.message.clone());
        return Err(format!("{}: {why}", r.source.name));
    };
    let verdict = o.verdict();
    // The model's final outcomes, named as the harness names them (both
    // read `Program::observables`).
    let finals = o.outcomes.as_ref().map(|set| {
        let mut finals = std::collections::BTreeMap::new();
        for class in &set.classes {
            if let bc_explore::OutcomeKind::Final(values) = &class.kind {
                let f = compare::final_of(set.observables.iter().cloned().zip(values.iter().copied()));
                *finals.entry(f).or_insert(0) += class.executions;
            }
        }
        finals
    });
    Ok(Allowed {
        finals,
        deadlock: verdict.contains(&FindingKind::Deadlock),
        nontermination: verdict.contains(&FindingKind::Nontermination),
        ub_or_race: verdict
            .iter()
            .any(|k| matches!(k, FindingKind::Ub(_) | FindingKind::Race)),
        complete: o.stop == bc_explore::Stop::Exhausted && o.internal_errors.is_empty(),
    })
}

/// One run's row: its litmus file's verdict and allowed outcomes against
/// what the device showed.
fn row_of(run: &Run, report: &TestReport) -> Row {
    let seen = Observed::of_run(run);
    let (verdict, findings) = if report.is_error() {
        ("error".to_string(), Vec::new())
    } else {
        let v = report.verdict();
        (bc_report::verdict_text(&v), v.iter().map(ToString::to_string).collect())
    };
    let allowed = allowed_of(report);
    let comparison = match &allowed {
        Ok(a) => compare::compare(a, &seen),
        Err(why) => Comparison::error(why.clone()),
    };
    Row {
        file: run.file.clone(),
        test: run.test.clone(),
        mapping: run.mapping.clone(),
        verdict,
        findings,
        allowed: allowed.ok(),
        observed: seen,
        comparison,
    }
}

/// `hw compare` output formats.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompareFormat {
    Text,
    Json,
    /// A markdown table, for docs/hardware.md.
    Markdown,
}

/// `barrier-check hw compare OBSERVED.json`: exit 1 when a test is
/// UNSOUND, 2 when the record or a test could not be read or checked.
pub fn compare(path: &Path, format: CompareFormat, jobs: Option<usize>) -> io::Result<ExitCode> {
    let record = match read_capped(path, MAX_OBSERVED_BYTES)
        .and_then(|b| String::from_utf8(b).map_err(|_| "not UTF-8 text".to_string()))
        .and_then(|t| observed::parse_observed(&t))
    {
        Ok(r) => r,
        Err(e) => return usage_error(&format!("{}: {e}", path.display())),
    };
    // Every file once, checked side by side, in the record's order.
    let mut files: Vec<String> = record.runs.iter().map(|r| r.file.clone()).collect();
    files.sort();
    files.dedup();
    let inputs: Vec<Input> = files.iter().map(|f| Input::File(PathBuf::from(f))).collect();
    let opts = CheckOptions {
        search: bc_explore::SearchOptions {
            jobs: jobs_or_cores(jobs)?,
            outcomes: true,
            ..bc_explore::SearchOptions::default()
        },
        ..CheckOptions::default()
    };
    let reports = check_files(&inputs, &opts, |_| Ok(()))?;
    let rows = record
        .runs
        .iter()
        .map(|run| {
            let i = files.binary_search(&run.file).expect("every run's file was checked");
            row_of(run, &reports[i])
        })
        .collect();
    let table = Table {
        device: record.device,
        iterations: record.iterations,
        rows,
    };
    out(&match format {
        CompareFormat::Text => compare::text(&table),
        CompareFormat::Json => compare::to_json(&table),
        CompareFormat::Markdown => compare::markdown(&table),
    })?;
    Ok(ExitCode::from(table.exit_code()))
}
