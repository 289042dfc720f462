//! Everything the program prints goes through here, checked: a report that
//! cannot be written (stdout closed or full, a broken pipe) is exit 3, never
//! a silent pass.

use std::io::{self, Write};
use std::process::ExitCode;

/// Exit code when the report could not be written (stdout or stderr full,
/// closed, or a broken pipe): the run's verdicts were lost, so it must not
/// read as a pass (docs/ci.md, "Exit codes"; docs/reliability.md).
pub const EXIT_OUTPUT: u8 = 3;

/// Writes to stdout. Every byte the program prints goes through this or
/// [`err`], so every write is checked (no `print!` anywhere).
pub fn out(s: &str) -> io::Result<()> {
    io::stdout().lock().write_all(s.as_bytes())
}

/// Writes to stderr, checked like [`out`].
pub fn err(s: &str) -> io::Result<()> {
    io::stderr().lock().write_all(s.as_bytes())
}

/// Whether the process started with stdout closed (`>&-`). Rust's runtime
/// reopens a closed standard descriptor on `/dev/null` (read-write) before
/// `main`, so a report written there would vanish with exit 0. A shell's
/// `> /dev/null` opens it write-only, so the two can be told apart (only a
/// deliberate `1<>/dev/null` looks closed). Linux: `/proc/self/fdinfo`.
pub fn stdout_was_closed() -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let (Ok(fd1), Ok(null)) = (std::fs::metadata("/proc/self/fd/1"), std::fs::metadata("/dev/null")) else {
        return false;
    };
    if !(fd1.file_type().is_char_device() && fd1.rdev() == null.rdev()) {
        return false;
    }
    // `flags:` is octal; O_ACCMODE is 3 and O_RDWR 2.
    std::fs::read_to_string("/proc/self/fdinfo/1").is_ok_and(|info| {
        info.lines()
            .find_map(|l| l.strip_prefix("flags:"))
            .and_then(|f| u32::from_str_radix(f.trim(), 8).ok())
            .is_some_and(|f| f & 3 == 2)
    })
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
            Refusal::Output(e) => Err(e),
        }
    }
}
