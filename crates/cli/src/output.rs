//! Everything the program prints goes through here, checked: a report that
//! cannot be written (stdout closed or full, a broken pipe) is exit 3, never
//! a silent pass. Every file it writes (baselines, emissions, hardware
//! records) goes through [`write_file`], whole or not at all.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

/// Exit code when the report could not be written (stdout or stderr full,
/// closed, or a broken pipe): the run's verdicts were lost, so it must not
/// read as a pass (docs/ci.md, "Exit codes"; docs/reliability.md).
pub const EXIT_OUTPUT: u8 = 3;

/// Writes to stdout. Every byte the program prints goes through this or
/// [`err`], so every write is checked (no `print!` anywhere).
pub fn out(s: &str) -> io::Result<()> {
    if s.is_empty() {
        return Ok(());
    }
    stdout_open()?;
    io::stdout().lock().write_all(s.as_bytes())
}

/// Writes to stderr, checked like [`out`].
pub fn err(s: &str) -> io::Result<()> {
    io::stderr().lock().write_all(s.as_bytes())
}

/// Whether descriptor 1 was closed when the process started (`>&-`).
/// Rust's runtime reopens a closed standard descriptor on `/dev/null`
/// (read-write) before `main`, after which it cannot be told from a
/// `/dev/null` the caller handed over on purpose (Python's
/// `subprocess.DEVNULL`, Node's `"ignore"`, daemon(3), `1<>/dev/null`:
/// all read-write too). Those discard the report and must get the
/// verdict; a closed stdout must not read as a pass. So the descriptor is
/// looked at before the runtime's reopening: from `.init_array`, which the
/// dynamic loader runs before the C `main` that starts Rust's runtime.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// The probe of [`STDOUT_CLOSED`], run by the loader before `main`.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static PROBE_STDOUT: extern "C" fn() = probe_stdout;

#[cfg(target_os = "linux")]
extern "C" fn probe_stdout() {
    // SAFETY: fcntl(2) with F_GETFD reads a descriptor's flags: plain
    // integers in and out, no memory; its only error is EBADF (closed).
    let closed = unsafe { libc::fcntl(1, libc::F_GETFD) } == -1;
    STDOUT_CLOSED.store(closed, Ordering::Relaxed);
}

/// Fails when stdout was closed at start ([`STDOUT_CLOSED`]), as a write
/// to a closed descriptor fails: the report is lost (exit 3), but a
/// command that writes only files (`emit cuda -o`) still does its work.
pub fn stdout_open() -> io::Result<()> {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        Err(io::Error::other("stdout is closed"))
    } else {
        Ok(())
    }
}

/// Writes a file whole or not at all: into a new file beside it (in the
/// same folder, so on the same file system), then renamed over it.
/// A write that fails (a full disk, a file size limit, a kill) leaves the
/// previous file as it was and no temporary file behind, and a reader never
/// sees half a file (`hw run` rewrites its record while it runs). The
/// folder must let a file be created beside the target. A symbolic link is
/// followed (its target is replaced, the link kept); a path that is there
/// and is not a plain file (`/dev/stdout`, a FIFO) is written in place.
/// The file is not synced: that made an emission of the corpus (278
/// files) take 1-2 s instead of 0.06 s, and what survives a power cut is
/// the file system's (ext4 flushes a file renamed over another first).
pub fn write_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let target = if is_link {
        std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
    } else {
        path.to_path_buf()
    };
    let old = std::fs::metadata(&target).ok();
    if old.as_ref().is_some_and(|m| !m.is_file()) {
        return std::fs::write(&target, bytes);
    }
    let name = target
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?;
    // Named after this process, so no other live one writes it: one that
    // is there is left by a killed process that had this id.
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".{}.part", std::process::id()));
    let tmp: PathBuf = target.with_file_name(tmp_name);
    let _ = std::fs::remove_file(&tmp);
    let written = (|| {
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        if let Some(m) = &old {
            f.set_permissions(m.permissions())?;
        }
        f.write_all(bytes)?;
        std::fs::rename(&tmp, &target)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Reports a usage error (bad flags, an unreadable or invalid input the
/// run cannot start without) on stderr: exit 2.
pub fn usage_error(msg: &str) -> io::Result<ExitCode> {
    err(&format!("barrier-check: error: {msg}\n"))?;
    Ok(ExitCode::from(2))
}

/// Why a command stops before its work: a usage error (a bad flag value, an
/// input the run cannot start without), or a write that failed.
pub enum Refusal {
    Usage(String),
    /// An input the run cannot start without that has errors at their
    /// places (a configuration file): the rendered diagnostics, exit 2.
    Input(String),
    Output(io::Error),
}

impl From<io::Error> for Refusal {
    fn from(e: io::Error) -> Refusal {
        Refusal::Output(e)
    }
}

impl Refusal {
    /// Reports it: a usage error on stderr with exit 2 ([`usage_error`]); a
    /// failed write goes on up (exit 3).
    pub fn report(self) -> io::Result<ExitCode> {
        match self {
            Refusal::Usage(msg) => usage_error(&msg),
            Refusal::Input(text) => {
                err(&text)?;
                Ok(ExitCode::from(2))
            }
            Refusal::Output(e) => Err(e),
        }
    }
}
