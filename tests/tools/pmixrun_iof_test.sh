#!/usr/bin/env bash
# pmixrun's output forwarding (tools/pmixrun/README.md, "Output"): every line once, on the right
# stream, with the right tag (--tag-output, spawned jobs too); partial lines never mixed between
# processes; binary output and a last line without a newline byte for byte; the server writing
# the output instead (--iof-server-output); 1 MiB per stream from 4 ranks intact, also through a
# reader that stalls; the end of the run with a process's own child still holding the pipes;
# a reader that goes away (SIGPIPE); pmixrun's stdin to rank 0 (pushed stdin:
# pmixrun_requests_test.sh).
#
# Run from the Bazel runfiles directory, like pmixrun_host_test.sh; PMIXRUN and PMIXRUN_CLIENT
# may name other builds (e.g. against OpenPMIx, see tools/pmixrun/README.md).
set -uo pipefail
pmixrun=${PMIXRUN:-tools/pmixrun/pmixrun}
client=${PMIXRUN_CLIENT:-tests/tools/pmixrun_client}
tmp=$(mktemp -d /tmp/pmixruni.XXXXXX)   # not TEST_TMPDIR: socket paths must stay short
trap 'rm -rf "$tmp"' EXIT
export TMPDIR=$tmp
failures=0

fail() { echo "FAIL $1"; shift; for f in "$@"; do echo "---- $f"; head -c 4000 "$f"; echo; done; failures=$((failures + 1)); }
ok() { echo "ok   $1"; }

# run N [pmixrun options] ARGS...: pmixrun -n N, output in $tmp/out and $tmp/err; $st, $secs
run() {
  local n=$1
  shift
  local t0=$SECONDS
  timeout -k 5 120 "$pmixrun" -n "$n" --timeout 90 "$@" >"$tmp/out" 2>"$tmp/err"
  st=$?
  secs=$((SECONDS - t0))
}

# count FILE LINE: how many lines of FILE are exactly LINE
count() { grep -cxF -- "$2" "$1"; }

# lines_once NAME FILE FORMAT NS RANKS LINES [PREFIX_FORMAT]: FILE holds each line
# printf FORMAT NS r k (r < RANKS, k < LINES) exactly once, prefixed with printf PREFIX_FORMAT r
lines_once() {
  local name=$1 file=$2 format=$3 ns=$4 ranks=$5 lines=$6 prefix=${7:-} r k line
  for ((r = 0; r < ranks; r++)); do
    for ((k = 0; k < lines; k++)); do
      # shellcheck disable=SC2059
      line=$(printf "$prefix" "$r")$(printf "$format" "$ns" "$r" "$k")
      if [ "$(count "$file" "$line")" != 1 ]; then
        fail "$name: '$line' appears $(count "$file" "$line") times in $(basename "$file")" "$tmp/out" "$tmp/err"
        return 1
      fi
    done
  done
}

# ---- tags ----------------------------------------------------------------------------------

run 4 --tag-output --nspace iof.tag "$client" output 5
if [ $st != 0 ]; then
  fail "--tag-output, 4 ranks: exit status $st" "$tmp/out" "$tmp/err"
elif lines_once "--tag-output stdout" "$tmp/out" 'out %s %s %s' iof.tag 4 5 '[1,%s]<stdout>:' &&
     lines_once "--tag-output stderr" "$tmp/err" 'err %s %s %s' iof.tag 4 5 '[1,%s]<stderr>:'; then
  bad_out=$(grep -cvE '^\[1,[0-3]\]<stdout>:(out iof\.tag [0-3] [0-4]|OK output rank=[0-3])$' "$tmp/out")
  bad_err=$(grep -cvE '^(\[1,[0-3]\]<stderr>:err iof\.tag [0-3] [0-4]|pmixrun: 4 of 4 processes .*)$' "$tmp/err")
  oks=0
  for r in 0 1 2 3; do oks=$((oks + $(count "$tmp/out" "[1,$r]<stdout>:OK output rank=$r"))); done
  if [ "$bad_out" != 0 ] || [ "$bad_err" != 0 ] || [ $oks != 4 ]; then
    fail "--tag-output: $bad_out stray stdout lines, $bad_err stray stderr lines, $oks OK lines" "$tmp/out" "$tmp/err"
  else
    ok "--tag-output: 4 ranks x 5 lines on each stream, each once, tagged [1,rank]<stdout|stderr>:"
  fi
