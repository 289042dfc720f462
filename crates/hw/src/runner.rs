//! The decisions of `hw run` without its I/O (docs/hardware.md, "Running on
//! a GPU"): how a program is compiled (its `// nvcc:` line), how long a
//! process may run before the runner's watchdog ends it, what a finished
//! (or killed) process means as a [`Run`] record, and what a
//! compute-sanitizer tool reported. The cli spawns the processes.

use crate::observed::{parse_program_output, Emitted, Run, ToolReport};
use std::time::Duration;

/// The prefix of a program's first line that gives its nvcc arguments.
pub const NVCC_LINE: &str = "// nvcc:";

/// How to compile one program: nvcc's arguments (run in the emission
/// folder) and the executable they produce, relative to that folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompilePlan {
    pub args: Vec<String>,
    pub binary: String,
}

/// Reads the `// nvcc: ARGS` first line of program `cu` (a file name in
/// the emission folder). The source file and `-o NAME` are added when the
/// line leaves them out (the executable is then the file's stem). The line
/// may spell the compiler's own name first (`// nvcc: nvcc -arch=...`, as
/// `emit cuda` writes it, so the line is a command to paste): it is not an
/// argument.
pub fn compile_plan(cu: &str, text: &str) -> Result<CompilePlan, String> {
    let first = text.lines().next().unwrap_or("");
    let rest = first
        .strip_prefix(NVCC_LINE)
        .ok_or_else(|| format!("{cu}: the first line is not `{NVCC_LINE} ARGS`"))?;
    let mut args = split_words(rest).map_err(|e| format!("{cu}: the `{NVCC_LINE}` line: {e}"))?;
    if args.first().is_some_and(|a| a == "nvcc" || a.ends_with("/nvcc")) {
        args.remove(0);
    }
    let named = |a: &String| a == cu || a.ends_with(&format!("/{cu}"));
    if !args.iter().any(named) {
        args.push(cu.to_string());
    }
    let out = args.iter().position(|a| a == "-o").map(|i| args.get(i + 1));
    let binary = match out {
        Some(Some(b)) => b.clone(),
        Some(None) => return Err(format!("{cu}: the `{NVCC_LINE}` line ends with `-o` and no name")),
        None => {
            let stem = cu.strip_suffix(".cu").unwrap_or(cu);
            let stem = if stem == cu {
                format!("{cu}.bin")
            } else {
                stem.to_string()
            };
            args.push("-o".into());
            args.push(stem.clone());
            stem
        }
    };
    Ok(CompilePlan { args, binary })
}

/// Splits a command line into words as a POSIX shell would without
/// expansions: blanks separate words; single quotes keep everything,
/// double quotes keep everything but `\"` and `\\`; a backslash outside
/// quotes keeps the next character.
pub fn split_words(s: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => cur.push(c),
                        None => return Err("a single quote is not closed".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\')) => cur.push(c),
                            Some(c) => {
                                cur.push('\\');
                                cur.push(c);
                            }
                            None => return Err("a double quote is not closed".into()),
                        },
                        Some(c) => cur.push(c),
                        None => return Err("a double quote is not closed".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(c) => cur.push(c),
                    None => return Err("a backslash ends the line".into()),
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

/// How long the runner lets a program run before its own watchdog kills
/// it. The program keeps its own deadline (`TIMEOUT_MS`) and reports a
/// hang itself; this one is the backstop for a program whose host thread
/// is stuck too (in a driver call that never returns). The margin covers
/// creating a CUDA context while other programs share the GPU, and the
/// iterations themselves (a millisecond each is generous for a litmus
/// kernel with its start delays). `margin_ms` is [`MARGIN_MS`] unless a
/// test of the runner asks for less.
pub fn process_limit(timeout_ms: u64, iterations: u64, margin_ms: u64) -> Duration {
    Duration::from_millis(timeout_ms.saturating_add(margin_ms).saturating_add(iterations))
}

/// The runner's watchdog margin over a program's own deadline.
pub const MARGIN_MS: u64 = 10_000;

/// The deadline a program gets under compute-sanitizer, which slows
/// kernels by tens of times: five times the plain one, and at most half
/// the tool's own limit so the program reports a hang before it is killed.
pub fn sanitizer_program_timeout(timeout_ms: u64, tool_limit: Duration) -> u64 {
    timeout_ms.saturating_mul(5).min(half_ms(tool_limit)).max(1)
}

fn half_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis() / 2).unwrap_or(u64::MAX)
}

