#!/usr/bin/env bash
# A full streaming pass over a store several times larger than a memory limit that charges the
# page cache: the pass must succeed, with its memory bounded by the in-flight buffers, while
# decoding the whole matrix into memory (bench --mode ram, the control) must not fit.
#
#   bash scripts/memory-limit-check.sh [LIMIT_MIB] [STORE_GIB]      (default 512 MiB, 3 GiB)
#
# Builds the release preset's colflow (or runs COLFLOW_CLI), simulates genotypes, preprocesses
# them into an uncompressed float64 store of about STORE_GIB GiB in build/memory-limit/
# (removed at the end; KEEP=1 keeps it), drops the store's pages from the page cache, then runs
# inside a memory limit of LIMIT_MIB MiB:
#   colflow bench STORE --mode pipelined --passes 1   (must succeed)
#   colflow assoc STORE --pheno ...                    (must succeed)
#   colflow bench STORE --mode ram --passes 1          (must fail: the control)
# and prints each one's peak RSS, peak anonymous memory and the cgroup's peak usage (page
# cache included). Needs about STORE_GIB GiB of free disk.
#
# The limit comes from, in this order: systemd-run --scope -p MemoryMax (a systemd machine,
# cgroup v2), a child of this process's cgroup v2 (memory.max), a child of this process's
# cgroup v1 memory cgroup (memory.limit_in_bytes). COLFLOW_MEMORY_LIMIT=systemd|cgroup2|cgroup1
# picks one. Writing cgroups needs root (systemd-run --user otherwise). Exit status: 0 when the
# check passed, 1 when it failed, 3 when no memory limit can be set here (then follow the manual
# check in docs/RELIABILITY.md).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

limit_mib=${1:-512}
store_gib=${2:-3}
limit_bytes=$((limit_mib << 20))
samples=8000
# Columns of samples x 8 bytes (float64, codec none) adding up to STORE_GIB GiB.
variants=$(( (store_gib << 30) / (samples * 8) ))
work=$PWD/build/memory-limit
tag=colflow-memcheck-$$

say() { printf 'memory-limit: %s\n' "$*"; }
mib() { echo $(( ($1 + (1 << 19)) >> 20 )); }

# --- Which memory-limit mechanism works here --------------------------------------------------

own_cgroup_v1() { sed -n 's/^[0-9]*:memory:\(.*\)$/\1/p' /proc/self/cgroup | head -n 1; }
own_cgroup_v2() { sed -n 's/^0::\(.*\)$/\1/p' /proc/self/cgroup | head -n 1; }
v2_mount() { awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts; }
v1_mount() { awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/self/mounts; }

systemd_run=(systemd-run --scope --quiet --collect)
[[ $(id -u) -eq 0 ]] || systemd_run+=(--user)

# Each probe limits a tiny process to 64 MiB and returns 0 only if that took effect.
probe_systemd() {
  [[ -d /run/systemd/system ]] && command -v systemd-run >/dev/null || return 1
  "${systemd_run[@]}" -p MemoryMax=64M -- true >/dev/null 2>&1
}
# cgroup v2 without systemd: a child of the mount's root (the only cgroup that may hold both
# processes and children with controllers), with the memory controller enabled for children.
cg2_parent=""
probe_cgroup2() {
  local root
  root=$(v2_mount) && [[ -n $root && -f $root/cgroup.controllers ]] || return 1
  grep -qw memory "$root/cgroup.controllers" || return 1
  grep -qw memory "$root/cgroup.subtree_control" ||
    echo +memory > "$root/cgroup.subtree_control" 2>/dev/null || return 1
  mkdir "$root/$tag-probe" 2>/dev/null || return 1
  local ok=1
  echo 64M > "$root/$tag-probe/memory.max" 2>/dev/null && ok=0
  rmdir "$root/$tag-probe"
  [[ $ok -eq 0 ]] && cg2_parent=$root
}
cg1_parent=""
probe_cgroup1() {
  local mount own
  mount=$(v1_mount) && own=$(own_cgroup_v1) && [[ -n $mount && -n $own ]] || return 1
  mkdir "$mount$own/$tag-probe" 2>/dev/null || return 1
  local ok=1
  echo $((64 << 20)) > "$mount$own/$tag-probe/memory.limit_in_bytes" 2>/dev/null && ok=0
  rmdir "$mount$own/$tag-probe"
  [[ $ok -eq 0 ]] && cg1_parent=$mount$own
}