fi

run 2 --tag-output --nspace iof.sp "$client" output 3 2
if [ $st != 0 ]; then
  fail "--tag-output with a spawned job: exit status $st" "$tmp/out" "$tmp/err"
elif lines_once "spawned job tags" "$tmp/out" 'out %s %s %s' iof.sp.1 2 3 '[2,%s]<stdout>:' &&
     lines_once "spawned job tags" "$tmp/err" 'err %s %s %s' iof.sp.1 2 3 '[2,%s]<stderr>:' &&
     lines_once "parent job tags" "$tmp/out" 'out %s %s %s' iof.sp 2 3 '[1,%s]<stdout>:'; then
  ok "--tag-output: the spawned job iof.sp.1 is tagged [2,rank] (the first job [1,rank])"
fi

# mpirun --tag-output's format, when Open MPI is there to compare with
if command -v mpirun >/dev/null &&
   timeout 60 mpirun --allow-run-as-root --oversubscribe --tag-output -np 2 sh -c 'echo x; echo y >&2' \
     >"$tmp/mpirun.out" 2>"$tmp/mpirun.err"; then
  run 2 --tag-output --quiet sh -c 'echo x; echo y >&2'
  if [ "$(sort "$tmp/out")" = "$(sort "$tmp/mpirun.out")" ] && [ "$(sort "$tmp/err")" = "$(sort "$tmp/mpirun.err")" ]; then
    ok "the tags are those of Open MPI's mpirun --tag-output: $(head -n 1 "$tmp/mpirun.out")"
  else
    fail "the tags differ from mpirun --tag-output's" "$tmp/mpirun.out" "$tmp/mpirun.err" "$tmp/out" "$tmp/err"
  fi
else
  echo "skip comparing the tags with mpirun's (no mpirun, or it did not run here)"
fi

# ---- lines and bytes -------------------------------------------------------------------------

run 4 --nspace iof.plain "$client" output 5
if [ $st != 0 ]; then
  fail "untagged, 4 ranks: exit status $st" "$tmp/out" "$tmp/err"
elif lines_once "untagged stdout" "$tmp/out" 'out %s %s %s' iof.plain 4 5 &&
     lines_once "untagged stderr" "$tmp/err" 'err %s %s %s' iof.plain 4 5; then
  if [ "$(wc -l <"$tmp/out")" != 24 ] || [ "$(wc -l <"$tmp/err")" != 21 ]; then
    fail "untagged: $(wc -l <"$tmp/out") stdout lines (want 24), $(wc -l <"$tmp/err") stderr lines (want 21)" "$tmp/out" "$tmp/err"
  else
    ok "untagged: lines written in two pieces each come out whole, each once"
  fi
fi

# Binary data: every byte value, 256 KiB of random bytes, and a last line without a newline;
# rank 0 writes it to stdout, rank 1 to stderr.
{ for _ in 1 2 3; do printf "$(printf '\\%03o' $(seq 0 255))"; done
  head -c 262144 /dev/urandom
  printf 'the last line, no newline'; } >"$tmp/bin"
run 2 --quiet sh -c 'if [ "$PMIX_RANK" = 0 ]; then cat "$1"; else cat "$1" >&2; fi' sh "$tmp/bin"
if [ $st != 0 ]; then
  fail "binary: exit status $st" "$tmp/err"
elif ! cmp -s "$tmp/bin" "$tmp/out" || ! cmp -s "$tmp/bin" "$tmp/err"; then
  fail "binary: stdout or stderr differs from what was written ($(wc -c <"$tmp/out") / $(wc -c <"$tmp/err") of $(wc -c <"$tmp/bin") bytes)"
else
  ok "untagged: binary bytes and a last line without a newline, byte for byte on both streams"
fi

run 2 --tag-output --quiet sh -c 'printf "a\nb"; printf "c\nd" >&2'
want_out=$'[1,0]<stdout>:a\n[1,0]<stdout>:b\n[1,1]<stdout>:a\n[1,1]<stdout>:b\n'
want_err=$'[1,0]<stderr>:c\n[1,0]<stderr>:d\n[1,1]<stderr>:c\n[1,1]<stderr>:d\n'
if [ $st = 0 ] && [ "$(sort "$tmp/out"; echo .)" = "$want_out." ] && [ "$(sort "$tmp/err"; echo .)" = "$want_err." ] &&
   [ "$(tail -c 1 "$tmp/out" | od -An -tx1 | tr -d ' ')" = 0a ] && [ "$(tail -c 1 "$tmp/err" | od -An -tx1 | tr -d ' ')" = 0a ]; then
  ok "--tag-output: a last line without a newline is tagged and given one"
