/**
 * The evidence of this analysis as the agents read it: by probe, the latest run of each (triage's
 * own included), with the output read from the store, and into the model, only when a rule asks.
 * A probe is found by the command the session's debugger renders it as, which is what ran.
 */
import type { Probe, Reading, Vocabulary } from "../debuggers/probe.js";
import { commandKey, type EvidenceStore } from "../evidence/store.js";
import type { State } from "../state.js";

export interface Found<P extends Probe = Probe> {
  id: string;
  ok: boolean;
  summary: string;
  /** The debugger's output, as it printed it. */
  output: string;
  /** What was asked, and the command it ran as. */
  probe: P;
  command: string;
  /** The output read into the model; null when the command failed. */
  reading: Reading<P> | null;
}

export interface Evidence {
  /** The latest evidence of `probe` in this analysis, or null when it never ran (or there is no probe). */
  find<P extends Probe>(probe: P | null): Found<P> | null;
  /** The latest evidence of a command another tool ran (jhsdb's, for a JVM), by the command as recorded; null when it never ran. */
  findCommand(command: string | null | undefined): Found | null;
  /** Whether the evidence id exists in the session's store. */
  exists(id: string): boolean;
  /** Whether the evidence id exists and its command succeeded. */
  succeeded(id: string): boolean;
}

export function evidenceOf(state: State, store: EvidenceStore, vocabulary: Vocabulary): Evidence {
  const latest = new Map<string, string>();
  for (const [command, id] of Object.entries(state.triageEvidence)) latest.set(commandKey(command), id);
  for (const observation of state.observations) latest.set(commandKey(observation.command), observation.evidenceId);
  return evidenceFrom(latest, store, vocabulary);
}

/** The evidence of some runs: `latest` maps each command's key to the evidence id of its latest run. */
export function evidenceFrom(latest: ReadonlyMap<string, string>, store: EvidenceStore, vocabulary: Vocabulary): Evidence {
  const cache = new Map<string, Found | null>();
  return {
    find<P extends Probe>(probe: P | null): Found<P> | null {
      if (probe === null) return null;
      const command = vocabulary.render(probe);
      const id = latest.get(commandKey(command));
      if (id === undefined) return null;
      const key = `${id}\u0000${command}`;
      if (!cache.has(key)) {
        const record = store.get(id);
        const output = record?.ok ? store.output(id) : "";
        cache.set(key, record && { id, ok: record.ok, summary: record.summary, output, probe, command, reading: record.ok ? vocabulary.read(probe, output) : null });
      }
      return (cache.get(key) ?? null) as Found<P> | null;
    },
    findCommand(command) {
      if (!command) return null;
      const id = latest.get(commandKey(command));
      const record = id === undefined ? null : store.get(id);
      if (!record || id === undefined) return null;
      return { id, ok: record.ok, summary: record.summary, output: record.ok ? store.output(id) : "", probe: { kind: "command", text: command }, command, reading: null };
    },
    exists: (id) => store.get(id) !== null,
    succeeded: (id) => store.get(id)?.ok === true,
  };
}

/** One line per piece of evidence, for a prompt: id, command, summary. */
export function evidenceIndex(store: EvidenceStore): string {
  const lines: string[] = [];
  for (const record of store.list()) lines.push(`${record.id} \`${record.command}\`: ${record.summary}`);
  return lines.join("\n") || "(none yet)";
}

/** Characters of one output a prompt quotes; the prompt's budget trims the whole further if needed. */
const OUTPUT_CHARS = 3000;

/** The outputs of some evidence, each under its id and command, for a prompt. */
export function outputsOf(store: EvidenceStore, ids: string[]): string {
  const blocks: string[] = [];
  for (const id of [...new Set(ids)]) {
    const record = store.get(id);
    if (!record) continue;
    const output = record.ok ? store.output(id) : `(${record.summary})`;
    const shown = output.length > OUTPUT_CHARS ? `${output.slice(0, OUTPUT_CHARS)}\n[... ${output.length - OUTPUT_CHARS} more characters ...]` : output;
    blocks.push(`${id} \`${record.command}\`:\n${shown.trimEnd()}`);
  }
  return blocks.join("\n\n") || "(none)";
}
