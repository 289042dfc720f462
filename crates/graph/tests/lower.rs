//! Lowering rejects input that would otherwise be silently truncated or
//! misread: out-of-range placement numbers and kernel sizes, misspelt
//! (dotted) instructions and registers that are read but never written.
//! Every error carries its position, and every error of a file is reported.

use bc_syntax::{parse, Diagnostic, SourceFile};

/// Lowers `text` under its own `model` line; the errors as
/// (line, column, message).
fn errors(text: &str) -> Vec<(u32, u32, String)> {
    let (lit, mut diags) = parse(text);
    let model = bc_graph::lower::resolve_model(&lit, None).expect("a model line");
    if let Err(more) = bc_graph::lower(&lit, text, model) {
        diags.extend(more);
    }
    let file = SourceFile::new("t.litmus", text);
    diags.sort_by_key(|d| d.span.map(|s| s.start));
    diags
        .iter()
        .map(|d: &Diagnostic| {
            let lc = file.line_col(d.span.expect("a position").start);
            (lc.line, lc.col, d.message.clone())
        })
        .collect()
}

fn lowers(text: &str) -> bool {
    let (lit, diags) = parse(text);
    let model = bc_graph::lower::resolve_model(&lit, None).unwrap();
    diags.is_empty() && bc_graph::lower(&lit, text, model).is_ok()
}

#[test]
fn placement_numbers_are_range_checked() {
    let e = errors(
        "litmus \"p\"\nmodel amdgpu\nbarrier B = 2\n\
         thread T0 { join B; arrive B; wait B }\n\
         thread T1 block=4294967296 cluster=4294967296 warp=4096 { join B; arrive B; wait B }\n\
         thread T2 block=1 block=2 { }\n",
    );
    let msgs: Vec<(u32, u32, &str)> = e.iter().map(|(l, c, m)| (*l, *c, m.as_str())).collect();
    assert_eq!(
        msgs,
        [
            (5, 17, "`block` must be an integer from 0 to 4095, found 4294967296"),
            (5, 36, "`cluster` must be an integer from 0 to 4095, found 4294967296"),
            (5, 52, "`warp` must be an integer from 0 to 4095, found 4096"),
            (6, 19, "duplicate attribute `block` (each attribute may be given once)"),
        ]
    );
    assert!(lowers(
        "litmus \"p\"\nmodel amdgpu\nthread T0 block=4095 cluster=4095 warp=4095 { }\n"
    ));
}

#[test]
fn kernel_sizes_are_range_checked_without_overflow() {
    let e = errors(
        "litmus \"k\"\nmodel cuda-sm90\n\
         kernel blocks=4611686018427387904 threads=2 { }\n\
         kernel blocks=1 cluster_size=4294967296 { }\n\
         kernel blocks=64 threads=128 { }\n\
         kernel blocks=0 threads=-1 cooperative=1 { }\n\
         kernel blocks=4 cluster_size=3 { }\n",
    );
    let msgs: Vec<(u32, u32, &str)> = e.iter().map(|(l, c, m)| (*l, *c, m.as_str())).collect();
    assert_eq!(
        msgs,
        [
            (
                3,
                15,
                "`blocks` must be an integer from 1 to 4096, found 4611686018427387904"
            ),
            (
                4,
                30,
                "`cluster_size` must be an integer from 1 to 4096, found 4294967296"
            ),
            (5, 1, "kernel creates 8192 threads; at most 4096 are supported"),
            (6, 15, "`blocks` must be an integer from 1 to 4096, found 0"),
            (6, 25, "`threads` must be an integer from 1 to 4096, found -1"),
            (6, 28, "`cooperative` is a flag and takes no value"),
            (7, 1, "blocks=4 is not a multiple of cluster_size=3"),
        ]
    );
    // The limit counts every declaration together.
    let e = errors("litmus \"k\"\nmodel cuda-sm90\nkernel blocks=4096 { }\nthread T0 { }\n");
    assert!(e.iter().any(|(_, _, m)| m.contains("4097 threads")), "{e:?}");
    assert!(lowers(
        "litmus \"k\"\nmodel cuda-sm90\nkernel blocks=64 threads=64 cluster_size=64 { }\n"
    ));
}