else
  fail "--tag-output: a last line without a newline (status $st)" "$tmp/out" "$tmp/err"
fi

# ---- the server writes -------------------------------------------------------------------------

run 4 --iof-server-output --verbose --nspace iof.srv "$client" output 5
stats=$(grep -E '^pmixrun: output: ' "$tmp/err")
if [ $st != 0 ]; then
  fail "--iof-server-output: exit status $st" "$tmp/out" "$tmp/err"
elif lines_once "--iof-server-output stdout" "$tmp/out" 'out %s %s %s' iof.srv 4 5 &&
     lines_once "--iof-server-output stderr" "$tmp/err" 'err %s %s %s' iof.srv 4 5; then
  if [ "$(wc -l <"$tmp/out")" != 24 ] || ! [[ $stats =~ delivered\ to\ the\ server\ in\ [1-9][0-9]*\ calls,\ 0\ bytes\ written ]]; then
    fail "--iof-server-output: $(wc -l <"$tmp/out") stdout lines (want 24); $stats" "$tmp/out" "$tmp/err"
  else
    ok "--iof-server-output: every line once, written by the server (${stats#pmixrun: output: })"
  fi
fi

run 1 --iof-server-output --tag-output true
[ $st = 2 ] && grep -q 'exclude each other' "$tmp/err" && ok "--iof-server-output with --tag-output is refused" ||
  fail "--iof-server-output with --tag-output: status $st" "$tmp/err"

run 1 --verbose sh -c 'echo one; echo two >&2'
stats=$(grep -E '^pmixrun: output: ' "$tmp/err")
if [ $st = 0 ] && [[ $stats =~ ^pmixrun:\ output:\ 8\ bytes\ read,\ 8\ bytes\ delivered\ to\ the\ server\ in\ 2\ calls,\ 8\ bytes\ written ]]; then
  ok "each chunk is also delivered to the server (PMIx_server_IOF_deliver)"
else
  fail "delivery to the server: status $st; $stats" "$tmp/out" "$tmp/err"
fi

# ---- large bursts --------------------------------------------------------------------------------

# gen (awk -v r=RANK -v s=STREAM -v size=BYTES): numbered lines of 100 bytes (the last one
# shorter), BYTES in all
gen='BEGIN { pad = sprintf("%80s", ""); gsub(/ /, "x", pad); n = 0; i = 0
             while (n < size) { line = substr(sprintf("R%d %s %07d %s", r, s, i++, pad), 1, 99)
                                if (n + 100 > size) line = substr(line, 1, size - n - 1)
                                printf "%s\n", line; n += length(line) + 1 } }'
for size in 1048576 4194304; do
  for r in 0 1 2 3; do
    for s in out err; do awk -v r=$r -v s=$s -v size=$size "$gen" >"$tmp/want.$size.$r.$s"; done
  done
done
# burst SIZE: the command for each rank to write SIZE bytes to stdout and to stderr at once
burst() {
  echo "awk -v r=\$PMIX_RANK -v s=out -v size=$1 '$gen' & awk -v r=\$PMIX_RANK -v s=err -v size=$1 '$gen' >&2; wait"
}

