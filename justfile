# barrier-check tasks (https://github.com/casey/just). CI runs .ci/run.

# Check the whole corpus with the release binary.
check:
    cargo run --release -- check litmus

# Every test: unit, property, snapshot and one test per corpus file.
test:
    cargo test --workspace --release

# The property tests with fresh random seeds (cargo test and CI draw theirs
# from a fixed seed): RUNS runs of CASES cases per property. A failure
# prints its seed; add its shrunk case to the test's .proptest-regressions.
props RUNS="3" CASES="1000":
    for i in $(seq {{RUNS}}); do s=$(od -An -N8 -tu8 /dev/urandom | tr -d ' '); echo "PROPTEST_RNG_SEED=$s"; PROPTEST_RNG_SEED=$s PROPTEST_CASES={{CASES}} cargo test --release -p barrier-check --test reductions --test pipeline --test grammar || exit 1; done

# The CUDA compiler (pip's nvcc, no GPU needed) in .venv-cuda/, for
# `check k.cu` and the kernels test; prints the line to export.
cuda:
    @echo "export BC_NVCC=$(bash .ci/cuda)"

# Check the compiled-kernel corpus (kernels/*.cu) through nvcc.
kernels:
    cargo build --release
    BC_NVCC=$(bash .ci/cuda) ./target/release/barrier-check check --cu kernels

# What CI runs.
ci:
    bash .ci/run

# The explorer's floors (docs/ARCHITECTURE.md, "The explore crate, floor by
# floor"): prints the import arrows between floors and fails on an arrow up
# a floor, a reduction importing another, a circle or a file of 900 lines.
layers:
    cargo test --release -p bc-explore --test layers -- --nocapture

# Formatting and lints, as kept on main (clean with warnings denied).
lint:
    cargo fmt --all --check
    cargo clippy --workspace --release --all-targets -- -D warnings

# Render a test's operation graph to SVG (needs graphviz).
graph FILE:
    cargo run --release -- graph {{FILE}} --format dot | dot -Tsvg > {{FILE}}.svg

# Render a finding's witness execution to SVG (needs graphviz), e.g.
# just explain litmus/amdgpu/deadlock-third-thread.litmus
explain FILE:
    cargo run --release -- explain {{FILE}} --format dot | dot -Tsvg > {{FILE}}.witness.svg

# Update insta snapshots after an intended rendering change.
snapshots:
    cargo insta test --workspace --release --accept

# The scaling table (threads x phases; states, time, states/s, peak memory).
# BENCH_TIMEOUT=SECS bounds each cell (default 10).
bench:
    cargo bench -p barrier-check --bench scaling
    cargo bench -p barrier-check --bench targets

# Liveness overhead: the same terminating test with and without the fair-cycle
# analysis, side by side.
bench-liveness:
    cargo build --release
    for m in --no-liveness ""; do ./target/release/barrier-check check --format json $m litmus/amdgpu/phase-three-threads-two-rounds.litmus | python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][0]; print(sys.argv[1] or "liveness", r["stats"])' "$m"; done

# barrier-check against Spin 6.5 on N threads x K rounds of arrive; wait
# (installs spin with apt when it is missing). BENCH_TIMEOUT=SECS per run.
bench-spin:
    command -v spin >/dev/null || (apt-get update -qq && apt-get install -y -qq spin)
    cargo bench -p barrier-check --bench spin

# The kernels of the "real kernels" targets (docs/performance.md, "Targets"):
# each shape once, with verdict, states, time, peak memory and whether it
# met its target. BENCH_TIMEOUT=SECS per shape (default 15); arguments after
# -- go to every check, e.g. `just bench-targets --no-symmetry`.
bench-targets *ARGS:
    cargo bench -p barrier-check --bench targets -- {{ARGS}}

# Issue 36's pipelines and buggy kernels (crates/cli/benches/pipelines/,
# each with its expect and target): verdict, states, time, peak memory,
# met. BENCH_BEFORE=BIN adds an older barrier-check's column, side by side
# in the same run; BENCH_TIMEOUT=SECS per check (default 30).
bench-pipelines *ARGS:
    cargo bench -p barrier-check --bench pipelines -- {{ARGS}}

# Issue 35: barrier-check beside WEFT (PLDI'15) on WEFT's own examples
# (crates/cli/benches/weft/run.sh): builds WEFT from its repository in a
# temporary directory, compiles each example with nvcc (bash .ci/cuda),
# and checks the same PTX with both tools, one thread each, the same block
# and time budget: one markdown row per kernel (answers, seconds, peak
# memory, states, whether they agree). Needs g++, make and network (or
# WEFT_SRC=a local clone); not run in CI. WEFT_TIMEOUT=SECS per run
# (default 120); arguments pick example directories, e.g.
# `just bench-weft negatives saxpy`.
bench-weft *ARGS:
    cargo build --release
    bash crates/cli/benches/weft/run.sh {{ARGS}}

# The parallel explorer: 1 job against 2 on two tests of over a million states,
# alternating runs (BENCH_RUNS each, default 3), with the speedup of the best
# times and a check that both print the same JSON.
bench-jobs:
    cargo bench -p barrier-check --bench jobs

# Hold every CUDA verdict against the GPU of this machine (docs/hardware.md):
# emit a harness per CUDA test into DIR, compile and run each (1,000
# iterations, then a few under compute-sanitizer synccheck and racecheck),
# and compare what ran with the model (exit 1 on an UNSOUND test). Needs nvcc
# and compute-sanitizer; on a machine without cargo, run the three commands
# with a carried release binary (BC=path/to/barrier-check just hw DIR).
BC := env_var_or_default("BC", "./target/release/barrier-check")
hw DIR:
    {{BC}} emit cuda litmus -o {{DIR}}
    {{BC}} hw run {{DIR}} --jobs 16 --sanitizer --sanitizer-iterations 5 --sanitizer-timeout 30 --sanitizer-timeout-ms 5000 --sanitizer-hung-timeout 8 --deadline 470 -o {{DIR}}/observed.json
    {{BC}} hw compare {{DIR}}/observed.json

# Every report of the corpus (text, JSON, SARIF, JUnit, outcome sets) into
# DIR with elapsed times blanked, so two builds compare byte for byte
# (`diff -r A B`): the check that a refactoring changed no output.
golden DIR:
    BC={{BC}} bash .ci/golden {{DIR}}
