//! The PTX front end: a PTX module (what `nvcc -ptx` writes) to the same
//! [`bc_graph::Program`] a litmus file lowers to, so the explorer, the rule
//! checker, witnesses and every report work on compiled kernels unchanged.
//!
//! [`parse`] reads a module with positions and reports every error as a
//! [`Diagnostic`]; [`lower_entry`] lowers one `.entry` under a [`Launch`]:
//! calls are inlined ([`flatten`]), each instruction is classified
//! ([`ops`]), every thread of the launch is pre-evaluated on the values the
//! checker knows ([`trace`], which also reports every unknown value that
//! would steer control flow, an address or a barrier), and the result is
//! emitted as a litmus syntax tree with spans into the PTX text ([`emit`])
//! that `bc_graph::lower` lowers as it lowers any litmus file. The mapping
//! and the abstraction are described in docs/ptx.md.
//!
//! I/O-free: the command line reads files and runs nvcc.

pub mod ast;
pub mod emit;
pub mod flatten;
pub mod lexer;
pub mod ops;
pub mod parser;
pub mod trace;

pub use ast::Module;
pub use parser::parse;

use ast::{Func, Space};
use bc_syntax::{Diagnostic, FindingKind, Ident, SourceFile, Span};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// How a kernel is launched (`--block`, `--grid`, `--param`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Launch {
    pub block: Option<[u64; 3]>,
    pub grid: Option<[u64; 3]>,
    /// Blocks per cluster (`--cluster`; sm_90).
    pub cluster: Option<[u64; 3]>,
    /// Kernel parameter values, by full PTX name, by `param_N` or by `N`.
    pub params: BTreeMap<String, i64>,
    /// Lowering option (`--no-prune`): keep the accesses of locations
    /// that cannot race too (`trace::Trace::racy`; they cannot change a
    /// verdict, so they are left out by default).
    pub every_access: bool,
    /// A cooperative launch (`--cooperative`: `cudaLaunchCooperativeKernel`):
    /// the kernel is the litmus `kernel ... cooperative` (every block
    /// co-resident, so the grid is fair once a thread has run; `grid.sync`
    /// allowed).
    pub cooperative: bool,
}

/// Parses `X`, `XxY` or `XxYxZ` (each at least 1).
pub fn parse_dims(s: &str) -> Result<[u64; 3], String> {
    let parts: Vec<&str> = s.split('x').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("`{s}` is not X, XxY or XxYxZ"));
    }
    let mut d = [1u64; 3];
    for (k, p) in parts.iter().enumerate() {
        d[k] = p
            .parse::<u64>()
            .ok()
            .filter(|v| (1..=65535).contains(v))
            .ok_or_else(|| format!("`{s}`: each size must be a number from 1 to 65535"))?;
    }
    Ok(d)
}

/// Parses `NAME=VALUE` (a decimal or `0x` integer).
pub fn parse_param(s: &str) -> Result<(String, i64), String> {
    let (n, v) = s.split_once('=').ok_or_else(|| format!("`{s}` is not NAME=VALUE"))?;
    let v = v.trim();
    let value = if let Some(h) = v.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()
    } else {
        v.parse::<i64>().ok()
    };
    let value = value.ok_or_else(|| format!("`{v}` is not an integer"))?;
    Ok((n.trim().to_string(), value))
}

/// What a source file's header comment says: launch flags of every
/// entry (`// barrier-check: --block 64 --param 2=10`) or of one
/// (`// barrier-check tile: --block 128`), and the expected verdict of
/// every entry (`// expect deadlock`) or of one (`// expect tile: race`),
/// one entry named by its PTX or source name; each with the span of its
/// line.
#[derive(Clone, Debug, Default)]
pub struct Header {
    pub args: Vec<String>,
    /// `// barrier-check NAME: FLAGS` lines: (NAME, FLAGS, line).
    pub entry_args: Vec<(String, Vec<String>, Span)>,
    pub expect: Option<(BTreeSet<FindingKind>, Span)>,
    pub expect_entry: Vec<(String, BTreeSet<FindingKind>, Span)>,
    pub errors: Vec<Diagnostic>,
}

impl Header {
    /// The expectation of `entry`: its own line, else the file's.
    pub fn expect_of(&self, entry: &str) -> Option<(BTreeSet<FindingKind>, Span)> {
        self.expect_entry
            .iter()
            .find(|(n, _, _)| entry_matches(entry, n))
            .map(|(_, k, s)| (k.clone(), *s))
            .or_else(|| self.expect.clone())
    }
}

