//! The explorer's floors, checked from its sources (issue 34;
//! docs/ARCHITECTURE.md, "The explore crate"). Every `crate::` and
//! `super::` path in a file of `src/` is an arrow to the file that defines
//! the module it names; the test holds:
//!
//! - every arrow goes to the same floor or a lower one (floors: `state/`
//!   1, `analysis/` 2, `semantics/` 3, `reductions/` 4, `search/` 5, the
//!   facade `lib.rs`, `explorer.rs` and the `tests.rs` module 6);
//! - no reduction (a file or a folder of `reductions/`) imports another
//!   reduction, nor the reductions' list (`reductions/mod.rs`, which
//!   composes them);
//! - no circle of files;
//! - no method defined in a file of a higher floor is called in a file of
//!   a lower one (methods named once in the crate, so that a call names
//!   its definition: the `impl System` blocks are spread over floors 3-5,
//!   and a call is an arrow no `use` line shows);
//! - no file has 900 lines or more;
//! - no file does I/O: only the cli crate touches files, the environment,
//!   stdout and stderr (docs/ARCHITECTURE.md, "Invariants").
//!
//! `just layers` prints the table this test measures.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_LINES: usize = 900;

/// What only the cli crate may use (a debugging print left behind, an
/// environment switch).
const IO: &[&str] = &[
    "std::env",
    "std::fs",
    "std::io::std",
    "println!",
    "eprintln!",
    "print!(",
    "eprint!(",
    "dbg!(",
];

/// A source file: its module path (`state::budget`; `` for `lib.rs`), its
/// floor, its text.
struct File {
    module: String,
    floor: u8,
    text: String,
}

/// The lines (from 1) of `text` whose code (comments left out) uses one
/// of [`IO`], with the one it uses.
fn io_uses(text: &str) -> Vec<(usize, &'static str)> {
    text.lines()
        .enumerate()
        .filter_map(|(n, line)| {
            let code = line.split("//").next().unwrap_or("");
            IO.iter().find(|io| code.contains(*io)).map(|io| (n + 1, *io))
        })
        .collect()
}

fn floor_of(module: &str) -> u8 {
    match module.split("::").next().unwrap_or("") {
        "state" => 1,
        "analysis" => 2,
        "semantics" => 3,
        "reductions" => 4,
        "search" => 5,
        _ => 6,
    }
}

/// The reduction a file belongs to: `compact` for `reductions/compact.rs`
/// or a file of `reductions/compact/`; none for the list that composes
/// them (`reductions/mod.rs`) and for files of other floors.
fn reduction(f: &File) -> Option<&str> {
    (f.floor == 4).then(|| f.module.split("::").nth(1)).flatten()
}

/// Whether an arrow from `f` to `g` goes from one reduction to another one
/// (or to the list).
fn across_reductions(f: &File, g: &File) -> bool {
    reduction(f).is_some() && g.floor == 4 && reduction(g) != reduction(f)
}

/// Method names of the standard library that a file of the crate also
/// defines once: a call of one names the standard library's as often as
/// the crate's, so it is no arrow.
const STD_NAMES: &[&str] = &[
    "iter", "get", "len", "insert", "contains", "next", "clear", "extend", "push",
    // `Iterator::find` (and `HashTable::find`): defined twice while the
    // visited set lived in this crate, once now that it is `bc-par`.
    "find",
];

fn floor_name(f: u8) -> &'static str {
    ["", "state", "analysis", "semantics", "reductions", "search", "facade"][f as usize]
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read src")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

fn load() -> Vec<File> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    walk(&src, &mut paths);
    paths
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(&src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
            if parts.last().is_some_and(|l| l == "mod" || l == "lib") {
                parts.pop();
            }
            let module = parts.join("::");
            File {
                floor: floor_of(&module),
                module,
                text: std::fs::read_to_string(&p).expect("read source"),
            }
        })
        .collect()
}

/// The identifier segments of the path starting at `at` (`a::b::c`).
fn path_at(text: &str, at: usize) -> Vec<&str> {
    let rest = &text[at..];
    let mut segs = Vec::new();
    let mut s = rest;
    loop {
        let n = s
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(s.len());
        if n == 0 {
            break;
        }
        segs.push(&s[..n]);
        s = &s[n..];
        match s.strip_prefix("::") {
            Some(t) => s = t,
            None => break,
        }
    }
    segs
}