#[test]
fn misspelt_instructions_are_errors_with_suggestions() {
    let e = errors(
        "litmus \"t\"\nmodel cuda-sm90\nkernel blocks=2 cluster_size=2 {\n\
         \x20 t = cluster.barrier_arive\n\
         \x20 cluster.barrier_wait t\n\
         \x20 z = 1 + cluster.sync\n\
         \x20 cluster.x = 2\n\
         \x20 arive_wait\n\
         \x20 frobnicate\n\
         }\n",
    );
    let msgs: Vec<(u32, u32, &str)> = e.iter().map(|(l, c, m)| (*l, *c, m.as_str())).collect();
    assert_eq!(
        msgs,
        [
            (
                4,
                7,
                "unknown instruction `cluster.barrier_arive` (did you mean `cluster.barrier_arrive`?)"
            ),
            (
                6,
                11,
                "instruction `cluster.sync` is not a value; write it as its own statement (`r = cluster.sync ...`)"
            ),
            (
                7,
                3,
                "`cluster.x` is not a register: a name with a dot is an instruction, never a register"
            ),
            (8, 3, "unknown instruction `arive_wait` (did you mean `arrive_wait`?)"),
            (9, 3, "unknown instruction `frobnicate`"),
        ]
    );
    // A known instruction that the model lacks names the model, also in an
    // expression.
    let e = errors("litmus \"t\"\nmodel cuda-sm80\nthread T0 {\n  t = cluster.barrier_arrive\n  z = cluster.sync\n}\n");
    assert_eq!(e.len(), 2, "{e:?}");
    assert!(
        e.iter()
            .all(|(_, _, m)| m.contains("model `cuda-sm80` does not provide")),
        "{e:?}"
    );
}

/// An undeclared barrier or location gets the nearest declared name, and
/// a name far from every declaration gets none.
#[test]
fn misspelt_barriers_and_locations_get_suggestions() {
    let e = errors(
        "litmus \"u\"\nmodel amdgpu\nbarrier Bar = 1\nvar flag\n\
         thread T0 { arrive Br; wait Bar; r = load flg; store somewhere, 1 }\n",
    );
    let msgs: Vec<&str> = e.iter().map(|(_, _, m)| m.as_str()).collect();
    assert_eq!(
        msgs,
        [
            "`arrive` needs a declared barrier, found `Br` (did you mean `Bar`?)",
            "`load` needs a declared location (`var`), found `flg` (did you mean `flag`?)",
            "`store` needs a declared location (`var`), found `somewhere`",
        ]
    );
}

#[test]
fn misspelt_scopes_get_suggestions_and_the_list_names_grid() {
    let e = errors(
        "litmus \"s\"\nmodel cuda-sm80\nvar s scope=blok\nvar g scope=grd\nvar q scope=x\nvar ok scope=grid\n\
         kernel blocks=1 threads=1 { write s; write g; write q; write ok }\n",
    );
    let msgs: Vec<(u32, u32, &str)> = e.iter().map(|(l, c, m)| (*l, *c, m.as_str())).collect();
    let list = "scopes: thread, warp, block, cluster, device, grid";
    assert_eq!(
        msgs,
        [
            (3, 13, &*format!("unknown scope `blok` (did you mean `block`?); {list}")),
            (4, 13, &*format!("unknown scope `grd` (did you mean `grid`?); {list}")),
            (5, 13, &*format!("unknown scope `x`; {list}")),
        ]
    );
}