/// Reads the header lines of a `.cu` or `.ptx` file (anywhere in the
/// file, each a `//` comment line of its own).
pub fn header(text: &str) -> Header {
    let mut h = Header::default();
    let mut at = 0usize;
    for line in text.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let t = line.trim();
        let Some(c) = t.strip_prefix("//") else { continue };
        let c = c.trim();
        let off = start + (line.len() - line.trim_start().len());
        let span = Span::new(off, off + t.len());
        if let Some(flags) = c.strip_prefix("barrier-check:") {
            h.args.extend(flags.split_whitespace().map(str::to_string));
        } else if let Some((name, flags)) = c.strip_prefix("barrier-check ").and_then(|r| {
            // `NAME:` is one word (a source name may hold `::`).
            let (word, flags) = r
                .trim_start()
                .split_once(char::is_whitespace)
                .unwrap_or((r.trim_start(), ""));
            word.strip_suffix(':').filter(|n| !n.is_empty()).map(|n| (n, flags))
        }) {
            let flags = flags.split_whitespace().map(str::to_string).collect();
            h.entry_args.push((name.to_string(), flags, span));
        } else if let Some(kinds) = c.strip_prefix("expect ") {
            // `expect NAME: KINDS` names an entry (kinds have no `:`).
            // (a source name may hold `::`: the kinds follow the last `:`).
            let (entry, kinds) = match kinds.rsplit_once(':') {
                Some((n, k)) if !n.contains(['(', ',']) => (Some(n.trim().to_string()), k),
                _ => (None, kinds),
            };
            let mut set = BTreeSet::new();
            for k in kinds.split(',').map(str::trim).filter(|k| !k.is_empty()) {
                if k == "ok" {
                    continue;
                }
                match FindingKind::parse(k) {
                    Some(f) => {
                        set.insert(f);
                    }
                    None => h
                        .errors
                        .push(Diagnostic::error(span, format!("unknown finding kind `{k}`"))),
                }
            }
            match entry {
                Some(n) => h.expect_entry.push((n, set, span)),
                None => h.expect = Some((set, span)),
            }
        }
    }
    h
}

/// Which line of `cu` each part of its PTX `ptx` stands for, from the
/// `.loc` directives (PTX ISA, "Debugging Directives"): `.loc F L C`
/// names file `F` of the `.file` list; an instruction inlined from a
/// header names the `.cu` line it was inlined at (`inlined_at F L C`).
/// `cu`'s file is the `.file` of the same file name. `None` when the PTX
/// names no such file (compiled without `-lineinfo`).
pub fn origin(ptx: &str, cu: bc_syntax::SourceFile) -> Option<bc_syntax::source::Origin> {
    let base = |p: &str| p.rsplit(['/', '\\']).next().unwrap_or(p).to_string();
    let want = base(&cu.name);
    let number = |t: &str| t.trim().parse::<u32>().ok();
    let mut file = None;
    for line in ptx.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix(".file") {
            let mut parts = rest.trim().splitn(2, char::is_whitespace);
            let (n, path) = (parts.next().and_then(number), parts.next().unwrap_or_default());
            let path = path.trim().trim_start_matches('"');
            let path = path.split('"').next().unwrap_or_default();
            if base(path) == want {
                file = file.or(n);
            }
        }
    }
    let file = file?;
    let mut marks = Vec::new();
    let mut at = 0usize;
    for line in ptx.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let Some(rest) = line.trim().strip_prefix(".loc") else {
            continue;
        };
        let mut parts = rest.split(',');
        let main: Vec<u32> = parts
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(number)
            .collect();
        let inlined: Vec<u32> = parts
            .find_map(|p| p.trim().strip_prefix("inlined_at"))
            .map(|p| p.split_whitespace().filter_map(number).collect())
            .unwrap_or_default();
        let (line, col) = match (main.as_slice(), inlined.as_slice()) {
            ([f, l, c, ..], _) if *f == file => (*l, *c),
            (_, [f, l, c, ..]) if *f == file => (*l, *c),
            _ => (0, 0),
        };
        marks.push((start as u32, line, col));
    }
    Some(bc_syntax::source::Origin { source: cu, marks })
}

