/**
 * Each playbook's judges, without a debugger: the evidence gdb printed in real offline analyses of
 * the fixture programs' cores (tests/fixtures/evidence/, recorded by
 * tests/e2e/record-judge-evidence.test.ts) goes through gdb's readers, and every hypothesis the
 * playbook forms from the recorded triage is judged as it was in the run.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { Evidence, Found } from "../../src/agents/evidence.js";
import { crashSiteOf } from "../../src/agents/playbooks/crash-site.js";
import { factsOf } from "../../src/agents/playbooks/facts.js";
import { playbookFor } from "../../src/agents/playbooks/index.js";
import type { TriageResult } from "../../src/analyzers/index.js";
import { gdbVocabulary } from "../../src/debuggers/gdb/vocabulary.js";
import type { Probe } from "../../src/debuggers/probe.js";
import { commandKey } from "../../src/evidence/store.js";
import type { HypothesisStatus } from "../../src/state.js";

const EVIDENCE_DIR = new URL("../fixtures/evidence/", import.meta.url);
const PROGRAMS_DIR = fileURLToPath(new URL("../fixtures/programs", import.meta.url));

/** What one analysis recorded: its triage, and each command a judge looked up, as gdb printed it. */
interface Recording {
  homeThread: number | null;
  triage: TriageResult;
  evidence: { id: string; command: string; ok: boolean; output: string }[];
}

/** The recording of `program`; sources are named under `<programs>`, the fixture programs' folder here. */
function recording(program: string): Recording {
  const text = readFileSync(new URL(`${program}.json`, EVIDENCE_DIR), "utf8");
  return JSON.parse(text.split("<programs>").join(PROGRAMS_DIR)) as Recording;
}

/** The evidence as the agents read it, found by the command gdb renders a probe as, read by gdb's readers. */
function recordedEvidence(recorded: Recording["evidence"]): Evidence {
  const byCommand = new Map(recorded.map((entry) => [commandKey(entry.command), entry]));
  return {
    find<P extends Probe>(probe: P | null): Found<P> | null {
      if (probe === null) return null;
      const command = gdbVocabulary.render(probe);
      const entry = byCommand.get(commandKey(command));
      if (!entry) return null;
      return { id: entry.id, ok: entry.ok, summary: "", output: entry.output, probe, command, reading: entry.ok ? gdbVocabulary.read(probe, entry.output) : null };
    },
    findCommand(command) {
      const entry = command ? byCommand.get(commandKey(command)) : undefined;
      return entry ? { id: entry.id, ok: entry.ok, summary: "", output: entry.output, probe: { kind: "command", text: entry.command }, command: entry.command, reading: null } : null;
    },
    exists: (id) => recorded.some((entry) => entry.id === id),
    succeeded: (id) => recorded.some((entry) => entry.id === id && entry.ok),
  };
}

type Judged = Exclude<HypothesisStatus, "untested">;

