#!/usr/bin/env bash
# Issue 35: barrier-check beside WEFT (Sharma et al., PLDI'15, "Verification
# of Producer-Consumer Synchronization in GPU Programs") on WEFT's own
# examples. `just bench-weft [EXAMPLE...]` runs it; not run in CI.
#
# Builds WEFT from its repository in a temporary directory, compiles every
# examples/*/*.cu to PTX with nvcc (-ptx -arch=compute_90, no -lineinfo),
# runs WEFT (one worker thread) and barrier-check (--jobs 1) on the same PTX
# with the same threads per block and the same time budget, and prints one
# markdown table row per kernel entry (docs/performance.md, "WEFT side by
# side"). WEFT is only invoked: none of its code or text enters this
# repository.
#
# Arguments: example directories to run (negatives saxpy sgemv RTM DME
# Heptane PRF; default all), or DIR/FILE.cu for one kernel file.
# Environment:
#   WEFT_TIMEOUT  seconds per run of each tool (default 120)
#   WEFT_SRC      WEFT's git repository: a URL or a local (bare) git directory
#                 (default https://github.com/lightsighter/Weft.git)
#   WEFT_REV      the commit to build (default d9ee750, the one
#                 docs/performance.md measured; HEAD for the newest)
#   BC            the barrier-check binary (default ./target/release/barrier-check)
#   NVCC          the CUDA compiler (default: what `bash .ci/cuda` prints)
#   WEFT_KEEP=1   keep the temporary directory (its path goes to stderr)
set -uo pipefail
cd "$(dirname "$0")/../../../.."
root=$PWD

budget=${WEFT_TIMEOUT:-120}
bc=${BC:-$root/target/release/barrier-check}
src=${WEFT_SRC:-https://github.com/lightsighter/Weft.git}
rev=${WEFT_REV:-d9ee750d1df2fac274bdf3874d729a606da349e4}
case $bc in /*) ;; *) bc=$root/$bc ;; esac
[ -x "$bc" ] || { echo "no barrier-check at $bc (cargo build --release, or BC=...)" >&2; exit 2; }
nvcc=${NVCC:-$(bash .ci/cuda)} || { echo "no nvcc (bash .ci/cuda failed)" >&2; exit 2; }
command -v g++ >/dev/null && command -v make >/dev/null ||
  { echo "WEFT needs g++ and make (apt-get install -y g++ make)" >&2; exit 2; }
timer=()
[ -x /usr/bin/time ] && timer=(/usr/bin/time -v -o)

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-weft.XXXXXX")
if [ "${WEFT_KEEP:-}" = 1 ]; then echo "bench-weft: keeping $work" >&2
else trap 'rm -rf "$work"' EXIT; fi

# WEFT, built as its src/Makefile says (warnings off: old code, new g++).
git clone --quiet "$src" "$work/weft" >&2 || { echo "cannot clone $src" >&2; exit 2; }
git -C "$work/weft" checkout --quiet "$rev" || exit 2
weft_commit=$(git -C "$work/weft" rev-parse --short=12 HEAD)
make -C "$work/weft/src" CC_FLAGS="-O2 -w" >"$work/weft-build.log" 2>&1 ||
  { tail -20 "$work/weft-build.log" >&2; echo "WEFT did not build" >&2; exit 2; }
weft=$work/weft/src/weft
ex=$work/weft/examples

# Threads per block issue 35 fixes where WEFT's run_examples.sh passes -n;
# elsewhere the kernel's __launch_bounds__ (.maxntid). WEFT at this commit
# lets a .maxntid override -n, so the block both tools get is the one WEFT
# really simulates; `-n N` is still passed as the issue says.
issue_threads() {
  case $1 in
    saxpy/saxpy_single.cu) echo 320 ;;
    saxpy/saxpy_double.cu) echo 384 ;;
    negatives/*) echo 64 ;;
    *) echo "" ;;
  esac
}
# Kernel parameters that steer RTM's addresses and loops: barrier-check
# never guesses them (docs/ptx.md, "Unknown values"), so they are passed
# by hand, plausible sizes (docs/performance.md, "WEFT side by side"); WEFT
# is run as its own scripts run it, with no parameter values.
bc_params() {
  case $1 in
    RTM/*) echo "--param 4=40 --param 5=480 --param 6=4 --param 7=160 --param 8=160 --param 9=2000 --param 10=0 --param 11=0 --param 12=0" ;;
    # The chemistry kernels' slice_stride, row_stride, total_steps and
    # spec_stride (a 32 x 32 x 2 grid of points; session 36).
    DME/diff_*|Heptane/diff_*|PRF/diff_*) echo "--param 4=1024 --param 5=32 --param 6=2 --param 7=32768" ;;
    DME/visc_*|Heptane/visc_*|PRF/visc_*) echo "--param 3=1024 --param 4=32 --param 5=2 --param 6=32768" ;;
    *) echo "" ;;
  esac
}
# WEFT's run_examples.sh checks the Fermi kernels of DME, Heptane and PRF
# under its warp-synchronous assumption (-s); so does this script.
weft_flags() { case $1 in */*_fermi.cu) echo "-s" ;; *) echo "" ;; esac; }