check_burst() {  # NAME TAGGED SIZE
  local name=$1 tagged=$2 size=$3 r s got want prefix
  for r in 0 1 2 3; do
    for s in out err; do
      if [ "$tagged" = yes ]; then prefix="[1,$r]<std$s>:"; else prefix=; fi
      got=$(grep -aF -- "${prefix}R$r $s " "$tmp/$s" | cut -c $((${#prefix} + 1))- | md5sum)
      want=$(md5sum <"$tmp/want.$size.$r.$s")
      if [ "$got" != "$want" ]; then
        fail "$name: rank $r's std$s differs from what it wrote"
        return
      fi
    done
  done
  ok "$name"
}

run 4 --quiet sh -c "$(burst 1048576)"
if [ $st != 0 ]; then fail "1 MiB bursts: exit status $st" "$tmp/err"
elif [ "$(wc -c <"$tmp/out")" != 4194304 ] || [ "$(wc -c <"$tmp/err")" != 4194304 ]; then
  fail "1 MiB bursts: $(wc -c <"$tmp/out") + $(wc -c <"$tmp/err") bytes, want 4194304 each"
else check_burst "4 ranks x 1 MiB on stdout and stderr at once: complete, per-rank checksums match (${secs} s)" no 1048576; fi

run 4 --quiet --tag-output sh -c "$(burst 1048576)"
if [ $st != 0 ]; then fail "1 MiB tagged bursts: exit status $st" "$tmp/err"
else check_burst "the same with --tag-output: every line tagged with its rank, checksums match" yes 1048576; fi

# Readers of pmixrun's stdout and stderr that stall for 2 s while 4 ranks write 4 MiB to each
# (16 MiB a stream, more than pmixrun queues): the ranks wait, nothing is lost, no deadlock.
t0=$SECONDS
mkfifo "$tmp/errpipe"
{ sleep 2; cat; } <"$tmp/errpipe" >"$tmp/err" &
reader=$!
timeout -k 5 120 "$pmixrun" -n 4 --timeout 90 --quiet sh -c "$(burst 4194304)" 2>"$tmp/errpipe" |
  { sleep 2; cat >"$tmp/out"; }
st=${PIPESTATUS[0]}
wait $reader
secs=$((SECONDS - t0))
if [ $st != 0 ] || [ "$(wc -c <"$tmp/out")" != 16777216 ] || [ "$(wc -c <"$tmp/err")" != 16777216 ]; then
  fail "stalled readers: status $st, $(wc -c <"$tmp/out") + $(wc -c <"$tmp/err") bytes" "$tmp/err"
else check_burst "readers that stall for 2 s, 4 ranks x 4 MiB per stream: all of it intact (${secs} s)" no 4194304; fi

# ---- the end of a run ----------------------------------------------------------------------------

run 1 sh -c '(sleep 1; echo late) & echo early'
if [ $st = 0 ] && [ "$(cat "$tmp/out")" = $'early\nlate' ] && [ $secs -ge 1 ]; then
  ok "a child's own child that holds the pipes: its output is waited for"
else fail "output of a grandchild: status $st" "$tmp/out" "$tmp/err"; fi

t0=$SECONDS
timeout -k 5 60 "$pmixrun" -n 1 --timeout 2 sh -c 'sleep 20 & echo early' >"$tmp/out" 2>"$tmp/err"; st=$?
if [ $st = 1 ] && [ "$(cat "$tmp/out")" = early ] && [ $((SECONDS - t0)) -lt 10 ] && grep -q timeout "$tmp/err"; then
  ok "a grandchild that keeps the pipes open does not hold pmixrun past --timeout ($((SECONDS - t0)) s, status 1)"
else fail "a grandchild holding the pipes with --timeout 2: status $st in $((SECONDS - t0)) s" "$tmp/out" "$tmp/err"; fi

t0=$SECONDS
timeout -k 5 60 "$pmixrun" -n 1 sh -c 'sleep 20 & echo early; exit 3' >"$tmp/out" 2>"$tmp/err"; st=$?
if [ $st = 3 ] && [ "$(cat "$tmp/out")" = early ] && [ $((SECONDS - t0)) -lt 10 ]; then
  ok "a failed job ends without waiting for pipes a grandchild holds ($((SECONDS - t0)) s, status 3)"
else fail "a failed job with grandchildren holding the pipes: status $st in $((SECONDS - t0)) s" "$tmp/out" "$tmp/err"; fi

t0=$SECONDS
first=$(timeout -k 5 60 "$pmixrun" -n 2 --quiet yes 2>"$tmp/err" | head -n 1)
st=${PIPESTATUS[0]}
if [ "$first" = y ] && [ $st = 141 ] && [ $((SECONDS - t0)) -lt 30 ]; then
  ok "a reader that goes away: the writers get SIGPIPE (pmixrun | head: status 141)"
else fail "pmixrun yes | head -n 1: '$first', status $st in $((SECONDS - t0)) s" "$tmp/err"; fi

out=$(printf 'to stdin\n' | timeout -k 5 60 "$pmixrun" -n 1 --quiet cat 2>"$tmp/err")
[ "$out" = "to stdin" ] && ok "pmixrun's stdin reaches rank 0, and its end too" || fail "stdin: '$out'" "$tmp/err"

exit $failures