/// The `.entry` functions with a body, in module order.
pub fn entries(m: &Module) -> Vec<&str> {
    m.funcs
        .iter()
        .filter(|f| f.entry && f.body.is_some())
        .map(|f| f.name.name.as_str())
        .collect()
}

/// The source name of an Itanium-mangled function (`_Z4tilePfi` ->
/// `tile`; a nested name `_ZN2ns4tileEv` -> `ns::tile`); other names
/// (and nested names with parts other than plain identifiers, such as
/// templates) unchanged.
pub fn short_name(n: &str) -> std::borrow::Cow<'_, str> {
    let Some(rest) = n.strip_prefix("_Z") else {
        return n.into();
    };
    // `<len><identifier>` at the front of `s`: (identifier, the rest).
    let ident = |s: &str| -> Option<(usize, usize)> {
        let digits = s.bytes().take_while(u8::is_ascii_digit).count();
        let len = s[..digits].parse::<usize>().ok().filter(|_| digits > 0)?;
        (s.len() >= digits + len).then_some((digits, len))
    };
    if let Some(mut s) = rest.strip_prefix('N') {
        let mut parts = Vec::new();
        while let Some((d, len)) = ident(s) {
            parts.push(&s[d..d + len]);
            s = &s[d + len..];
        }
        return if parts.len() >= 2 && s.starts_with('E') {
            parts.join("::").into()
        } else {
            n.into()
        };
    }
    match ident(rest) {
        Some((d, len)) => rest[d..d + len].into(),
        None => n.into(),
    }
}

/// Whether `name` picks entry `entry` (its PTX name or its source name).
pub fn entry_matches(entry: &str, name: &str) -> bool {
    entry == name || short_name(entry) == name
}

/// The model a module's `.target` asks for: `sm_70` to `sm_89` (and
/// `compute_*`) the pre-Hopper `cuda-sm80`, `sm_90` and later `cuda-sm90`.
pub fn model_for_target(m: &Module) -> Result<&'static str, Diagnostic> {
    let Some(t) = &m.target else {
        return Err(Diagnostic::file_error(
            "the module has no `.target`: pass `--model cuda-sm80` or `--model cuda-sm90`",
        ));
    };
    let digits: String = t
        .name
        .trim_start_matches("sm_")
        .trim_start_matches("compute_")
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    match digits.parse::<u32>() {
        Ok(n) if n >= 90 => Ok("cuda-sm90"),
        Ok(n) if n >= 70 => Ok("cuda-sm80"),
        _ => Err(Diagnostic::error(
            t.span,
            format!(
                "target `{}`: only sm_70 and later are modelled (independent thread scheduling); pass `--model` to check anyway",
                t.name
            ),
        )),
    }
}

/// A readable name for a variable: the source name of a function-local
/// static (`_ZZ4tilePfE1s` -> `s`), a kernel parameter as `param_N`.
fn region_name(n: &str) -> String {
    if let Some(rest) = n.strip_prefix("_ZZ") {
        if let Some(e) = rest.rfind('E') {
            let tail = &rest[e + 1..];
            let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
            if let Ok(len) = tail[..digits].parse::<usize>() {
                if digits > 0 && tail.len() == digits + len {
                    return tail[digits..].to_string();
                }
            }
        }
    }
    if let Some(k) = n.rfind("_param_") {
        return n[k + 1..].to_string();
    }
    n.to_string()
}

/// The launch's block size: `--block`, else `.reqntid`, else `.maxntid`;
/// a block the module contradicts is an error.
fn block_of(f: &Func, launch: &Launch) -> Result<[u64; 3], Diagnostic> {
    let total = |d: [u64; 3]| d[0] * d[1] * d[2];
    match (launch.block, f.reqntid, f.maxntid) {
        (Some(b), Some((r, span)), _) if b != r => Err(Diagnostic::error(
            span,
            format!(
                "`--block {}x{}x{}` contradicts `.reqntid` ({}x{}x{})",
                b[0], b[1], b[2], r[0], r[1], r[2]
            ),
        )),
        (Some(b), _, Some((m, span))) if total(b) > total(m) => Err(Diagnostic::error(
            span,
            format!(
                "`--block` of {} threads exceeds `.maxntid` ({} threads)",
                total(b),
                total(m)
            ),
        )),
        (Some(b), _, _) => Ok(b),
        (None, Some((r, _)), _) => Ok(r),
        (None, None, Some((m, _))) => Ok(m),
        (None, None, None) => Err(Diagnostic::error(
            f.name.span,
            "no block size: pass `--block X[xYxZ]` (or give the kernel `__launch_bounds__`)",
        )),
    }
}