mechanism=""
for m in ${COLFLOW_MEMORY_LIMIT:-systemd cgroup2 cgroup1}; do
  if "probe_$m"; then mechanism=$m; break; fi
done
if [[ -z $mechanism ]]; then
  say "NO MEMORY LIMIT AVAILABLE: neither systemd-run --scope -p MemoryMax (no systemd running" \
      "or no permission), nor a writable cgroup v2 or v1 memory controller (not root, or the" \
      "container hides it). The check did not run; do the manual check of docs/RELIABILITY.md."
  exit 3
fi
say "memory limit through $mechanism: $limit_mib MiB, page cache charged to the limit"

# --- Build and make the store -----------------------------------------------------------------

bash scripts/install-deps.sh
if [[ -n ${COLFLOW_CLI:-} ]]; then  # a Release command built already (the CI's, .ci/run)
  colflow=$COLFLOW_CLI
  say "colflow: $colflow"
else
  say "build colflow (release preset)"
  cmake --preset release >/dev/null
  cmake --build --preset release --target colflow_cli -j"$(nproc)" >/dev/null
  colflow=$PWD/build/release/cli/colflow
fi

rm -rf "$work"
mkdir -p "$work"
[[ ${KEEP:-0} == 1 ]] || trap 'rm -rf "$work"' EXIT
store=$work/sim.cf
say "simulate $samples samples x $variants variants, preprocess to float64 with codec none"
"$colflow" simulate --samples "$samples" --variants "$variants" --seed 7 --quiet --out "$work/sim"
"$colflow" preprocess --bed "$work/sim" --codec none --out "$store" --quiet
rm -f "$work/sim.bed"
store_bytes=$(du -sb "$store" | cut -f1)
say "store: $(mib "$store_bytes") MiB = $(awk -v s="$store_bytes" -v l="$limit_bytes" \
    'BEGIN { printf "%.1f", s / l }') x the limit; decoded in memory it needs the same again"

# --- Run inside the limit ---------------------------------------------------------------------