/// The files `f` names through `crate::` or `super::` paths (by index),
/// each the longest module prefix of the path that is a file. A `use`
/// group (`crate::a::{b, c}`) names `a`'s file, and its members when they
/// are modules.
fn arrows(files: &[File], i: usize) -> BTreeSet<usize> {
    let modules: BTreeMap<&str, usize> = files.iter().enumerate().map(|(k, f)| (f.module.as_str(), k)).collect();
    let me = &files[i];
    let mut out = BTreeSet::new();
    let mut resolve = |base: Vec<String>, rest: &str| {
        // The longest prefix of `base` that is a module file.
        let mut best = None;
        for n in 0..=base.len() {
            if let Some(&k) = modules.get(base[..n].join("::").as_str()) {
                best = Some(k);
            }
        }
        if let Some(k) = best {
            out.insert(k);
        }
        // `crate::a::{b, c::d}`: each member too.
        if let Some(group) = rest.strip_prefix("::{") {
            let end = group.find('}').unwrap_or(group.len());
            for member in group[..end].split(',') {
                let m = member.trim();
                let segs = path_at(m, 0);
                let mut full = base.clone();
                full.extend(segs.iter().map(|s| s.to_string()));
                for n in (base.len() + 1)..=full.len() {
                    if let Some(&k) = modules.get(full[..n].join("::").as_str()) {
                        out.insert(k);
                    }
                }
            }
        }
    };
    let text = &me.text;
    for (at, _) in text.match_indices("crate::") {
        let segs = path_at(text, at + "crate::".len());
        let base: Vec<String> = segs.iter().map(|s| s.to_string()).collect();
        let len: usize = "crate::".len() + segs.iter().map(|s| s.len() + 2).sum::<usize>() - 2;
        resolve(base, &text[(at + len).min(text.len())..]);
    }
    // `super::x` in module `a::b` names `a::x` (in `a/mod.rs`, module
    // `a`, it names the root's `x`).
    // In an inline module (`mod tests { use super::*; }`), `super` is the
    // file itself: no arrow.
    let inline = text
        .match_indices("\nmod ")
        .chain(text.match_indices("\n    mod "))
        .filter(|&(at, _)| {
            text[at + 1..]
                .lines()
                .next()
                .is_some_and(|l| l.trim_end().ends_with('{'))
        })
        .map(|(at, _)| at)
        .min()
        .unwrap_or(usize::MAX);
    for (at, _) in text.match_indices("super::") {
        if (at > 0 && text.as_bytes()[at - 1] == b':') || at > inline {
            continue;
        }
        let segs = path_at(text, at + "super::".len());
        let mut base: Vec<String> = me
            .module
            .split("::")
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        base.pop();
        base.extend(segs.iter().map(|s| s.to_string()));
        resolve(base, "");
    }
    out.remove(&i);
    out
}

/// Names of methods and functions defined exactly once in the crate, with
/// the file defining them.
fn unique_fns(files: &[File]) -> BTreeMap<String, usize> {
    let mut seen: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, f) in files.iter().enumerate() {
        for line in f.text.lines() {
            let t = line.trim_start();
            let t = t
                .strip_prefix("pub(crate) ")
                .or_else(|| t.strip_prefix("pub "))
                .unwrap_or(t);
            if let Some(rest) = t.strip_prefix("fn ") {
                let name = path_at(rest, 0).first().map(|s| s.to_string()).unwrap_or_default();
                if !name.is_empty() {
                    seen.entry(name).or_default().push(i);
                }
            }
        }
    }
    seen.into_iter()
        .filter(|(k, v)| v.len() == 1 && !STD_NAMES.contains(&k.as_str()))
        .map(|(k, v)| (k, v[0]))
        .collect()
}

/// Method calls (`.name(`) in `f`'s code (comments left out) of functions
/// defined once, in another file.
fn method_arrows(files: &[File], fns: &BTreeMap<String, usize>, i: usize) -> BTreeMap<usize, BTreeSet<String>> {
    let mut out: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
    for line in files[i].text.lines() {
        let code = line.split("//").next().unwrap_or("");
        for (at, _) in code.match_indices('.') {
            let name = path_at(code, at + 1);
            let Some(&name) = name.first() else { continue };
            if !code[at + 1 + name.len()..].starts_with('(') {
                continue;
            }
            if let Some(&k) = fns.get(name) {
                if k != i {
                    out.entry(k).or_default().insert(name.to_string());
                }
            }
        }
    }
    out
}