/// Blocks per cluster: `--cluster`, else `.reqnctapercluster`; only 1-D
/// clusters of a 1-D grid (the litmus `cluster_size`), dividing the grid.
fn cluster_of(f: &Func, launch: &Launch, grid: [u64; 3]) -> Result<Option<u64>, Diagnostic> {
    let (c, span) = match (launch.cluster, f.reqnctapercluster) {
        (Some(c), Some((r, span))) if c != r => {
            return Err(Diagnostic::error(
                span,
                format!(
                    "`--cluster {}x{}x{}` contradicts `.reqnctapercluster`",
                    c[0], c[1], c[2]
                ),
            ))
        }
        (Some(c), _) => (c, f.name.span),
        (None, Some((r, span))) => (r, span),
        (None, None) => return Ok(None),
    };
    if c[1] * c[2] != 1 || grid[1] * grid[2] != 1 {
        return Err(Diagnostic::error(span, "only 1-D clusters of a 1-D grid are supported"));
    }
    if !grid[0].is_multiple_of(c[0]) {
        return Err(Diagnostic::error(
            span,
            format!(
                "a grid of {} blocks is not a whole number of clusters of {}",
                grid[0], c[0]
            ),
        ));
    }
    Ok(Some(c[0]))
}

/// The lowered entry, or every error (parse, unsupported instruction,
/// inconclusive value, lowering).
pub fn lower_entry(
    module: &Module,
    text: &str,
    test_name: &str,
    entry: &str,
    launch: &Launch,
    model: bc_models::Model,
) -> Result<bc_graph::Program, Vec<Diagnostic>> {
    lower_entry_until(module, text, test_name, entry, launch, model, None).map_err(|e| match e {
        LowerError::Input(ds) => ds,
        LowerError::Timeout => Vec::new(),
    })
}

/// Why an entry did not lower.
#[derive(Debug)]
pub enum LowerError {
    /// Every error of the input (as [`lower_entry`] gives them).
    Input(Vec<Diagnostic>),
    /// The deadline passed while the threads were pre-evaluated (a
    /// `--timeout` covers lowering too): the answer is a `stop`, never
    /// a pass.
    Timeout,
}

impl From<Vec<Diagnostic>> for LowerError {
    fn from(ds: Vec<Diagnostic>) -> LowerError {
        LowerError::Input(ds)
    }
}