#[test]
fn registers_read_and_never_written_are_errors() {
    let e = errors(
        "litmus \"r\"\nmodel amdgpu\nbarrier B = 1\nthread T0 {\n\
         \x20 r = s_get_barrier_state -1\n\
         \x20 q = q + 1\n\
         \x20 if typo == 1 { exit }\n\
         \x20 wait B, tok\n\
         \x20 s = tid + bid + warp + lane + ntid\n\
         }\n\
         assert always T0:never == 0\n",
    );
    let msgs: Vec<(u32, u32, &str)> = e.iter().map(|(l, c, m)| (*l, *c, m.as_str())).collect();
    let never = |r: &str| {
        format!("register `{r}` is never written (registers start at 0, so this reads the constant 0); an instruction?")
    };
    assert_eq!(
        msgs,
        [
            (5, 7, never("s_get_barrier_state").as_str()),
            (7, 6, never("typo").as_str()),
            (8, 11, never("tok").as_str()),
            (11, 18, "thread `T0` has no register `never`"),
        ]
    );
    // Registers start at 0: reading one before its first write is legal,
    // in any order of the body, and assertions may read any register.
    assert!(lowers(
        "litmus \"r\"\nmodel amdgpu\nvar x\nthread T0 {\n  while r < 2 { r = r + 1 }\n  if s == 1 { exit }\n  s = load x\n  repeat n { }\n  n = 1\n}\nassert always T0:r == 2\n"
    ));
}

/// A misspelt register (in a body or an assertion) or thread (in an
/// assertion) names the nearest one.
#[test]
fn misspelt_registers_and_threads_get_suggestions() {
    let e = errors(
        "litmus \"r\"\nmodel amdgpu\nthread T0 {\n  count = 1\n  r = cuont + 1\n}\n\
         assert always T0:conut == 1 && T1:r == 2\n",
    );
    let msgs: Vec<(u32, u32, &str)> = e.iter().map(|(l, c, m)| (*l, *c, m.as_str())).collect();
    assert_eq!(
        msgs,
        [
            (
                5,
                7,
                "register `cuont` is never written (registers start at 0, so this reads the constant 0); did you mean `count`?"
            ),
            (7, 18, "thread `T0` has no register `conut` (did you mean `count`?)"),
            (7, 32, "unknown thread `T1` (did you mean `T0`?)"),
        ]
    );
}

/// `launch`, `device_sync` and `stream_query` are host only (litmus spec,
/// "Memory, control flow and host operations"): in a kernel or a device
/// thread each is an error at the instruction; in a `host` thread all lower.
#[test]
fn host_operations_are_host_only() {
    let e = errors(
        "litmus \"h\"\nmodel cuda-sm90\n\
         kernel K blocks=1 threads=1 {\n  device_sync\n}\n\
         kernel K2 blocks=1 threads=1 {\n  launch K, stream=0\n}\n\
         thread T0 {\n  r = stream_query 0\n  if r == 0 { launch K }\n}\n\
         host H {\n  launch K2\n}\n",
    );
    let msgs: Vec<(u32, u32, &str)> = e.iter().map(|(l, c, m)| (*l, *c, m.as_str())).collect();
    assert_eq!(
        msgs,
        [
            (
                4,
                3,
                "`device_sync` is a host operation: only a `host` thread may use it, not a kernel"
            ),
            (
                7,
                3,
                "`launch` is a host operation: only a `host` thread may use it, not a kernel"
            ),
            (
                10,
                7,
                "`stream_query` is a host operation: only a `host` thread may use it, not a device thread"
            ),
            (
                11,
                15,
                "`launch` is a host operation: only a `host` thread may use it, not a device thread"
            ),
        ]
    );
    assert!(lowers(
        "litmus \"h\"\nmodel cuda-sm90\nkernel K blocks=1 threads=1 { }\n\
         host H {\n  launch K, stream=0\n  r = stream_query 0\n  device_sync\n}\n"
    ));
}