/// Strongly connected components with more than one file.
fn circles(n: usize, edges: &[BTreeSet<usize>]) -> Vec<Vec<usize>> {
    // Kosaraju over the file graph.
    fn order(v: usize, edges: &[BTreeSet<usize>], seen: &mut [bool], out: &mut Vec<usize>) {
        seen[v] = true;
        for &w in &edges[v] {
            if !seen[w] {
                order(w, edges, seen, out);
            }
        }
        out.push(v);
    }
    let mut seen = vec![false; n];
    let mut post = Vec::new();
    for v in 0..n {
        if !seen[v] {
            order(v, edges, &mut seen, &mut post);
        }
    }
    let mut rev = vec![BTreeSet::new(); n];
    for (v, es) in edges.iter().enumerate() {
        for &w in es {
            rev[w].insert(v);
        }
    }
    let mut seen = vec![false; n];
    let mut comps = Vec::new();
    for &v in post.iter().rev() {
        if !seen[v] {
            let mut comp = Vec::new();
            order(v, &rev, &mut seen, &mut comp);
            if comp.len() > 1 {
                comp.sort();
                comps.push(comp);
            }
        }
    }
    comps
}

fn name(f: &File) -> String {
    if f.module.is_empty() {
        "lib".into()
    } else {
        f.module.clone()
    }
}

#[test]
fn the_explorer_is_built_in_floors() {
    let files = load();
    let n = files.len();
    let edges: Vec<BTreeSet<usize>> = (0..n).map(|i| arrows(&files, i)).collect();
    let fns = unique_fns(&files);
    let mut problems = Vec::new();
    let mut per_floor: BTreeMap<(u8, u8), usize> = BTreeMap::new();
    for (i, es) in edges.iter().enumerate() {
        for &j in es {
            let (a, b) = (files[i].floor, files[j].floor);
            *per_floor.entry((a, b)).or_default() += 1;
            if b > a {
                problems.push(format!(
                    "{} (floor {}) imports {} (floor {})",
                    name(&files[i]),
                    floor_name(a),
                    name(&files[j]),
                    floor_name(b)
                ));
            }
            if across_reductions(&files[i], &files[j]) {
                problems.push(format!(
                    "{} imports {}: no reduction imports another (compose them in reductions/mod.rs)",
                    name(&files[i]),
                    name(&files[j])
                ));
            }
        }
    }
    for (i, f) in files.iter().enumerate() {
        for (j, names) in method_arrows(&files, &fns, i) {
            let g = &files[j];
            if g.floor > f.floor || across_reductions(f, g) {
                problems.push(format!(
                    "{} (floor {}) calls {} of {} (floor {})",
                    name(f),
                    floor_name(f.floor),
                    names.iter().cloned().collect::<Vec<_>>().join(", "),
                    name(g),
                    floor_name(g.floor)
                ));
            }
        }
        for (line, io) in io_uses(&f.text) {
            problems.push(format!("{}:{line}: `{io}`: only the cli crate does I/O", name(f)));
        }
        let lines = f.text.lines().count();
        if lines >= MAX_LINES {
            problems.push(format!("{} has {lines} lines (at most {})", name(f), MAX_LINES - 1));
        }
    }
    for c in circles(n, &edges) {
        let names: Vec<String> = c.iter().map(|&i| name(&files[i])).collect();
        problems.push(format!("circle: {}", names.join(" <-> ")));
    }
    // The table `just layers` prints.
    let total: usize = edges.iter().map(BTreeSet::len).sum();
    let largest = files.iter().max_by_key(|f| f.text.lines().count()).unwrap();
    println!(
        "bc-explore: {n} files, {total} import arrows, largest file {} ({} lines)",
        name(largest),
        largest.text.lines().count()
    );
    println!("arrows by floor (from -> to):");
    for ((a, b), k) in &per_floor {
        println!("  {:>10} -> {:<10} {k}", floor_name(*a), floor_name(*b));
    }
    assert!(
        problems.is_empty(),
        "the explorer's floors are broken:\n{}",
        problems.join("\n")
    );
}

/// The house rule beyond this crate: no crate but the cli (`crates/cli`)
/// touches files, the environment, stdout or stderr, in its sources.
#[test]
fn no_crate_but_the_cli_does_io() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut problems = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&crates)
        .expect("crates")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("src").is_dir() && !p.ends_with("cli"))
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 7, "the crates folder: {dirs:?}");
    for dir in dirs {
        let mut paths = Vec::new();
        walk(&dir.join("src"), &mut paths);
        for p in paths {
            let text = std::fs::read_to_string(&p).expect("read source");
            for (line, io) in io_uses(&text) {
                problems.push(format!("{}:{line}: `{io}`", p.display()));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "only the cli crate does I/O:\n{}",
        problems.join("\n")
    );
}
