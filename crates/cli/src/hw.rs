//! `barrier-check hw run` and `hw compare` (docs/hardware.md): the files,
//! processes and environment of holding verdicts against a GPU. The
//! decisions (compile plans, time limits, what a process's end means, the
//! comparison) are bc-hw's; this module only reads, spawns and writes.

use crate::flags::{jobs_or_cores, parse_count, parse_jobs, parse_secs};
use crate::inputs::{check_files, read_capped, Input};
use crate::output::{err, out, usage_error, write_file};
// Every program, nvcc and compute-sanitizer runs in its own process group
// (so the watchdog can end all it started), which a terminal's Ctrl-C does
// not reach: `hw run` catches the signal (`signals.rs`), and each
// [`run_limited`] that sees it kills its group, and nothing new starts.
use crate::signals::{catch_interrupts, interrupted};
use barrier_check::options::Search;
use barrier_check::schedule::side_by_side;
use barrier_check::{CheckOptions, ProgressChoice};
use bc_hw::compare::{self, Allowed, Comparison, Observed, Row, Table};
use bc_hw::observed::{self, Emitted, Run, Sanitizer};
use bc_hw::runner::{self, End, Finished};
use bc_report::TestReport;
use bc_syntax::FindingKind;
use clap::Subcommand;
use std::convert::Infallible;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// Caps on what is read: a manifest or an observation record, and a
/// program's or tool's output (kept up to this much, the rest drained).
const MAX_MANIFEST_BYTES: u64 = 16 << 20;
const MAX_OBSERVED_BYTES: u64 = 64 << 20;
const MAX_OUTPUT_BYTES: u64 = 16 << 20;
/// nvcc gets this long per program.
const COMPILE_LIMIT: Duration = Duration::from_secs(600);

/// `hw`'s subcommands.
#[derive(Subcommand)]
pub enum HwCommand {
    /// Compile every program of an `emit cuda` folder with nvcc, run each
    /// in its own process, and write what they observed as JSON.
    Run(RunArgs),
    /// Compare observations (from `hw run`) with each test's verdict and
    /// outcome set: exit 1 when the device showed an outcome the model
    /// forbids.
    Compare(CompareArgs),
}

impl HwCommand {
    /// `barrier-check hw COMMAND`.
    pub fn run(self) -> io::Result<ExitCode> {
        match self {
            HwCommand::Run(a) => run(&a),
            HwCommand::Compare(a) => compare(&a),
        }
    }
}

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
    /// racecheck (few iterations, short limits).
    #[arg(long)]
    pub sanitizer: bool,
    /// Iterations of a program under compute-sanitizer.
    #[arg(long, default_value_t = 10, value_parser = parse_count)]
    pub sanitizer_iterations: u64,
    /// Time limit of one compute-sanitizer run, in seconds.
    #[arg(long, value_name = "SECS", default_value = "60", value_parser = parse_secs)]
    pub sanitizer_timeout: Duration,
    /// A program's own deadline under compute-sanitizer, in ms [default:
    /// five times --timeout-ms]; at most half the tool's time limit.
    #[arg(long, value_name = "MS", value_parser = parse_count)]
    pub sanitizer_timeout_ms: Option<u64>,
    /// Time limit of a compute-sanitizer run for a program that hung in
    /// the plain run (it hangs under the tool too), in seconds.
    #[arg(long, value_name = "SECS", default_value = "15", value_parser = parse_secs)]
    pub sanitizer_hung_timeout: Duration,
    /// Do not run compute-sanitizer on a program that hung in the plain
    /// run (recorded with why).
    #[arg(long)]
    pub sanitizer_skip_hung: bool,
    /// Stop the whole run this many seconds after it started: processes
    /// still going are ended, tests not started are recorded as not run,
    /// and OBSERVED.json is written (it is also rewritten after every
    /// finished test, so a run killed from outside keeps what it finished).
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub deadline: Option<Duration>,
    /// The runner's watchdog margin over --timeout-ms (for tests).
    #[arg(long, hide = true, default_value_t = bc_hw::runner::MARGIN_MS)]
    pub margin_ms: u64,
    /// Where to write the observations.
    #[arg(short, long, visible_alias = "out", value_name = "OBSERVED.json")]
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