/// [`lower_entry`], giving up at `deadline`.
pub fn lower_entry_until(
    module: &Module,
    text: &str,
    test_name: &str,
    entry: &str,
    launch: &Launch,
    model: bc_models::Model,
    deadline: Option<std::time::Instant>,
) -> Result<bc_graph::Program, LowerError> {
    let source = SourceFile::new("", text);
    let Some(f) = module
        .funcs
        .iter()
        .find(|f| f.entry && f.name.name == entry && f.body.is_some())
    else {
        return Err(vec![Diagnostic::file_error(format!("no `.entry {entry}` in this module"))].into());
    };
    let block = block_of(f, launch).map_err(|d| vec![d])?;
    let grid = launch.grid.unwrap_or([1, 1, 1]);
    let cluster = cluster_of(f, launch, grid).map_err(|d| vec![d])?;
    let threads = block[0] * block[1] * block[2];
    let blocks = grid[0] * grid[1] * grid[2];
    if threads * blocks > 4096 {
        return Err(vec![Diagnostic::error(
            f.name.span,
            format!(
                "{} threads in all: at most 4096 can be checked (pass a smaller `--block` or `--grid`)",
                threads * blocks
            ),
        )]
        .into());
    }
    let (flat, mut diags) = flatten::flatten(module, f);

    // Regions: shared variables, then global variables and pointer parameters.
    let mut regions = Vec::new();
    let mut symbols = HashMap::new();
    let mut names_used = HashSet::new();
    let mut add = |regions: &mut Vec<trace::Region>,
                   raw: &str,
                   size: Option<u64>,
                   shared: bool,
                   init: (Option<Option<Vec<i64>>>, u32),
                   align: u64,
                   span: Span| {
        let k = regions.len() as i64;
        let base = if shared {
            0x1000_0000 + k * trace::REGION_STRIDE
        } else {
            (k + 1) * trace::GLOBAL_STRIDE
        };
        let mut name = region_name(raw);
        while !names_used.insert(name.clone()) {
            name.push('\'');
        }
        regions.push(trace::Region {
            name,
            base,
            size,
            shared,
            init: init.0,
            elem_bytes: init.1,
            workspace: false,
            pointer: false,
            align,
            span,
        });
        base
    };
    // Every `extern .shared` array without a size is the block's dynamic
    // shared memory: they all start at one address (CUDA guide, the
    // `extern __shared__` arrays), so they share one region.
    let mut dynamic_shared: Option<i64> = None;
    for v in module.vars.iter().chain(&flat.vars) {
        match v.space {
            Space::Shared if v.is_extern && v.bytes().is_none() => {
                let base = *dynamic_shared.get_or_insert_with(|| {
                    add(
                        &mut regions,
                        &v.name.name,
                        None,
                        true,
                        (None, v.elem_bytes),
                        v.align.unwrap_or(u64::from(v.elem_bytes)),
                        v.span,
                    )
                });
                symbols.insert(v.name.name.clone(), base);
            }
            // A `.const` variable (`__constant__`) is a global region too:
            // its address may be taken; loads from it are data.
            Space::Shared | Space::Global | Space::Const => {
                let base = add(
                    &mut regions,
                    &v.name.name,
                    v.bytes(),
                    v.space == Space::Shared,
                    (v.init.clone(), v.elem_bytes),
                    v.align.unwrap_or(u64::from(v.elem_bytes)),
                    v.span,
                );
                symbols.insert(v.name.name.clone(), base);
            }
            _ => {}
        }
    }
    // A cooperative launch's grid workspace (cooperative groups'
    // `grid_workspace`: a size word, then the `barrier` word grid sync
    // counts on), found through `%envreg1`/`%envreg2`.
    let workspace = launch.cooperative.then(|| {
        let base = add(
            &mut regions,
            "grid_workspace",
            Some(8),
            false,
            (None, 4),
            256,
            f.name.span,
        );
        if let Some(r) = regions.last_mut() {
            r.workspace = true;
        }
        base
    });
    let mut params = HashMap::new();
    let mut param_hint = HashMap::new();
    for (k, p) in f.params.iter().enumerate() {
        let short = region_name(&p.name.name);
        let given = [p.name.name.clone(), short.clone(), k.to_string()]
            .iter()
            .find_map(|n| launch.params.get(n).copied());
        param_hint.insert(p.name.name.clone(), k.to_string());
        let v = match given {
            Some(v) => ops::ParamValue::Known(v),
            None if p.len.is_none() && matches!(p.ty.as_str(), "u64" | "b64" | "s64") => {
                let base = add(&mut regions, &p.name.name, None, false, (None, 1), 256, p.name.span);
                if let Some(r) = regions.last_mut() {
                    r.pointer = true;
                }
                ops::ParamValue::Pointer(base)
            }
            None => ops::ParamValue::Unknown,
        };
        params.insert(p.name.name.clone(), v);
    }

    // Labels and classification.
    let label_names: HashSet<String> = flat
        .items
        .iter()
        .filter_map(|i| match i {
            flatten::FItem::Label(l, _) => Some(l.clone()),
            _ => None,
        })
        .collect();
    let mut ctx = ops::Ctx {
        regs: ops::Regs::default(),
        block,
        grid,
        cluster: cluster.unwrap_or(1),
        explicit_cluster: cluster.is_some(),
        symbols,
        params,
        param_hint,
        locals: module
            .vars
            .iter()
            .chain(&flat.vars)
            .filter(|v| v.space == Space::Local)
            .map(|v| v.name.name.clone())
            .collect(),
        plain_regs: flat.plain_regs.iter().cloned().collect(),
        pred_regs: flat.pred_regs.iter().cloned().collect(),
        labels: &label_names,
        workspace,
    };
    let mut code = Vec::new();
    let mut labels_at: Vec<Vec<(String, Span)>> = vec![Vec::new()];
    let mut label_ix = HashMap::new();
    for item in &flat.items {
        match item {
            flatten::FItem::Label(l, s) => {
                if label_ix.insert(l.clone(), code.len()).is_some() {
                    diags.push(Diagnostic::error(*s, format!("the label `{l}` is defined twice")));
                }
                labels_at[code.len()].push((l.clone(), *s));
            }
            flatten::FItem::Ins { ins, loc } => match ctx.classify(ins, *loc) {
                Ok(c) => {
                    code.push(c);
                    labels_at.push(Vec::new());
                }
                Err(d) => diags.push(d),
            },
        }
    }
    if !diags.is_empty() {
        return Err(diags.into());
    }
    let regs = std::mem::take(&mut ctx.regs);
    let tr = trace::trace(
        &code,
        &label_ix,
        regs.names.len(),
        &regions,
        (blocks, threads),
        &source,
        deadline,
    );
    if tr.timed_out {
        return Err(LowerError::Timeout);
    }
    if !tr.diags.is_empty() {
        // Name the CUDA line too, where `.loc` gives one.
        let files = file_names(module);
        let mut diags = tr.diags;
        for d in &mut diags {
            let at = code.iter().find(|c| Some(c.span) == d.span).and_then(|c| c.loc);
            if let Some((file, line)) = at {
                if let Some(name) = files.get(&file) {
                    d.notes.insert(0, format!("at {name}:{line} in the CUDA source"));
                }
            }
        }
        return Err(diags.into());
    }
    // The instructions of spin loops: their loops are not bounded.
    let spinning: HashSet<Span> = code
        .iter()
        .zip(&tr.sites)
        .filter(|(_, s)| s.in_spin)
        .map(|(c, _)| c.span)
        .collect();
    let mut em = emit::Emitter::new(&code, &tr, &regs.names, &regions, &labels_at, blocks, threads);
    em.prune = !launch.every_access;
    let name = Ident {
        name: test_name.to_string(),
        span: f.name.span,
    };
    let lit = em.litmus(name, blocks, threads, cluster.unwrap_or(1), launch.cooperative, f.span);
    if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
        return Err(LowerError::Timeout);
    }
    let mut program = bc_graph::lower(&lit, text, model)?;
    annotate(&mut program, &code, module);
    bounded(&mut program, &spinning);
    Ok(program)
}