dirs=("$@")
[ ${#dirs[@]} -eq 0 ] && dirs=(negatives saxpy sgemv RTM DME Heptane PRF)
files=()
for d in "${dirs[@]}"; do
  case $d in
    *.cu) files+=("$d") ;;
    *) for f in "$ex/$d"/*.cu; do [ -e "$f" ] && files+=("$d/$(basename "$f")"); done ;;
  esac
done

peak_mib() { # the maximum resident set size /usr/bin/time wrote to $1, in MiB
  [ -s "$1" ] && awk -F: '/Maximum resident set size/ {printf "%.0f", $2/1024}' "$1"
}
now() { date +%s.%N; }

echo "WEFT $weft_commit ($src), $("$bc" --version 2>/dev/null), nvcc $("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), budget ${budget} s per run, $(nproc) cores"
echo
echo "| example | entry | threads | WEFT | WEFT s | WEFT MiB | barrier-check | bc s | states | bc MiB | WEFT s / bc s | agree |"
echo "|---|---|---:|---|---:|---:|---|---:|---:|---:|---:|---|"
notes=()
for rel in "${files[@]}"; do
  dir=$ex/$(dirname "$rel"); base=$(basename "$rel" .cu); ptx=$dir/$base.ptx
  if ! (cd "$dir" && timeout 600 "$nvcc" -ptx -arch=compute_90 -m64 -I. -o "$base.ptx" "$base.cu") >"$work/nvcc.log" 2>&1; then
    why=$(grep -m1 -E ' error|error:|fatal' "$work/nvcc.log" | sed -e "s|$dir/||g" -e 's/|/\\|/g' | cut -c1-200)
    echo "| $rel | | | not compiled | | | not compiled | | | | | n/a |"
    notes+=("$rel: nvcc failed: $why")
    rm -f "$ptx"
    continue
  fi
  n=$(issue_threads "$rel")
  maxntid=$(sed -n 's/^[[:space:]]*\.maxntid[[:space:]]*\([0-9]*\).*/\1/p' "$ptx" | head -n1)
  block=${maxntid:-$n}
  [ -n "$n" ] && [ -n "$maxntid" ] && [ "$n" != "$maxntid" ] &&
    notes+=("$rel: issue 35 gives -n $n, but WEFT takes .maxntid $maxntid over -n, so both tools ran $maxntid threads")

  # WEFT: one run per file (it checks every entry in turn and exits at its first error).
  wargs=(-t 1 $(weft_flags "$rel"))
  [ -n "$n" ] && wargs+=(-n "$n")
  rm -f "$work/weft.time"
  t0=$(now)
  (cd "$dir" && "${timer[@]}" ${timer:+"$work/weft.time"} timeout "$budget" "$weft" "${wargs[@]}" "$base.ptx") >"$work/weft.out" 2>&1
  wrc=$?; t1=$(now)
  weft_s=$(echo "$t1 - $t0" | bc -l)
  weft_mib=$(peak_mib "$work/weft.time")

  for entry in $(sed -n 's/.*\.entry[[:space:]]*\([A-Za-z0-9_$]*\).*/\1/p' "$ptx"); do
    short=$(echo "$entry" | c++filt 2>/dev/null | sed 's/(.*//'); short=${short:-$entry}
    rm -f "$work/bc.time"
    t0=$(now)
    "${timer[@]}" ${timer:+"$work/bc.time"} timeout $((budget + 60)) "$bc" check "$ptx" --entry "$entry" \
      ${block:+--block "$block"} $(bc_params "$rel") --jobs 1 --timeout "$budget" --format json >"$work/bc.json" 2>"$work/bc.err"
    brc=$?; t1=$(now)
    bc_s=$(echo "$t1 - $t0" | bc -l)
    bc_mib=$(peak_mib "$work/bc.time")
    python3 - "$rel" "$short" "$block" "$wrc" "$weft_s" "$weft_mib" "$brc" "$bc_s" "$bc_mib" \
      "$work/weft.out" "$work/bc.json" "$work/bc.err" "$work/weft.time" "$work/notes" <<'EOF'
