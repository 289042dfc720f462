//! The inputs of a run: walking folders for `*.litmus` files, reading
//! files under a size cap, and checking the files side by side.

use barrier_check::{check_bytes, CheckOptions};
use bc_models::Model;
use bc_report::TestReport;
use std::io;
use std::path::{Component, Path, PathBuf};

/// Input size caps (docs/reliability.md): a larger input is an error, read
/// no further than one byte past the cap.
pub const MAX_LITMUS_BYTES: u64 = 1 << 20;
pub const MAX_MODEL_BYTES: u64 = 1 << 20;
pub const MAX_BASELINE_BYTES: u64 = 64 << 20;

/// Reads at most `cap` bytes of a file: a longer one (or an endless one
/// such as `/dev/zero`) is an error after `cap + 1` bytes, never a read
/// until memory runs out.
pub fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    file.take(cap + 1).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    if bytes.len() as u64 > cap {
        return Err(format!(
            "larger than {} MiB, the limit for this input (see docs/reliability.md)",
            cap >> 20
        ));
    }
    Ok(bytes)
}

/// Standard input, whole (`check -`), capped as [`read_capped`] caps a
/// file.
pub fn read_stdin(cap: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > cap {
        return Err(format!(
            "larger than {} MiB, the limit for this input (see docs/reliability.md)",
            cap >> 20
        ));
    }
    Ok(bytes)
}

/// A model file (`--model-file`), errors naming the file.
pub fn read_model_file(path: &Path) -> Result<Model, String> {
    let text = read_capped(path, MAX_MODEL_BYTES)
        .and_then(|b| String::from_utf8(b).map_err(|_| "not UTF-8 text".to_string()))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    // A positioned error reads `PATH:LINE:COL: model file: ...`.
    Model::from_toml(&text).map_err(|e| {
        let e = e.to_string();
        let sep = if e.starts_with(|c: char| c.is_ascii_digit()) {
            ":"
        } else {
            ": "
        };
        format!("{}{sep}{e}", path.display())
    })
}

/// One input of a run: a file to check, or a path that could not be
/// listed or read (reported as an input error, like a parse error).
pub enum Input {
    File(PathBuf),
    Unreadable(PathBuf, String),
    /// One entry of a PTX module (a `.ptx` file, or nvcc's output for a
    /// `.cu` file), ready to check.
    Kernel(Box<barrier_check::kernel::KernelJob>),
    /// A kernel file that cannot be checked (nvcc failed, a bad header, a
    /// module that does not parse): its report.
    Failed(Box<TestReport>),
    /// A litmus test read already (`check -`: standard input), by the name
    /// reports give it.
    Text(String, Vec<u8>),
}

/// Expands directories to their `*.litmus` files, sorted within each
/// folder. Each real file is listed once, however many symbolic links lead
/// to it, and each real folder is walked once (a link back to a folder
/// being walked, or already walked, is skipped), so link loops end. Links
/// are followed only after the real tree under an argument is walked, so a
/// file is named by its real path when it has one there. Folders and
/// entries that cannot be read are listed as [`Input::Unreadable`], and
/// the rest is still checked.
pub fn collect(paths: &[PathBuf]) -> Vec<Input> {
    collect_kinds(paths, &["litmus"], &Exclude::default())
}

/// [`collect`], listing the files of folders whose extension is one of
/// `exts` (`check` adds `ptx`, and `cu` when asked), leaving out the
/// files and folders the walk meets that `exclude` names (a path given
/// here is always listed).
pub fn collect_kinds(paths: &[PathBuf], exts: &[&str], exclude: &Exclude) -> Vec<Input> {
    use std::collections::HashSet;
    struct Walk<'e> {
        exts: &'e [&'e str],
        exclude: &'e Exclude,
        dirs: HashSet<PathBuf>,
        files: HashSet<PathBuf>,
        /// Symbolic links met in the walk, followed after it.
        links: Vec<PathBuf>,
        out: Vec<Input>,
    }
    impl Walk<'_> {
        fn file(&mut self, p: &Path) {
            // A path that does not resolve is kept: reading it reports why.
            if std::fs::canonicalize(p).map_or(true, |c| self.files.insert(c)) {
                self.out.push(Input::File(p.to_path_buf()));
            }
        }
        fn unreadable(&mut self, p: &Path, e: impl ToString) {
            self.out.push(Input::Unreadable(p.to_path_buf(), e.to_string()));
        }
        /// A path the walk met: a folder is walked, a `*.litmus` file
        /// listed; a dangling or looping link is an error only when it is
        /// named like a litmus file.
        fn entry(&mut self, p: &Path) {
            if self.exclude.excludes(p) {
                return;
            }
            let litmus = p.extension().is_some_and(|e| self.exts.iter().any(|x| e == *x));
            match std::fs::metadata(p) {
                Ok(m) if m.is_dir() => self.dir(p),
                Ok(m) if litmus && !m.is_file() => self.unreadable(p, "not a regular file (not read)"),
                Ok(_) if litmus => self.file(p),
                Ok(_) => {}
                Err(_) if !litmus && std::fs::symlink_metadata(p).is_ok_and(|m| m.is_symlink()) => {}
                Err(e) => self.unreadable(p, e),
            }
        }
        fn dir(&mut self, dir: &Path) {
            let real = match std::fs::canonicalize(dir) {
                Ok(r) => r,
                Err(e) => return self.unreadable(dir, e),
            };
            if !self.dirs.insert(real) {
                return;
            }
            let listing = match std::fs::read_dir(dir) {
                Ok(l) => l,
                Err(e) => return self.unreadable(dir, e),
            };
            let mut entries = Vec::new();
            for e in listing {
                match e {
                    Ok(e) => entries.push(e.path()),
                    Err(e) => self.unreadable(dir, e),
                }
            }
            entries.sort();
            for p in entries {
                if std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_symlink()) {
                    self.links.push(p);
                } else {
                    self.entry(&p);
                }
            }
        }
    }
    let mut walk = Walk {
        exts,
        exclude,
        dirs: HashSet::new(),
        files: HashSet::new(),
        links: Vec::new(),
        out: Vec::new(),
    };
    for p in paths {
        if p.is_dir() {
            walk.dir(p);
            // Following a link can meet more links: in the order met.
            let mut next = 0;
            while let Some(link) = walk.links.get(next).cloned() {
                walk.entry(&link);
                next += 1;
            }
            walk.links.clear();
        } else {
            walk.file(p);
        }
    }
    walk.out
}