/// The `.file` numbers of the module and their file names (no folders).
fn file_names(module: &Module) -> HashMap<u32, &str> {
    module
        .files
        .iter()
        .map(|(n, path)| (*n, path.rsplit('/').next().unwrap_or(path)))
        .collect()
}

/// Tidies each instruction's text (whitespace, the `;`) and appends the
/// CUDA line (from `.loc`), for witnesses: `bar.sync 0  // k.cu:12`.
/// Marks every backward jump and branch as closing a bounded loop
/// (`Code::counted_loops`): the pre-evaluation ran each thread's whole
/// path, which the explorer follows exactly (every value that steers it
/// is known, and a retry loop around a poll became a blocking wait:
/// `trace.rs`), so no execution of a kernel that got this far runs
/// forever. The explorer then keeps symmetry and skips the liveness
/// analysis, as for a litmus file without `while` loops. The exception is
/// a spin loop (`spinning`: the spans of its instructions), which runs as
/// long as the location it polls says: its backward branches are left
/// uncounted (its `await` already makes the program one that need not
/// end).
fn bounded(p: &mut bc_graph::Program, spinning: &HashSet<Span>) {
    use bc_graph::InstrKind;
    for c in &mut p.codes {
        let back: Vec<u32> = c
            .instrs
            .iter()
            .enumerate()
            .filter(|(_, i)| !spinning.contains(&i.span))
            .filter(|(pc, i)| match &i.kind {
                InstrKind::Jump(to) => (*to as usize) <= *pc,
                InstrKind::Branch { then, els, .. } => (*then as usize) <= *pc || (*els as usize) <= *pc,
                _ => false,
            })
            .map(|(pc, _)| pc as u32)
            .collect();
        c.counted_loops.extend(back);
    }
}

fn annotate(p: &mut bc_graph::Program, code: &[ops::CInstr], module: &Module) {
    let files = file_names(module);
    let by_span: HashMap<Span, (u32, u32)> = code.iter().filter_map(|c| c.loc.map(|l| (c.span, l))).collect();
    for c in &mut p.codes {
        for i in &mut c.instrs {
            // One space between operands, no `;`: `ld.shared.f32 %f2, [%r13]`.
            let text = i.text.split_whitespace().collect::<Vec<_>>().join(" ");
            i.text = text.trim_end_matches(';').trim_end().to_string();
            if let Some((file, line)) = by_span.get(&i.span) {
                if let Some(name) = files.get(file) {
                    i.text = format!("{}  // {name}:{line}", i.text);
                }
            }
        }
    }
}