/// A process's time limit within what is left of the run's `--deadline`
/// (`None`: the run has none): the smaller of the two, and whether it is
/// the run's deadline (then a kill there is [`End::Stopped`], not a hang).
pub fn within(limit: Duration, left: Option<Duration>) -> (Duration, bool) {
    match left {
        Some(left) if left < limit => (left, true),
        _ => (limit, false),
    }
}

/// How `hw run --sanitizer` runs the tools: few iterations, short limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SanitizerLimits {
    /// Iterations of the program under a tool.
    pub iterations: u64,
    /// The program's own deadline (per iteration) under a tool, in ms.
    pub program_timeout_ms: u64,
    /// The runner kills a tool after this long.
    pub tool_limit: Duration,
    /// The tool's limit for a program that hung in the plain run; `None`
    /// skips such programs (recorded with why).
    pub hung_tool_limit: Option<Duration>,
}

/// What the sanitizer pass does with one program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SanitizerPlan {
    /// Run both tools with these numbers.
    Run {
        iterations: u64,
        program_timeout_ms: u64,
        tool_limit: Duration,
    },
    /// Run neither; the reason goes into both tools' records.
    Skip(String),
}

/// The sanitizer pass for a program after its plain run `plain`. A
/// program that hung there hangs under the tools too (they slow kernels
/// down, they do not unblock them), and a hung program under
/// compute-sanitizer waits for the tool's limit: so it runs with the short
/// `hung_tool_limit` (a synccheck report of a divergent barrier comes
/// before the hang, and is kept even when the tool is killed), or not at
/// all. A program whose plain run the run's deadline cut short is not
/// sanitized. The program always gets at most half its tool's limit, so
/// it reports its own hang before the tool is killed.
pub fn sanitizer_plan(plain: &Run, l: &SanitizerLimits) -> SanitizerPlan {
    if plain.compile_error.is_some() {
        return SanitizerPlan::Skip("the program did not compile".into());
    }
    if let Some(why) = &plain.not_run {
        return SanitizerPlan::Skip(format!("the plain run did not finish: {why}"));
    }
    let tool_limit = if plain.hung {
        match l.hung_tool_limit {
            Some(h) => h.min(l.tool_limit),
            None => return SanitizerPlan::Skip("the program hung in the plain run (--sanitizer-skip-hung)".into()),
        }
    } else {
        l.tool_limit
    };
    SanitizerPlan::Run {
        iterations: l.iterations,
        program_timeout_ms: l.program_timeout_ms.min(half_ms(tool_limit)).max(1),
        tool_limit,
    }
}

/// The record of a tool that was not run, with why.
pub fn tool_not_run(why: &str) -> ToolReport {
    ToolReport {
        not_run: Some(why.to_string()),
        ..ToolReport::default()
    }
}

/// Why a test the run's deadline kept from starting has no observations.
pub fn deadline_passed(deadline: Duration) -> String {
    format!(
        "not started: the run's --deadline of {} s had passed",
        deadline.as_secs_f64()
    )
}

/// Why a test has no observations in a record written while the run was
/// still going.
pub const PENDING: &str = "not finished when this record was written (the run was still going)";