# Runs inside the limited cgroup: moves itself there (v1/v2), runs the command under
# /usr/bin/time with its output to $3, then writes the cgroup's peak usage, OOM kills and page
# cache to $1.
read -r -d '' inner <<'INNER' || true
out=$1 procs=$2 stdout=$3; shift 3
[[ -z $procs ]] || echo $$ > "$procs"
/usr/bin/time -f "time %e s, max RSS %M kB" -o "$out.time" "$@" > "$stdout"
rc=$?
if line=$(grep -m1 "^[0-9]*:memory:" /proc/self/cgroup); then   # cgroup v1
  cg=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/self/mounts)
  cg+=${line#*:memory:}
  peak=$(cat "$cg/memory.max_usage_in_bytes")
  ooms=$(awk '$1 == "oom_kill" { print $2 }' "$cg/memory.oom_control")
  cache=$(awk '$1 == "total_cache" { print $2 }' "$cg/memory.stat")
else                                                            # cgroup v2
  cg=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
  cg+=$(sed -n 's/^0:://p' /proc/self/cgroup)
  peak=$(cat "$cg/memory.peak" 2>/dev/null || echo 0)            # Linux 5.19 and later
  ooms=$(awk '$1 == "oom_kill" { print $2 }' "$cg/memory.events")
  cache=$(awk '$1 == "file" { print $2 }' "$cg/memory.stat")
fi
echo "$rc ${peak:-0} ${ooms:-0} ${cache:-0}" > "$out"
INNER

# limited NAME COMMAND...: runs COMMAND in a fresh cgroup limited to limit_bytes, its output
# to $work/NAME.out; sets rc, peak, ooms, cache (bytes of page cache still charged at the end).
limited() {
  local name=$1 out=$work/$1.cgroup
  shift
  # Evict the store from the page cache, so the pass reads it from disk and each page is
  # charged to the limited cgroup (a page cached earlier stays charged to its first user).
  sync
  for f in "$store"/*; do dd if="$f" iflag=nocache count=0 status=none; done
  if command -v fincore >/dev/null; then
    say "  $name: the page cache holds $(fincore --bytes --noheadings --output RES \
        "$store/columns.dat" | awk '{ printf "%d", $1 / 1048576 }') MiB of the data file before it starts"
  fi
  case $mechanism in
    systemd)
      "${systemd_run[@]}" -p MemoryMax="$limit_bytes" -p MemorySwapMax=0 -- \
        bash -c "$inner" _ "$out" "" "$work/$name.out" "$@" || true ;;
    cgroup2|cgroup1)
      local cg
      if [[ $mechanism == cgroup2 ]]; then
        cg=$cg2_parent/$tag-$name
        mkdir "$cg"
        echo "$limit_bytes" > "$cg/memory.max"
        echo 0 > "$cg/memory.swap.max" 2>/dev/null || true
      else
        cg=$cg1_parent/$tag-$name
        mkdir "$cg"
        echo "$limit_bytes" > "$cg/memory.limit_in_bytes"
        echo "$limit_bytes" > "$cg/memory.memsw.limit_in_bytes" 2>/dev/null || true  # no swap
      fi
      bash -c "$inner" _ "$out" "$cg/cgroup.procs" "$work/$name.out" "$@" || true
      rmdir "$cg" ;;
  esac
  if [[ -f $out ]]; then
    read -r rc peak ooms cache < "$out"
  else
    rc=125 peak=0 ooms=0 cache=0  # the limited shell never ran
    echo "not started" > "$out.time"
  fi
  say "  $name: exit $rc, $(cat "$out.time" | tail -n 1), cgroup peak $(mib "$peak") MiB" \
      "(limit $limit_mib), OOM kills $ooms, page cache charged at the end $(mib "$cache") MiB"
}

bench_figures() {
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))[0]; print(
    "%.2f s per pass, %.2f GB/s decoded, peak RSS %d MiB (mapped store pages included),"
    " peak anonymous %d MiB" % (r["seconds_per_pass"], r["decoded_gb_per_s"],
    r["peak_rss_bytes"] >> 20, r["peak_anon_bytes"] >> 20))' "$1"
}

status=0
say "reference, without a limit: colflow bench --mode pipelined --passes 1"
sync
for f in "$store"/*; do dd if="$f" iflag=nocache count=0 status=none; done
"$colflow" bench "$store" --mode pipelined --passes 1 --json > "$work/unlimited.out"
say "  unlimited: $(bench_figures "$work/unlimited.out")"

say "pass 1: colflow bench --mode pipelined --passes 1 (dot-axpy kernel over every column)"
limited bench "$colflow" bench "$store" --mode pipelined --passes 1 --json
if [[ $rc -eq 0 ]]; then
  say "  bench: $(bench_figures "$work/bench.out")"
else
  say "  FAILED: the pipelined pass did not complete inside $limit_mib MiB"; status=1
fi

say "pass 2: colflow assoc (association scan of the simulated phenotype, one pass)"
limited assoc "$colflow" assoc "$store" --pheno "$work/sim.phen" --out "$work/assoc" --quiet
lines=$(cat "$work"/assoc.*.assoc.tsv 2>/dev/null | wc -l)
if [[ $rc -eq 0 && $lines -eq $((variants + 1)) ]]; then
  say "  assoc: $variants columns tested"
else
  say "  FAILED: the association scan did not complete inside $limit_mib MiB"; status=1
fi

say "control: colflow bench --mode ram (decodes the whole store into memory first)"
limited ram "$colflow" bench "$store" --mode ram --passes 1
if [[ $rc -eq 0 ]]; then
  say "  FAILED: the whole store fitted in $limit_mib MiB: the limit is not enforced"; status=1
else
  say "  as expected, it did not fit (exit $rc, OOM kills $ooms)"
fi

if [[ $status -eq 0 ]]; then
  say "PASSED: a $(mib "$store_bytes") MiB store streamed twice inside $limit_mib MiB"
else
  say "FAILED"
fi
exit $status