/// Runs `cmd` in its own process group with `limit`, or until `stop_at`
/// (the run's deadline) when that comes first: past it, the whole group is
/// killed (a hang costs this process only; the GPU is never reset: ending
/// the process ends its CUDA context and its kernels). A process the
/// run's deadline ends is [`End::Stopped`], not started at all when the
/// deadline has passed.
fn run_limited(mut cmd: Command, limit: Duration, stop_at: Option<Instant>) -> Finished {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    let (limit, by_deadline) = runner::within(limit, stop_at.map(|t| t.saturating_duration_since(Instant::now())));
    if (by_deadline && limit.is_zero()) || interrupted().is_some() {
        return Finished {
            end: End::Stopped(limit),
            stdout: String::new(),
            stderr: String::new(),
        };
    }
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
            // Checked after the spawn: a signal before it is seen here.
            Ok(None) if start.elapsed() < limit && interrupted().is_none() => {
                std::thread::sleep(Duration::from_millis(5))
            }
            _ if interrupted().is_some() => {
                kill_group(pid);
                let _ = child.kill();
                let _ = child.wait();
                break End::Stopped(start.elapsed());
            }
            _ => {
                kill_group(pid);
                let _ = child.kill();
                let _ = child.wait();
                break if by_deadline {
                    End::Stopped(limit)
                } else {
                    End::Killed(limit)
                };
            }
        }
    };
    // Something the program started may still hold its pipes: give it a
    // moment, then end the group.
    let deadline = Instant::now() + Duration::from_secs(2);
    let finished = |h: &Option<std::thread::JoinHandle<String>>| h.as_ref().is_none_or(|h| h.is_finished());
    while !(finished(&stdout) && finished(&stderr)) {
        if Instant::now() > deadline || interrupted().is_some() {
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
    let f = run_limited(cmd, Duration::from_secs(20), None);
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

/// A program's arguments: `ITERATIONS SEED TIMEOUT_MS`.
fn program_args(iterations: u64, seed: u64, timeout_ms: u64) -> [String; 3] {
    [iterations, seed, timeout_ms].map(|n| n.to_string())
}

/// Compiles and runs one program, each step within the run's deadline
/// `stop_at`: its record, and its executable when it compiled.
fn run_one(e: &Emitted, dir: &Path, nvcc: &Path, a: &RunArgs, stop_at: Option<Instant>) -> (Run, Option<PathBuf>) {
    let cu = dir.join(&e.cu);
    let text = match read_capped(&cu, MAX_MANIFEST_BYTES) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(why) => {
            let why = format!("{}: {why}", cu.display());
            return (runner::compile_failed(e, a.iterations, why), None);
        }
    };
    let plan = match runner::compile_plan(&e.cu, &text) {
        Ok(p) => p,
        Err(why) => return (runner::compile_failed(e, a.iterations, why), None),
    };
    let mut cmd = Command::new(nvcc);
    cmd.args(&plan.args).current_dir(dir);
    if let Some(failed) = runner::compile_failure(e, a.iterations, &run_limited(cmd, COMPILE_LIMIT, stop_at)) {
        return (failed, None);
    }
    let binary = dir.join(&plan.binary);
    let mut cmd = Command::new(&binary);
    cmd.args(program_args(a.iterations, a.seed, a.timeout_ms))
        .current_dir(dir);
    let limit = runner::process_limit(a.timeout_ms, a.iterations, a.margin_ms);
    (
        runner::run_record(e, a.iterations, &run_limited(cmd, limit, stop_at)),
        Some(binary),
    )
}

/// The sanitizer pass of one program (after its plain run `plain`):
/// synccheck and racecheck as [`runner::sanitizer_plan`] says.
fn sanitize_one(plain: &Run, binary: &Path, tool: &Path, a: &RunArgs, stop_at: Option<Instant>) -> Sanitizer {
    let limits = runner::SanitizerLimits {
        iterations: a.sanitizer_iterations,
        program_timeout_ms: a
            .sanitizer_timeout_ms
            .unwrap_or_else(|| runner::sanitizer_program_timeout(a.timeout_ms, a.sanitizer_timeout)),
        tool_limit: a.sanitizer_timeout,
        hung_tool_limit: (!a.sanitizer_skip_hung).then_some(a.sanitizer_hung_timeout),
    };
    match runner::sanitizer_plan(plain, &limits) {
        runner::SanitizerPlan::Skip(why) => Sanitizer {
            synccheck: runner::tool_not_run(&why),
            racecheck: runner::tool_not_run(&why),
        },
        runner::SanitizerPlan::Run {
            iterations,
            program_timeout_ms,
            tool_limit,
        } => {
            let check = |name: &str| {
                let mut cmd = Command::new(tool);
                cmd.args(["--tool", name])
                    .arg(binary)
                    .args(program_args(iterations, a.seed, program_timeout_ms))
                    .current_dir(binary.parent().unwrap_or(Path::new(".")));
                let f = run_limited(cmd, tool_limit, stop_at);
                runner::sanitizer_report(&format!("{}\n{}", f.stdout, f.stderr), f.end)
            };
            Sanitizer {
                synccheck: check("synccheck"),
                racecheck: check("racecheck"),
            }
        }
    }
}

/// A one-line account of a run, for the progress lines on stderr.
fn run_line(r: &Run) -> String {
    if r.compile_error.is_some() {
        return "compile error".into();
    }
    if let Some(why) = &r.not_run {
        return format!("not run: {why}");
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
        let n = |t: &observed::ToolReport| match (t.errors, &t.not_run) {
            (Some(n), _) => n.to_string(),
            (None, Some(_)) => "not run".into(),
            (None, None) => "?".into(),
        };
        s += &format!(", synccheck {} racecheck {}", n(&san.synccheck), n(&san.racecheck));
    }
    s
}

/// A path with its links, `.` and `..` resolved, also when its last part
/// is not there yet (then its folder's are); `None` when its folder is not
/// there either.
fn resolved(p: &Path) -> Option<PathBuf> {
    if let Ok(c) = std::fs::canonicalize(p) {
        return Some(c);
    }
    let parent = p
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Some(std::fs::canonicalize(parent).ok()?.join(p.file_name()?))
}

/// What of its own input `hw run` would overwrite with its record at
/// `output`: the emission's manifest or a program the manifest names (what
/// it is, and its path). Paths are compared resolved, so `DIR/./a.cu`, a
/// link to the manifest or `DIR/sub/../manifest.json` are caught too.
fn own_input(output: &Path, dir: &Path, manifest: &observed::Manifest) -> Option<(&'static str, PathBuf)> {
    let out = resolved(output)?;
    std::iter::once(("the emission's manifest", dir.join("manifest.json")))
        .chain(manifest.emitted.iter().map(|e| ("the program", dir.join(&e.cu))))
        .find(|(_, p)| resolved(p).as_ref() == Some(&out))
}

/// `barrier-check hw run DIR -o OBSERVED.json`.
fn run(a: &RunArgs) -> io::Result<ExitCode> {
    let manifest_path = a.dir.join("manifest.json");
    let manifest = match read_capped(&manifest_path, MAX_MANIFEST_BYTES)
        .and_then(|b| String::from_utf8(b).map_err(|_| "not UTF-8 text".to_string()))
        .and_then(|t| observed::parse_manifest(&t))
    {
        Ok(m) => m,
        Err(e) => return usage_error(&format!("{}: {e}", manifest_path.display())),
    };
    if let Some((what, input)) = own_input(&a.output, &a.dir, &manifest) {
        return usage_error(&format!(
            "{}: is {what} {}, which `hw run` reads: the record would replace it (write it elsewhere)",
            a.output.display(),
            input.display()
        ));
    }
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
    catch_interrupts();
    let start = Instant::now();
    // A deadline beyond what the clock can hold never comes (as `check
    // --timeout` saturates); `start + d` panicked there.
    let stop_at = a.deadline.and_then(|d| start.checked_add(d));
    let device = device_name();
    let jobs = jobs_or_cores(a.jobs)?;
    let total = manifest.emitted.len();
    let record = |runs: &[Option<Run>], partial: Option<String>, pending: &dyn Fn() -> String| observed::Observed {
        schema: observed::SCHEMA,
        device: device.clone(),
        iterations: a.iterations,
        seed: a.seed,
        partial,
        runs: manifest
            .emitted
            .iter()
            .zip(runs)
            .map(|(e, r)| r.clone().unwrap_or_else(|| runner::not_run(e, a.iterations, pending())))
            .collect(),
    };
    // Written before the first test (so a bad path costs no GPU time) and
    // after each finished one (so a run killed from outside keeps them).
    let pending = || runner::PENDING.to_string();
    let first = record(
        &vec![None; total],
        Some(runner::partial_line(0, total, "plain runs")),
        &pending,
    );
    if let Err(e) = write_record(&a.output, &first) {
        return usage_error(&format!("{}: {e}", a.output.display()));
    }
    // Two passes: every plain run first, then the sanitizer runs. A
    // program under compute-sanitizer that hangs holds the GPU in a way
    // that starves other processes' kernels (on an H100, plain runs beside
    // sanitized ones missed their deadlines), so plain runs never share the
    // GPU with a sanitized one.
    let mut runs: Vec<Option<Run>> = vec![None; total];
    let mut binaries: Vec<Option<PathBuf>> = vec![None; total];
    let mut write_failed = false;
    let mut save = |runs: &[Option<Run>], partial: String| {
        if let Err(e) = write_record(&a.output, &record(runs, Some(partial), &pending)) {
            if !write_failed {
                write_failed = true;
                let _ = err(&format!("barrier-check: warning: {}: {e}\n", a.output.display()));
            }
        }
    };
    // Nothing starts once the deadline has passed.
    let open = || stop_at.is_none_or(|t| Instant::now() < t) && interrupted().is_none();
    let mut done = 0;
    let ran = side_by_side(
        &manifest.emitted,
        jobs,
        |e| open().then(|| run_one(e, &dir, &nvcc, a, stop_at)),
        |i, ran| {
            // A run the interruption cut short is not recorded (pending).
            if let Some((r, binary)) = ran.filter(|_| interrupted().is_none()) {
                done += 1;
                let _ = err(&format!("[{done}/{total}] {}: {}\n", r.file, run_line(&r)));
                binaries[i] = binary;
                runs[i] = Some(r);
                save(&runs, runner::partial_line(done, total, "plain runs"));
            }
            Ok::<(), Infallible>(())
        },
    );
    let Ok(()) = ran;
    if let Some(tool) = &sanitizer {
        let mut todo: Vec<usize> = (0..total).filter(|&i| binaries[i].is_some()).collect();
        // Until its pass comes, each program's tools are pending. Programs
        // that hung in the plain run go last, so their hangs under the
        // tools starve as few of the others as can be.
        todo.sort_by_key(|&i| runs[i].as_ref().is_some_and(|r| r.hung));
        for &i in &todo {
            if let Some(r) = runs[i].as_mut() {
                r.sanitizer = Some(Sanitizer {
                    synccheck: runner::tool_not_run(runner::PENDING),
                    racecheck: runner::tool_not_run(runner::PENDING),
                });
            }
        }
        let plain: Vec<(usize, Run, PathBuf)> = todo
            .iter()
            .filter_map(|&i| Some((i, runs[i].clone()?, binaries[i].clone()?)))
            .collect();
        let n = plain.len();
        let mut sanitized = 0;
        let ran = side_by_side(
            &plain,
            jobs,
            |(_, r, binary)| open().then(|| sanitize_one(r, binary, tool, a, stop_at)),
            |j, s| {
                let s = s.filter(|_| interrupted().is_none());
                if let (Some(s), Some(r)) = (s, runs[plain[j].0].as_mut()) {
                    sanitized += 1;
                    r.sanitizer = Some(s);
                    let _ = err(&format!("[sanitizer {sanitized}/{n}] {}: {}\n", r.file, run_line(r)));
                    save(&runs, runner::partial_line(sanitized, n, "sanitizer runs"));
                }
                Ok::<(), Infallible>(())
            },
        );
        let Ok(()) = ran;
    }
    if let Some(sig) = interrupted() {
        // Every group this run started is gone (each `run_limited` killed
        // its own); the record keeps what finished, marked partial.
        let name = if sig == libc::SIGINT { "SIGINT" } else { "SIGTERM" };
        let partial = format!("interrupted by {name}: {done} of {total} plain runs finished");
        let _ = write_record(&a.output, &record(&runs, Some(partial), &pending));
        let _ = err(&format!("barrier-check: interrupted by {name}\n"));
        return Ok(ExitCode::from(128 + sig as u8));
    }
    if let Some(d) = a.deadline {
        // What the deadline kept from starting says so.
        for s in runs.iter_mut().flatten().filter_map(|r| r.sanitizer.as_mut()) {
            for t in [&mut s.synccheck, &mut s.racecheck] {
                if t.not_run.as_deref() == Some(runner::PENDING) {
                    *t = runner::tool_not_run(&runner::deadline_passed(d));
                }
            }
        }
    }
    let unstarted = || {
        a.deadline
            .map_or_else(|| runner::PENDING.to_string(), runner::deadline_passed)
    };
    let record = record(&runs, None, &unstarted);
    let hung = record.runs.iter().filter(|r| r.hung && r.not_run.is_none()).count();
    let failed = record.runs.iter().filter(|r| r.compile_error.is_some()).count();
    let not_run = record.runs.iter().filter(|r| r.not_run.is_some()).count();
    if let Err(e) = write_record(&a.output, &record) {
        return usage_error(&format!("{}: {e}", a.output.display()));
    }
    let cut = if not_run > 0 {
        format!(", {not_run} not run (the run's --deadline)")
    } else {
        String::new()
    };
    err(&format!(
        "{total} programs on {}: {failed} did not compile, {hung} hung{cut}; wrote {} in {:.0} s\n",
        record.device,
        a.output.display(),
        start.elapsed().as_secs_f64()
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// Writes OBSERVED.json whole ([`write_file`]), so a reader (or a kill)
/// never sees half a record.
fn write_record(path: &Path, record: &observed::Observed) -> io::Result<()> {
    write_file(path, observed::to_json(record).as_bytes())
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
    let comparison = match (&allowed, compare::inconsistency(run, report.test.as_deref())) {
        (Err(why), _) => Comparison::error(why.clone()),
        (Ok(_), Some(why)) => Comparison::error(why),
        (Ok(a), None) => compare::compare(a, &seen),
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

/// `hw compare`'s command line.
#[derive(clap::Args)]
pub struct CompareArgs {
    observed: PathBuf,
    #[arg(long, value_enum, default_value = "text")]
    format: CompareFormat,
    /// Threads checking the litmus files [default: every core].
    #[arg(long, value_name = "N", value_parser = parse_jobs)]
    jobs: Option<usize>,
}

impl CompareArgs {
    /// The search options: every core (or `--jobs`), outcome sets collected.
    fn options(&self) -> io::Result<CheckOptions> {
        let search = Search {
            jobs: jobs_or_cores(self.jobs)?,
            outcomes: true,
            ..Search::default()
        };
        // The device promises the model's progress model, not what a
        // test's `progress` line assumes.
        Ok(search.options(None, ProgressChoice::Model))
    }
}

/// `barrier-check hw compare OBSERVED.json`: exit 1 when a test is
/// UNSOUND, 2 when the record or a test could not be read or checked.
fn compare(a: &CompareArgs) -> io::Result<ExitCode> {
    let path = &a.observed;
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
    let opts = a.options()?;
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
    out(&match a.format {
        CompareFormat::Text => compare::text(&table),
        CompareFormat::Json => compare::to_json(&table),
        CompareFormat::Markdown => compare::markdown(&table),
    })?;
    Ok(ExitCode::from(table.exit_code()))
}