/// The line [`crate::observed::Observed::partial`] carries while the run
/// is going
/// (`pass`: `plain runs` or `sanitizer runs`).
pub fn partial_line(finished: usize, total: usize, pass: &str) -> String {
    format!("{finished} of {total} {pass} finished when this record was written; the run was still going")
}

/// How a process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// It exited with this status.
    Exited(i32),
    /// A signal ended it (not the runner's).
    Signalled(i32),
    /// The runner's watchdog killed it at this limit.
    Killed(Duration),
    /// The runner killed it when the run's `--deadline` came, after this
    /// long: not a hang, the process was cut short.
    Stopped(Duration),
    /// It could not be started.
    NotStarted,
}

/// A finished process: how it ended and what it printed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finished {
    pub end: End,
    pub stdout: String,
    pub stderr: String,
}

/// At most this many bytes of a tool's messages go into a record.
const MAX_MESSAGE: usize = 4000;

/// The last `MAX_MESSAGE` bytes of `s` (nvcc's and crashes' useful lines
/// come last), on a character boundary.
pub fn tail(s: &str) -> String {
    let s = s.trim();
    if s.len() <= MAX_MESSAGE {
        return s.to_string();
    }
    let mut start = s.len() - MAX_MESSAGE;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    format!("...{}", &s[start..])
}

/// The record of a test before anything is known of its run: nothing
/// completed, nothing observed.
fn blank_run(e: &Emitted, iterations: u64) -> Run {
    Run {
        file: e.file.clone(),
        test: e.test.clone(),
        mapping: None,
        iterations,
        completed: 0,
        hung: false,
        cuda_error: None,
        compile_error: None,
        outcomes: Vec::new(),
        sanitizer: None,
        note: None,
        not_run: None,
    }
}

/// The record of a test that did not run, with why (the run's deadline).
pub fn not_run(e: &Emitted, iterations: u64, why: String) -> Run {
    Run {
        not_run: Some(why),
        ..blank_run(e, iterations)
    }
}

/// The record of a test whose compile step failed: a compile error, or
/// (when the run's deadline stopped nvcc) a test that did not run. `None`
/// when it compiled.
pub fn compile_failure(e: &Emitted, iterations: u64, f: &Finished) -> Option<Run> {
    if let End::Stopped(d) = f.end {
        return Some(not_run(e, iterations, stopped(d, "nvcc")));
    }
    compile_error(f).map(|why| compile_failed(e, iterations, why))
}

fn stopped(d: Duration, what: &str) -> String {
    format!("the run's deadline stopped {what} after {} ms", d.as_millis())
}

/// The record of a test whose program did not compile.
pub fn compile_failed(e: &Emitted, iterations: u64, why: String) -> Run {
    Run {
        compile_error: Some(why),
        ..blank_run(e, iterations)
    }
}

/// What nvcc's end means: `None` when it compiled, else the message.
pub fn compile_error(f: &Finished) -> Option<String> {
    match f.end {
        End::Exited(0) => None,
        End::Exited(c) => Some(format!("nvcc exited with status {c}: {}", tail(&f.stderr))),
        End::Signalled(s) => Some(format!("nvcc was ended by signal {s}: {}", tail(&f.stderr))),
        End::Killed(d) => Some(format!("nvcc did not finish within {} s", d.as_secs())),
        End::Stopped(d) => Some(stopped(d, "nvcc")),
        End::NotStarted => Some(format!("nvcc could not be started: {}", tail(&f.stderr))),
    }
}

