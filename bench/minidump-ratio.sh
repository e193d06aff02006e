#!/usr/bin/env bash
# The minidump twin of ../shared/bench/ratios.sh: `dumpdbg triage` of a Windows minidump with lldb
# against what a person types into lldb to see the same (`lldb-16 --batch` loading the dump and
# printing `bt all`, `register read`, `image list`), medians of five runs in one invocation.
# Run from the project's root after `npm run build`:
#   bash bench/minidump-ratio.sh [DUMP [EXE]]   (default: the test fixtures' format-check crash.dmp, made by the Windows tests)
set -u
DUMP=${1:-$(ls -d "${TMPDIR:-/tmp}"/dumpdbg-fixtures/windows-format-check-*/crash.dmp 2>/dev/null | head -n1)}
[ -n "$DUMP" ] && [ -f "$DUMP" ] || { echo "no minidump: give DUMP [EXE], or run the Windows tests (npx vitest run tests/e2e/windows-minidumps.test.ts) to make one"; exit 2; }
EXE=${2:-$(ls "$(dirname "$DUMP")"/*.exe 2>/dev/null | head -n1)}
LLDB=${LLDB:-lldb-16}
ms() { local s=$(date +%s%N); "$@" >/dev/null 2>&1; echo $(( ($(date +%s%N)-s)/1000000 )); }
median5() { sort -n | sed -n 3p; }
ratio() { echo "scale=2; $1/$2" | bc; }
target=(-o "target create ${EXE:+\"$EXE\"} --core \"$DUMP\"")
fl=(); tr=(); bare=()
# One run first, untimed: it fills LLDB's Python bytecode folder where it is empty (lldb/python-cache.ts),
# as any user's first run does; the timed runs are what every later one costs.
node bin/dumpdbg.cjs triage "$DUMP" ${EXE:+--exe "$EXE"} --json >/dev/null 2>&1
for _ in 1 2 3 4 5; do
  fl+=($(ms "$LLDB" --batch --no-lldbinit "${target[@]}" -o "bt all" -o "register read" -o "image list"))
  tr+=($(ms node bin/dumpdbg.cjs triage "$DUMP" ${EXE:+--exe "$EXE"} --json))
  bare+=($(ms node bench/dap-floor.mjs "$DUMP" ${EXE:+"$EXE"}))
done
F=$(printf '%s\n' "${fl[@]}" | median5); T=$(printf '%s\n' "${tr[@]}" | median5); B=$(printf '%s\n' "${bare[@]}" | median5)
echo "minidump triage: ${T} ms vs lldb --batch floor ${F} ms, ratio $(ratio "$T" "$F")"
# What Node and LLDB's adapter cost by themselves: the same questions from a bare Node client (bench/dap-floor.mjs).
echo "  a bare Node client of lldb-vscode asking the floor's questions: ${B} ms, ratio $(ratio "$B" "$F")"