/// Barrier arrays: a constant index is checked when lowering, a computed
/// one needs a model that judges an index out of range, and only barrier
/// operands are indexed.
#[test]
fn barrier_array_errors() {
    let e = errors(
        "litmus \"t\"\nmodel cuda-sm90\nbarrier full[2] = 1\nbarrier one = 1\nbarrier none[0]\n\
         thread T0 {\n\
         \x20 t = mbarrier.arrive full[2]\n\
         \x20 t = mbarrier.arrive one[0]\n\
         \x20 r = full[0] + 1\n\
         \x20 t = mbarrier.arrive full\n\
         \x20 tile.sync 3\n\
         }\n",
    );
    let msgs: Vec<(u32, u32, &str)> = e.iter().map(|(l, c, m)| (*l, *c, m.as_str())).collect();
    assert_eq!(
        msgs,
        [
            (5, 14, "a barrier array has 1 to 64 elements, found 0"),
            (7, 28, "index 2 is out of range: `full` has 2 elements (0 to 1)"),
            (8, 23, "`one` is not an array"),
            (
                9,
                7,
                "`full[...]` is not a value: an indexed barrier is only an operand of a barrier instruction"
            ),
            (10, 23, "`mbarrier.arrive` needs a declared barrier, found `full`"),
            (
                11,
                13,
                "`tile.sync` needs a constant tile size, a power of two from 1 to 32, found `3`"
            ),
        ]
    );
    // AMDGPU models have no invalid-barrier rule: a computed index is an
    // error there, a constant one is fine.
    let e = errors("litmus \"t\"\nmodel amdgpu\nbarrier b[2] = 1\nthread T0 {\n  r = 1\n  join b[r]\n  join b[0]\n}\n");
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(e[0].2.contains("needs a model with the invalid-barrier rule"), "{e:?}");
}

/// A lane-mask instruction in a host thread is an error naming the warp
/// barrier, not a panic (its declaration lies past the file's and the
/// model's: found by the grammar fuzz).
#[test]
fn lane_mask_barriers_in_a_host_are_errors() {
    for stmt in ["tile.sync 4", "__syncwarp 0x1"] {
        let e = errors(&format!(
            "litmus \"t\"\nmodel cuda-sm90\nhost H0 {{ {stmt} }}\nkernel K blocks=1 threads=1 {{ r = 1 }}\n"
        ));
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].2.contains("lane-mask barrier (scope=warp)"), "{e:?}");
    }
}

/// The async-group statements and their copies: operand errors, all at
/// once, at their positions.
#[test]
fn async_group_errors() {
    let e = errors(
        "litmus \"t\"\nmodel cuda-sm90\nbarrier M = 1\nvar d scope=block\nvar s\n\
         thread T0 {\n\
         \x20 r = 1\n\
         \x20 cp.async.wait_group r\n\
         \x20 cp.async.wait_group\n\
         \x20 cp.async d\n\
         \x20 cp.async.mbarrier.arrive d\n\
         \x20 cp.async.commit_group 1\n\
         \x20 x = cp.async.wait_all\n\
         \x20 cp.async M, s\n\
         }\n",
    );
    let msgs: Vec<(u32, u32, &str)> = e.iter().map(|(l, c, m)| (*l, *c, m.as_str())).collect();
    assert_eq!(
        msgs,
        [
            (
                8,
                23,
                "`cp.async.wait_group` takes one operand, a non-negative integer constant (found 1 operand(s))"
            ),
            (
                9,
                3,
                "`cp.async.wait_group` takes one operand, a non-negative integer constant (found 0 operand(s))"
            ),
            (
                10,
                3,
                "`cp.async` takes 2 or 3 operands (destination, source, optionally bytes), found 1"
            ),
            (11, 28, "`cp.async.mbarrier.arrive` needs a declared barrier, found `d`"),
            (12, 25, "`cp.async.commit_group` takes no operand"),
            (13, 3, "`cp.async.wait_all` returns no value"),
            (
                14,
                12,
                "`cp.async` needs a declared location (`var`) as its destination, found `M`"
            ),
        ]
    );
}