/// The record of one program's run. The program's own report is taken
/// when it printed one; a program killed by the watchdog counts as hung
/// (with whatever it reported before, nothing if it printed nothing); a
/// program that ended without a report (a crash) is recorded with why in
/// `cuda_error`, as the harness failed before it could say.
pub fn run_record(e: &Emitted, iterations: u64, f: &Finished) -> Run {
    let report = parse_program_output(&f.stdout);
    let mut run = blank_run(e, iterations);
    if let Ok(p) = &report {
        run.mapping = Some(p.mapping.clone());
        run.iterations = p.iterations;
        run.completed = p.completed;
        run.hung = p.hung;
        run.cuda_error = p.cuda_error.clone();
        run.outcomes = p.outcomes.clone();
        if p.test != e.test {
            run.note = Some(format!(
                "the program reports test `{}`, the manifest names `{}`",
                p.test, e.test
            ));
        }
    }
    match (f.end, &report) {
        (End::Stopped(d), _) => {
            // Cut short by the run, not by the test: its deadline
            // report (if any) is kept for reading, and counts for nothing.
            run.not_run = Some(stopped(d, "the program"));
        }
        (End::Killed(d), _) => {
            run.hung = true;
            run.note = Some(format!("killed by the runner's watchdog after {} ms", d.as_millis()));
        }
        (End::Exited(0), Ok(_)) => {}
        // A hung program exits through `_exit`, possibly with a status.
        (End::Exited(_), Ok(p)) if p.hung => {}
        (end, Ok(_)) => {
            run.note = Some(format!("the program {}: {}", ended(end), tail(&f.stderr)));
        }
        (end, Err(why)) => {
            run.cuda_error = Some(format!("the program {} ({why}): {}", ended(end), tail(&f.stderr)));
        }
    }
    run
}

fn ended(end: End) -> String {
    match end {
        End::Exited(c) => format!("exited with status {c}"),
        End::Signalled(s) => format!("was ended by signal {s}"),
        End::Killed(d) => format!("was killed after {} ms", d.as_millis()),
        End::Stopped(d) => format!("was stopped by the run's deadline after {} ms", d.as_millis()),
        End::NotStarted => "could not be started".into(),
    }
}

/// At most this many distinct error lines per tool.
pub const MAX_SANITIZER_MESSAGES: usize = 5;

/// What a compute-sanitizer tool printed (stdout and stderr together):
/// the count of its `ERROR SUMMARY: N error(s)` line (synccheck; racecheck
/// 2025.3 prints `RACECHECK SUMMARY: H hazards displayed (E errors, W
/// warnings)` instead, and E is taken when no ERROR SUMMARY came), and its
/// first few distinct error lines. An error line is a `========= ` line that is not
/// indented (indented ones give the location of the line above) and not
/// the tool's banner or summaries; hexadecimal numbers (addresses, which
/// differ per run) are masked so repeats of one error count once.
pub fn sanitizer_report(output: &str, end: End) -> ToolReport {
    let mut errors = None;
    let mut race_errors = None;
    let mut messages: Vec<String> = Vec::new();
    for line in output.lines() {
        let Some(body) = line.strip_prefix("=========") else {
            continue;
        };
        if let Some(n) = body.trim().strip_prefix("ERROR SUMMARY:") {
            errors = n.split_whitespace().next().and_then(|n| n.parse::<u64>().ok());
            continue;
        }
        if let Some(rest) = body.trim().strip_prefix("RACECHECK SUMMARY:") {
            // `2 hazards displayed (2 errors, 0 warnings)`
            race_errors = rest
                .split_once('(')
                .and_then(|(_, r)| r.split_whitespace().next())
                .and_then(|n| n.parse::<u64>().ok());
            continue;
        }
        let Some(msg) = body.strip_prefix(' ') else { continue };
        if msg.is_empty() || msg.starts_with(char::is_whitespace) {
            continue;
        }
        let boring = ["COMPUTE-SANITIZER", "RACECHECK SUMMARY", "Target application returned"];
        if boring.iter().any(|b| msg.starts_with(b)) {
            continue;
        }
        let msg = mask_hex(msg.trim_end());
        if messages.len() < MAX_SANITIZER_MESSAGES && !messages.contains(&msg) {
            messages.push(msg);
        }
    }
    let timed_out = matches!(end, End::Killed(_));
    let errors = errors.or(race_errors);
    let mut not_run = None;
    if errors.is_none() {
        match end {
            End::Killed(d) => messages.push(format!("killed after {} ms with no ERROR SUMMARY", d.as_millis())),
            End::Stopped(d) => not_run = Some(stopped(d, "the tool")),
            e => messages.push(format!("no ERROR SUMMARY: the tool {}: {}", ended(e), tail(output))),
        }
    }
    ToolReport {
        errors,
        messages,
        timed_out,
        not_run,
    }
}

