#!/usr/bin/env bash
# Builds the demo crash program, makes a real core of its crash, and analyses it offline.
# Extra arguments go to `dumpdbg analyze` (e.g. --json, --chat).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/demo/build"
mkdir -p "$build"
cd "$build"

for tool in gcc gdb; do
  command -v "$tool" >/dev/null || { echo "demo: $tool is missing (apt-get install -y gdb gcc)" >&2; exit 4; }
done
[ -f "$root/dist/dumpdbg.cjs" ] || { echo "demo: not built yet; run npm ci && npm run build first" >&2; exit 2; }

gcc -g -O0 -pthread -o crash "$root/demo/crash.c"
rm -f core core.* crash.core

# The kernel's core when core_pattern writes a file here; otherwise gdb writes one.
pattern="$(cat /proc/sys/kernel/core_pattern 2>/dev/null || echo '|')"
if [[ "$pattern" != \|* ]]; then
  (ulimit -c unlimited; ./crash >/dev/null 2>&1) || true
  found="$(ls -t core core.* 2>/dev/null | head -n1 || true)"
  [ -n "$found" ] && mv "$found" crash.core
fi
if [ ! -f crash.core ]; then
  gdb -nx -batch -ex run -ex "generate-core-file crash.core" ./crash >/dev/null 2>&1
fi

echo "demo: analysing $build/crash.core" >&2
exec node "$root/bin/dumpdbg.cjs" analyze crash.core --exe ./crash --provider offline \
  --issue "the chat server dies when a client hangs up during a broadcast" \
  --out "$build/reports" --sessions-dir "$build/.sessions" "$@"