/// An async-group statement is expanded in place: the marker, then its
/// implementation, with every jump of the body renumbered around it.
#[test]
fn async_groups_expand_in_place() {
    let text = "litmus \"t\"\nmodel cuda-sm80\nvar d scope=block\nvar s\nvar x\n\
                thread T0 {\n  L: cp.async d, s\n  cp.async.wait_all\n  r = load x\n  if r == 0 { goto L }\n  read d\n}\n";
    let (lit, diags) = parse(text);
    assert!(diags.is_empty(), "{diags:?}");
    let model = bc_graph::lower::resolve_model(&lit, None).expect("a model line");
    let p = bc_graph::lower(&lit, text, model).expect("lowers");
    let code = &p.codes[p.threads[0].code.index()];
    let kinds: Vec<&bc_graph::InstrKind> = code.instrs.iter().map(|i| &i.kind).collect();
    let agents = bc_graph::copies::PLAIN_COPY_AGENTS;
    // Issue, marker, a commit per agent and a branch, wait and clear per agent.
    let bc_graph::InstrKind::AsyncGroup { op, len } = kinds[1] else {
        panic!("{kinds:?}")
    };
    assert_eq!((*op, *len as usize), (bc_graph::AsyncGroupOp::WaitAll, agents * 4));
    assert!(matches!(kinds[0], bc_graph::InstrKind::CopyIssue { age: Some(_), .. }));
    let after = 2 + agents * 4;
    assert!(matches!(kinds[after], bc_graph::InstrKind::Load { .. }), "{kinds:?}");
    // The goto back to `L` still reaches the issue; the branch around it
    // lands on `read d`, past the expansion.
    assert!(
        kinds.iter().any(|k| matches!(k, bc_graph::InstrKind::Jump(0))),
        "{kinds:?}"
    );
    let read = kinds
        .iter()
        .position(|k| matches!(k, bc_graph::InstrKind::Read { .. }))
        .expect("read d");
    assert!(kinds
        .iter()
        .any(|k| matches!(k, bc_graph::InstrKind::Branch { els, .. } if *els as usize == read)));
    // Every branch of the expansion stays inside it or leaves to the next statement.
    for (pc, k) in kinds.iter().enumerate().take(after).skip(2) {
        if let bc_graph::InstrKind::Branch { then, els, .. } = k {
            assert!(*then as usize > pc && *then as usize <= after, "{pc}: {k:?}");
            assert!(*els as usize > pc && *els as usize <= after, "{pc}: {k:?}");
        }
    }
}

/// Location lists (`[a, b]`): only a copy's destination and source take
/// one; every misuse is reported, all at once, at its position.
#[test]
fn location_list_errors() {
    let e = errors(
        "litmus \"t\"\nmodel cuda-sm90\nbarrier M = 1\nvar d scope=block\nvar e scope=block\nvar s\n\
         thread T0 {\n\
         \x20 cp.async [], [s]\n\
         \x20 cp.async [d, d], [s]\n\
         \x20 cp.async [d, x], []\n\
         \x20 read [d]\n\
         \x20 cp.async d, s, [e]\n\
         \x20 cp.async.mbarrier.arrive [M]\n\
         \x20 cp.async [d, e], [s]\n\
         \x20 cp.async.bulk [d, e], [], 8, M\n\
         }\n",
    );
    let msgs: Vec<(u32, u32, &str)> = e.iter().map(|(l, c, m)| (*l, *c, m.as_str())).collect();
    assert_eq!(
        msgs,
        [
            (8, 12, "`cp.async` needs at least one destination location"),
            (9, 16, "`d` is named twice in the copy's destination"),
            (
                10,
                16,
                "`cp.async` needs a declared location (`var`) as its destination, found `x`"
            ),
            (
                11,
                8,
                "`read` takes no location list `[...]`: only a copy's destination and source are lists"
            ),
            (
                12,
                18,
                "`cp.async` takes a location list `[...]` only as its destination or source"
            ),
            (13, 28, "`cp.async.mbarrier.arrive` takes no location list `[...]`: only a copy's destination and source are lists"),
        ]
    );
}