/// The inputs to check: directories expanded and sorted, then this shard's
/// part (every N-th input from the K-th).
pub fn files_of(paths: &[PathBuf], shard: Option<(usize, usize)>) -> Result<Vec<Input>, String> {
    files_of_kinds(paths, shard, &["litmus"], None, &Exclude::default())
}

/// [`files_of`] with folders listing the files of these extensions; a
/// path `-` is `stdin` (a litmus test read from standard input), in its
/// place among the others.
pub fn files_of_kinds(
    paths: &[PathBuf],
    shard: Option<(usize, usize)>,
    exts: &[&str],
    stdin: Option<Input>,
    exclude: &Exclude,
) -> Result<Vec<Input>, String> {
    let mut files = Vec::new();
    let mut stdin = stdin;
    for run in paths.split_inclusive(|p| p.as_os_str() == "-") {
        let (last, rest) = run.split_last().expect("a run of paths is not empty");
        if last.as_os_str() == "-" {
            files.extend(collect_kinds(rest, exts, exclude));
            files.extend(stdin.take());
        } else {
            files.extend(collect_kinds(run, exts, exclude));
        }
    }
    if files.is_empty() {
        return Err("no .litmus files found".into());
    }
    if let Some((k, n)) = shard {
        files = files.into_iter().skip(k - 1).step_by(n).collect();
    }
    Ok(files)
}

/// Checks one input. One that cannot be read (missing, too large, an
/// unreadable folder) is a report with a file-level error, so every output
/// format lists it and counts it as an error, as the exit code does.
pub fn check_file(input: &Input, opts: &CheckOptions) -> TestReport {
    match input {
        Input::File(f) => {
            let name = f.display().to_string();
            match read_capped(f, MAX_LITMUS_BYTES) {
                Ok(bytes) => check_bytes(&name, &bytes, opts),
                Err(e) => barrier_check::unreadable(&name, &e),
            }
        }
        Input::Unreadable(p, e) => barrier_check::unreadable(&p.display().to_string(), e),
        Input::Kernel(job) => barrier_check::kernel::check_kernel(job, opts),
        Input::Failed(r) => (**r).clone(),
        Input::Text(name, bytes) => check_bytes(name, bytes, opts),
    }
}

/// Checks the inputs side by side ([`barrier_check::check_all`]), reading
/// each with [`check_file`].
pub fn check_files(
    files: &[Input],
    opts: &CheckOptions,
    each: impl FnMut(&TestReport) -> io::Result<()>,
) -> io::Result<Vec<TestReport>> {
    barrier_check::check_all(files, opts, check_file, each)
}

/// Glob patterns (`*`, `?`, `**`, `[...]`) of paths that a folder walk
/// leaves out, relative to a folder (the project configuration's,
/// `config.rs`, where they are read). A pattern without
/// a `/` matches a file or folder name at any depth (as in `.gitignore`);
/// one with a `/` matches the whole relative path. Paths named on the
/// command line are always checked.
#[derive(Debug, Default, Clone)]
pub struct Exclude {
    root: PathBuf,
    patterns: Vec<(glob::Pattern, bool)>,
}

impl Exclude {
    /// Patterns relative to `root`, each with whether it has no `/` (and
    /// so matches a name at any depth).
    pub fn new(root: PathBuf, patterns: Vec<(glob::Pattern, bool)>) -> Exclude {
        Exclude { root, patterns }
    }

    /// Whether the walk leaves out `path` (a file or folder it met).
    pub fn excludes(&self, path: &Path) -> bool {
        if self.patterns.is_empty() {
            return false;
        }
        let abs = lexical_absolute(path);
        let Ok(rel) = abs.strip_prefix(&self.root) else {
            return false;
        };
        let options = glob::MatchOptions {
            require_literal_separator: true,
            ..Default::default()
        };
        let name = rel.file_name().map(Path::new);
        self.patterns.iter().any(|(p, anywhere)| {
            p.matches_path_with(rel, options) || (*anywhere && name.is_some_and(|n| p.matches_path_with(n, options)))
        })
    }
}

/// `path` made absolute against the current folder, `.` and `..` taken
/// out without following links (a walked path need not resolve).
pub fn lexical_absolute(path: &Path) -> PathBuf {
    let base = if path.is_absolute() {
        PathBuf::new()
    } else {
        std::env::current_dir().unwrap_or_default()
    };
    let mut out = PathBuf::new();
    for c in base.join(path).components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}