import json, re, sys
(rel, kernel, block, wrc, weft_s, weft_mib, brc, bc_s, bc_mib,
 weft_out, bc_json, bc_err, weft_time, notes) = sys.argv[1:]
wrc, brc = int(wrc), int(brc)
out = open(weft_out, errors="replace").read()
try:
    tm = open(weft_time, errors="replace").read()
except OSError:
    tm = ""
m = re.search(r"Exit status: (\d+)", tm)
status = int(m.group(1)) if m else wrc
signal = re.search(r"terminated by signal (\d+)", tm)
note = []

def weft_answer():
    if status == 124 or wrc == 124:
        return "timeout"
    if "Assertion" in out or (signal and signal.group(1) == "6") or status == 134:
        return "assert"
    if signal or status in (137, 139):
        return "crashed"
    mine = [l for l in out.splitlines() if re.search(r"kernel %s\b" % re.escape(kernel), l, re.I)]
    for l in mine:
        e = re.match(r"WEFT ERROR (\d+): (.*)", l)
        if e:
            code = int(e.group(1))
            note.append("WEFT: " + e.group(2).split(" in kernel")[0].strip())
            return {8: "deadlock", 5: "recycling", 6: "recycling", 7: "recycling"}.get(code, "error %d" % code)
        if "RACES DETECTED" in l:
            races = re.search(r"Found (\d+) total races", out)
            if races:
                note.append("WEFT: %s races" % races.group(1))
            return "race"
        if "No races detected" in l:
            return "ok"
    e = re.search(r"WEFT ERROR (\d+): (.*)", out)
    if e:
        note.append("WEFT: " + e.group(2))
        return "error %s" % e.group(1)
    return "no answer (exit %d)" % status

def bc_answer():
    try:
        results = json.load(open(bc_json))["results"]
    except (OSError, ValueError, KeyError):
        if brc == 124:
            return "timeout (killed)", None
        err = open(bc_err, errors="replace").read().strip().splitlines()
        note.append("barrier-check: " + (err[0] if err else "exit %d" % brc))
        return "error", None
    r = results[0]
    stats = r.get("stats") or {}
    if r.get("error"):
        first = r["error"].splitlines()[0]
        first = re.sub(r"^\S+:\d+:\d+: error: ", "", first)
        note.append("barrier-check: " + first)
        kind = "inconclusive" if first.startswith("inconclusive") else "input error"
        return kind, stats
    verdict = ", ".join(r.get("verdict") or []) or "ok"
    if r.get("stop") not in (None, "exhausted"):
        verdict += " (stop: %s)" % r["stop"]
    return verdict, stats

w = weft_answer()
b, stats = bc_answer()
conclusive_w = w in ("ok", "deadlock", "recycling", "race")
conclusive_b = stats is not None and "stop" not in b and b not in ("inconclusive", "input error", "error")
if not (conclusive_w and conclusive_b):
    agree = "n/a"
else:
    kinds = set(b.split(", ")) if b != "ok" else set()
    same = (w == "ok" and not kinds) or (w == "deadlock" and "deadlock" in kinds) \
        or (w == "race" and "race" in kinds) \
        or (w == "recycling" and any(k.startswith("ub(") for k in kinds))
    if same:
        agree = "yes"
    elif w != "ok" and kinds:
        agree = "both flag, differently"
    else:
        agree = "**no**"
ratio = ""
if conclusive_w and conclusive_b and float(bc_s) > 0:
    r = float(weft_s) / float(bc_s)
    ratio = "%.0f" % r if r >= 10 else "%.1f" % r if r >= 0.1 else "%.3f" % r
states = str(stats.get("states", "")) if stats else ""
wsec = ">%.0f" % float(weft_s) if w == "timeout" else "%.2f" % float(weft_s)
def cell(s):
    return s.replace("|", "\\|")
print("| %s | %s | %s | %s | %s | %s | %s | %.2f | %s | %s | %s | %s |" % (
    rel, kernel, block, w, wsec, weft_mib, cell(b), float(bc_s), states, bc_mib, ratio, agree))
if note:
    with open(notes, "a") as f:
        f.write("%s: %s\n" % (rel, "; ".join(cell(n)[:300] for n in note)))
EOF
  done
done
if [ ${#notes[@]} -gt 0 ] || [ -s "$work/notes" ]; then
  echo
  for x in "${notes[@]}"; do echo "- $x"; done
  [ -s "$work/notes" ] && sed 's/^/- /' "$work/notes"
fi
exit 0