/** Per program, per rule: the verdict, and for the ones that decide, what the finding must say. */
const VERDICTS: Record<string, Record<string, Judged | [Judged, RegExp]>> = {
  "null-deref": {
    "null:session->client": ["confirmed", /`session->client` was \(struct client \*\) 0x0 \(E\d+\)\. `&session->client->fd` is 0x20, exactly the fault address/],
    "stale-pointer": ["rejected", /0x20 \(E\d+\) is in the first page/],
    "corrupted-owner": ["rejected", /stores NULL there: `session->client = NULL;` at null-deref\.c:22 \(E\d+\)/],
  },
  "null-write": { "null:entry": ["confirmed", /`&entry->value` is 0x18, exactly the fault address/], "stale-pointer": "rejected" },
  "null-arg": { "null:req->agent": ["confirmed", /`req->agent` was 0x0/], "stale-pointer": "rejected", "corrupted-owner": "inconclusive" },
  "cpp-null-deref": { "null:this": ["confirmed", /`&this->last_active_` is 0x20/], "stale-pointer": "rejected" },
  "rust-null": { "null:node": ["confirmed", /`node` was \(\*mut rust_null::Node\) 0x0/], "stale-pointer": "rejected" },
  "thread-crash": { "null:job->request": ["confirmed", /`&job->request->priority` is 0x40/], "stale-pointer": "rejected", "corrupted-owner": "inconclusive" },
  "wild-pointer": { "wild-pointer": ["confirmed", /No mapping of the process covers 0xdeadbeef000 .* fill pattern/], "use-after-free": ["rejected", /fill pattern/] },
  "write-rodata": {
    "read-only-write": ["confirmed", /lies in \.rodata of write-rodata \(E\d+\), which is mapped read-only/],
    "use-after-free": ["rejected", /SEGV_ACCERR/],
    "wild-pointer": ["rejected", /inside a mapping/],
  },
  "bit-flip": { "bit-flip": ["confirmed", /differs in bit 41 alone from 0x5624bcdab2e0/], "wild-pointer": "inconclusive", "use-after-free": "inconclusive" },
  "index-out-of-bounds": {
    "index-out-of-bounds": ["confirmed", /`user_id` is 400000000 \(E\d+\).* 0x5f5e1000 bytes past the start of the block/],
    "wild-pointer": ["rejected", /comes from the index `user_id`/],
    "use-after-free": "inconclusive",
  },
  "bad-jump": { "null-function-pointer": ["confirmed", /`command->handler` was \(command_handler\) 0x0 \(E\d+\), the pc .* `call \*%rdx`/], "smashed-return": "rejected" },
  "dangling-callback": { "null-function-pointer": ["confirmed", /0x3a0575117c0851de \(E\d+\): not a canonical address/], "smashed-return": ["rejected", /stopped on the call itself/] },
  "bus-error": { "truncated-mapping": ["confirmed", /inside the mapping of \/tmp\/dumpdbg-log-\w+ \(deleted\).* BUS_ADRERR/], "misaligned-access": "rejected" },
  "stack-overflow": { "runaway-recursion": ["confirmed", /repeats parse_value \(E\d+\); one turn takes 64 bytes of stack/], "huge-frame": "rejected" },
  "huge-frame": { "runaway-recursion": ["rejected", /only 2 frames deep/], "huge-frame": ["confirmed", /Frame 0 takes 67108928 bytes \(64\.0 MiB\)/] },
  "stack-smash": { "local-array-overflow": ["confirmed", /`username` holds 16 bytes \(E\d+\) and `i` = 48/], "caller-buffer-overflow": "rejected" },
  fortify: { "fortified-overflow": ["confirmed", /destlen = 17 \(E\d+\).* needs 34 bytes/], "wrong-object-size": ["rejected", /`greeting->text` is 24 bytes/] },
  "double-free": { "freed-twice": ["confirmed", /double free detected in tcache 2.* `conn->read_buffer` still holds/], "corrupted-chunk": ["rejected", /header is intact/] },
  "heap-corruption": { "heap-overflow": ["confirmed", /top chunk's header holds the bytes "- pid 1234, work"/], "culprit-allocation": "rejected" },
  "abort-msg": { "interior-pointer": ["confirmed", /`token` is 0x55c67b6b42a3 \(E\d+\), 3 bytes past a 16-byte boundary/], "corrupted-header": "rejected" },
  assert: { "assertion-values": ["confirmed", /= 71 \(E\d+\), `sizeof ring->data` = 64 \(E\d+\): 71 <= 64 is false/], "corrupted-state": "rejected" },
  abort: { "deliberate-abort": ["confirmed", /calls abort\(\) at abort\.c:29 \(E\d+\) when `config->workers <= 0`, and `config->workers` = 0/], "library-abort": "rejected" },
  "uncaught-exception": { "no-handler": ["confirmed", /__cxa_throw found no handler/], "noexcept-boundary": "rejected" },
  "out-of-range": { "no-handler": ["confirmed", /std::vector::at → std::vector::_M_range_check → __cxa_throw/], "noexcept-boundary": "rejected" },
  "pure-virtual": {
    "called-during-destruction": ["confirmed", /vtable pointer is that of `OutputStream` \(E\d+\)/],
    "dangling-object": "rejected",
    "called-during-construction": "rejected",
  },
  "div-zero": { "zero-divisor": ["confirmed", /`stats->requests` was 0 \(E\d+\)\. The instruction `idiv %rcx`/], "int-min-overflow": ["rejected", /`stats->requests` is 0 \(E\d+\), not -1/] },
  "illegal-instruction": { "trap-reached": ["confirmed", /`ud2` \(E\d+\).* `frame\[0\]` is 9/], "bad-code": "rejected" },
  "rust-panic": { "own-call-panicked": ["confirmed", /called `Option::expect` on `None`\. Its local `price` is None/], "library-panicked": "rejected" },
  "lost-wakeup": {
    "nothing-wakes": ["confirmed", /Every thread's stack ends in a wait call \(E\d+\), and no lock cycle was found: all 4 threads are blocked waiting: 3 on a condition variable \(in worker_main\)/],
    "one-still-running": ["rejected", /No thread was running: each of the 4 stacks ends in a wait call/],
  },
  "debug-break": {
    "deliberate-break": ["confirmed", /The instruction that trapped is `int3` \(E\d+\), a breakpoint the program's own code executes, compiled from `VERIFY\(texture->width > 0 && texture->height > 0\);`/],
    "debug-assert": ["rejected", /No assertion machinery is on the stack/],
  },
  deadlock: {
    "lock-cycle": ["confirmed", /thread 2 waits for 0x7ffc2eaf08d0, whose __owner is LWP 3018 = thread 3 .* a closed cycle/],
    "lost-unlock": "rejected",
    "condition-wait": ["rejected", /inside pthread_mutex_lock/],
  },
};

describe("playbook judges on recorded gdb evidence", () => {
  describe.each(Object.entries(VERDICTS))("%s", (program, expected) => {
    const { triage, homeThread, evidence } = recording(program);
    const playbook = playbookFor(factsOf(triage, crashSiteOf(triage, homeThread)));
    const judged = recordedEvidence(evidence);

    it.each(Object.entries(expected))("%s", (rule, verdict) => {
      const [status, says] = Array.isArray(verdict) ? verdict : [verdict, null];
      const hypothesis = playbook.hypotheses.find((h) => h.rule === rule);
      expect(hypothesis, `the ${triage.crash.kind} playbook forms no hypothesis "${rule}"`).toBeDefined();
      const { status: judgedStatus, finding, evidenceIds } = hypothesis!.judge(judged);
      expect(judgedStatus, finding).toBe(status);
      if (says) expect(finding).toMatch(says);
      for (const id of evidenceIds) expect(judged.exists(id), `${id} is not in the recording`).toBe(true);
    });
  });
});