/// Replaces every `0x` hexadecimal number with `0x?`.
fn mask_hex(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("0x") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_hexdigit()).len();
        if digits == 0 {
            out.push_str("0x");
        } else {
            out.push_str("0x?");
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn emitted() -> Emitted {
        Emitted {
            file: "litmus/cuda/t.litmus".into(),
            cu: "t.cu".into(),
            test: "t".into(),
            mapping: None,
            nvcc: None,
        }
    }

    #[test]
    fn the_nvcc_line_gives_the_arguments() {
        let p = compile_plan("t.cu", "// nvcc: -arch=sm_90 -O2 -rdc=true t.cu -o t\nint main(){}\n").unwrap();
        assert_eq!(p.args, ["-arch=sm_90", "-O2", "-rdc=true", "t.cu", "-o", "t"]);
        assert_eq!(p.binary, "t");
        // The file and the output are added when the line leaves them out.
        let p = compile_plan("t.cu", "// nvcc: -arch=sm_90 \"-DNAME=a b\"\n").unwrap();
        // The compiler's own name, as `emit cuda` writes the line, is not an argument.
        let named = compile_plan("t.cu", "// nvcc: nvcc -arch=sm_90 -o t t.cu\n").unwrap();
        assert_eq!(named.args, ["-arch=sm_90", "-o", "t", "t.cu"]);
        assert_eq!(p.args, ["-arch=sm_90", "-DNAME=a b", "t.cu", "-o", "t"]);
        assert!(compile_plan("t.cu", "#include <x>\n")
            .unwrap_err()
            .contains("first line"));
        assert!(compile_plan("t.cu", "// nvcc: 'x\n")
            .unwrap_err()
            .contains("not closed"));
        assert!(compile_plan("t.cu", "// nvcc: t.cu -o\n")
            .unwrap_err()
            .contains("no name"));
    }

    #[test]
    fn words_split_as_a_shell_would() {
        assert_eq!(
            split_words(r#" a 'b c' "d \"e\"" f\ g "#).unwrap(),
            ["a", "b c", "d \"e\"", "f g"]
        );
        assert_eq!(split_words("").unwrap(), Vec::<String>::new());
        assert_eq!(split_words("''").unwrap(), [""]);
    }

    fn finished(end: End, stdout: &str) -> Finished {
        Finished {
            end,
            stdout: stdout.into(),
            stderr: "boom".into(),
        }
    }

    const REPORT: &str = r#"{"schema":1,"test":"t","mapping":"lane","iterations":5,"completed":5,"hung":false,"cuda_error":null,"outcomes":[{"values":{"x":1},"count":5}]}"#;

    #[test]
    fn a_program_report_becomes_the_record() {
        let r = run_record(&emitted(), 5, &finished(End::Exited(0), REPORT));
        assert_eq!((r.completed, r.hung, r.mapping.as_deref()), (5, false, Some("lane")));
        assert_eq!(r.outcomes[0].count, 5);
        assert_eq!((r.cuda_error, r.note), (None, None));
    }

    #[test]
    fn a_killed_program_is_hung_and_a_crash_is_a_cuda_error() {
        let r = run_record(&emitted(), 5, &finished(End::Killed(Duration::from_millis(1500)), ""));
        assert!(r.hung);
        assert_eq!(r.completed, 0);
        assert!(r.note.unwrap().contains("watchdog after 1500 ms"));
        let r = run_record(&emitted(), 5, &finished(End::Signalled(11), "partial"));
        assert!(!r.hung);
        let e = r.cuda_error.unwrap();
        assert!(e.contains("signal 11") && e.contains("boom"), "{e}");
        // A report with a crash after it keeps the report and notes the end.
        let r = run_record(&emitted(), 5, &finished(End::Exited(3), REPORT));
        assert_eq!(r.completed, 5);
        assert!(r.note.unwrap().contains("status 3"));
    }

    #[test]
    fn limits_leave_room() {
        assert_eq!(process_limit(2000, 1000, MARGIN_MS), Duration::from_millis(13_000));
        assert_eq!(sanitizer_program_timeout(2000, Duration::from_secs(60)), 10_000);
        assert_eq!(sanitizer_program_timeout(20_000, Duration::from_secs(60)), 30_000);
    }

    #[test]
    fn the_run_s_deadline_clips_a_limit_and_says_so() {
        let s = Duration::from_secs;
        assert_eq!(within(s(10), None), (s(10), false));
        assert_eq!(within(s(10), Some(s(60))), (s(10), false));
        assert_eq!(within(s(10), Some(s(3))), (s(3), true));
        assert_eq!(within(s(10), Some(s(0))), (s(0), true));
    }

    #[test]
    fn a_process_the_deadline_stopped_is_not_run_not_hung() {
        let stopped = End::Stopped(Duration::from_millis(700));
        let r = run_record(&emitted(), 5, &finished(stopped, ""));
        assert!(!r.hung);
        assert_eq!(r.cuda_error, None);
        assert!(r.not_run.unwrap().contains("deadline stopped the program after 700 ms"));
        // A stopped nvcc is no compile error.
        let r = compile_failure(&emitted(), 5, &finished(stopped, "")).unwrap();
        assert_eq!(r.compile_error, None);
        assert!(r.not_run.unwrap().contains("stopped nvcc"));
        assert_eq!(compile_failure(&emitted(), 5, &finished(End::Exited(0), "")), None);
        let r = compile_failure(&emitted(), 5, &finished(End::Exited(1), "")).unwrap();
        assert!(r.compile_error.unwrap().contains("status 1"));
        // A stopped tool is not run; one killed at its own limit timed out.
        let t = sanitizer_report("========= COMPUTE-SANITIZER\n", stopped);
        assert_eq!((t.errors, t.timed_out), (None, false));
        assert!(t.not_run.unwrap().contains("stopped the tool"));
        assert!(t.messages.is_empty());
    }

    fn limits() -> SanitizerLimits {
        SanitizerLimits {
            iterations: 5,
            program_timeout_ms: 10_000,
            tool_limit: Duration::from_secs(60),
            hung_tool_limit: Some(Duration::from_secs(8)),
        }
    }

    #[test]
    fn a_program_that_hung_gets_the_short_sanitizer_limit_or_is_skipped() {
        let plain = run_record(&emitted(), 5, &finished(End::Exited(0), REPORT));
        assert_eq!(
            sanitizer_plan(&plain, &limits()),
            SanitizerPlan::Run {
                iterations: 5,
                program_timeout_ms: 10_000,
                tool_limit: Duration::from_secs(60)
            }
        );
        let hung = Run {
            hung: true,
            ..plain.clone()
        };
        // The program reports its own hang at half the tool's limit.
        assert_eq!(
            sanitizer_plan(&hung, &limits()),
            SanitizerPlan::Run {
                iterations: 5,
                program_timeout_ms: 4_000,
                tool_limit: Duration::from_secs(8)
            }
        );
        let skip = SanitizerLimits {
            hung_tool_limit: None,
            ..limits()
        };
        let SanitizerPlan::Skip(why) = sanitizer_plan(&hung, &skip) else {
            panic!("a hung program is skipped")
        };
        assert!(why.contains("hung in the plain run"), "{why}");
        assert!(matches!(sanitizer_plan(&plain, &skip), SanitizerPlan::Run { .. }));
        let cut = not_run(&emitted(), 5, deadline_passed(Duration::from_secs(30)));
        let SanitizerPlan::Skip(why) = sanitizer_plan(&cut, &limits()) else {
            panic!("a test that did not run is not sanitized")
        };
        assert!(why.contains("--deadline of 30 s"), "{why}");
        let broken = compile_failed(&emitted(), 5, "nvcc: error".into());
        assert!(matches!(sanitizer_plan(&broken, &limits()), SanitizerPlan::Skip(_)));
    }

    #[test]
    fn sanitizer_output_gives_the_count_and_distinct_errors() {
        let out = "\
========= COMPUTE-SANITIZER
========= Barrier error detected. Divergent thread(s) in block
=========     at 0x1f0 in t.cu:12:kernel(int *)
=========     by thread (32,0,0) in block (0,0,0)
=========
========= Barrier error detected. Divergent thread(s) in block
=========     at 0x2a0 in t.cu:12:kernel(int *)
========= Error: Race reported between Write access at 0x1a0 in t.cu:5 and Read access at 0x2b0 in t.cu:9 [4 hazards]
{\"schema\":1}
========= ERROR SUMMARY: 3 errors
";
        let r = sanitizer_report(out, End::Exited(0));
        assert_eq!(r.errors, Some(3));
        assert_eq!(
            r.messages,
            [
                "Barrier error detected. Divergent thread(s) in block",
                "Error: Race reported between Write access at 0x? in t.cu:5 and Read access at 0x? in t.cu:9 [4 hazards]"
            ]
        );
        assert!(!r.timed_out);
        // As compute-sanitizer 2025.3.1 printed them on an H100.
        let race = "\
========= COMPUTE-SANITIZER
========= Error: Race reported between Read access at k(int *)+0x1e0 in r.cu:3
=========     and Write access at k(int *)+0x1f0 in r.cu:3 [256 hazards]
========= \n\
========= Error: Race reported between Read access at k(int *)+0xc0 in r.cu:3
=========     and Write access at k(int *)+0x130 in r.cu:3 [4 hazards]
========= \n\
{\"done\":\"cudaSuccess\"}
========= RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)
";
        let r = sanitizer_report(race, End::Exited(0));
        assert_eq!(r.errors, Some(2));
        assert_eq!(
            r.messages,
            ["Error: Race reported between Read access at k(int *)+0x? in r.cu:3"]
        );
        let quiet = sanitizer_report(
            "========= COMPUTE-SANITIZER\n========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n",
            End::Exited(0),
        );
        assert_eq!((quiet.errors, quiet.messages.len()), (Some(0), 0));
        let sync = "\
========= COMPUTE-SANITIZER
========= Barrier error detected. Invalid arguments.
=========     at __syncwarp(unsigned int)+0x170 in sm_30_intrinsics.hpp:110
=========     by thread (0,0,0) in block (0,0,0)
=========         Device Frame: k(int *, int)+0x160 in q.cu:6
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: main [0x8d47] in q
========= \n\
========= Barrier error detected. Invalid arguments.
{\"done\":\"cudaErrorLaunchFailure\"}
========= ERROR SUMMARY: 2 errors
";
        let r = sanitizer_report(sync, End::Exited(0));
        assert_eq!(r.errors, Some(2));
        assert_eq!(r.messages, ["Barrier error detected. Invalid arguments."]);
        let clean = sanitizer_report(
            "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n",
            End::Exited(0),
        );
        assert_eq!((clean.errors, clean.messages.len()), (Some(0), 0));
        let killed = sanitizer_report("========= COMPUTE-SANITIZER\n", End::Killed(Duration::from_secs(60)));
        assert_eq!(killed.errors, None);
        assert!(killed.timed_out);
        assert!(killed.messages[0].contains("no ERROR SUMMARY"));
    }
}
