/**
 * One question's probes: each asked of the executor once and read, as stored, into the model; the
 * playbooks' asked where the analysis asked them (the home thread, frame 0), so the store serves
 * the analysis's evidence; and what they measured, read by the playbooks' own judges.
 */
import { probeKey, type Probe, type Reading, type Vocabulary } from "../../debuggers/probe.js";
import { commandKey, type EvidenceStore } from "../../evidence/store.js";
import { evidenceFrom, type Evidence } from "../evidence.js";
import type { CommandExecutor } from "../executor.js";
import type { PlannedHypothesis, Verdict } from "../playbooks/kit.js";
import type { Briefing } from "./briefing.js";

export interface Measured<P extends Probe = Probe> {
  id: string;
  ok: boolean;
  /** The output read into the model; null when the command failed. */
  reading: Reading<P> | null;
  /** Why it failed, as one line; null when it succeeded. */
  error: string | null;
  refused: boolean;
}

export interface ProbeDeps {
  executor: CommandExecutor;
  store: EvidenceStore;
  /** How the session's debugger says each probe and reads its output. */
  vocabulary: Vocabulary;
  briefing: Briefing;
}

export class QuestionProbes {
  private readonly measured = new Map<string, Promise<Measured>>();
  /** Each command this question ran or recalled, by its key, with its evidence id: what the playbooks' judges read. */
  private readonly ran = new Map<string, string>();
  /** Where /exec had left the debugger when the playbooks' probes moved it home; null while it has not moved. */
  private userSelection: { thread: number | null; frame: number } | null = null;

  constructor(
    private readonly deps: ProbeDeps,
    /** Cancels the question at its next command. */
    private readonly signal: AbortSignal,
  ) {}

  /**
   * A playbook hypothesis judged by its own rule: its plan's rounds asked where the analysis asked
   * them, until one decides.
   */
  async judged(planned: PlannedHypothesis): Promise<Verdict> {
    let verdict: Verdict | null = null;
    for (const round of planned.plan) {
      await this.runAtHome(round);
      verdict = planned.judge(this.evidence());
      if (verdict.status !== "inconclusive") break;
    }
    return verdict ?? planned.judge(this.evidence());
  }

  /** What the playbooks' judges read: triage's evidence, and what this question ran or recalled. */
  evidence(): Evidence {
    const latest = new Map(Object.entries(this.deps.briefing.triageEvidence).map(([command, id]) => [commandKey(command), id]));
    for (const [key, id] of this.ran) latest.set(key, id);
    return evidenceFrom(latest, this.deps.store, this.deps.vocabulary);
  }

  /**
   * Asks the playbooks' probes where the analysis asked them: on the thread the debugger selected
   * on opening the dump, in frame 0 (a probe for another place names it), so the store serves the
   * analysis's evidence. When /exec moved the selection, it is moved there for them and back after.
   */
  async runAtHome<P extends Probe>(wanted: P[]): Promise<Measured<P>[]> {
    if (this.userSelection === null) {
      const home = this.deps.briefing.homeThread;
      const { selectedThread, selectedFrame } = this.deps.executor.context();
      const thread = selectedThread?.id ?? null;
      const frame = selectedFrame?.level ?? 0;
      if ((home !== null && thread !== null && thread !== home) || frame !== 0) {
        this.userSelection = { thread, frame };
        await this.select(home, 0);
      }
    }
    const measured: Measured<P>[] = [];
    for (const probe of wanted) measured.push(await this.run(probe));
    return measured;
  }

  /** The selection /exec made, back where it was, once a question's probes have run at home. */
  async putSelectionBack(): Promise<void> {
    const selection = this.userSelection;
    if (selection === null) return;
    this.userSelection = null;
    await this.select(selection.thread, selection.frame);
  }

  private async select(thread: number | null, frame: number): Promise<void> {
    if (thread !== null) await this.deps.executor.run({ kind: "select", thread }, "chat");
    await this.deps.executor.run({ kind: "select", frame }, "chat");
  }

  /** A probe's measurement: asked of the executor the first time, recalled after. */
  run<P extends Probe>(probe: P): Promise<Measured<P>> {
    const key = probeKey(probe);
    let measured = this.measured.get(key) as Promise<Measured<P>> | undefined;
    if (!measured) {
      measured = this.measure(probe);
      this.measured.set(key, measured);
    }
    return measured;
  }

  /** Runs (or recalls) a probe through the executor and reads its output, as stored, into the model. */
  private async measure<P extends Probe>(probe: P): Promise<Measured<P>> {
    this.signal.throwIfAborted();
    const result = await this.deps.executor.run(probe, "chat");
    // A cancelled answer stops at the next command; the one in flight was allowed to finish.
    this.signal.throwIfAborted();
    this.ran.set(commandKey(result.command), result.evidenceId);
    return {
      id: result.evidenceId,
      ok: result.ok,
      reading: result.ok ? this.deps.vocabulary.read(probe, this.deps.store.output(result.evidenceId)) : null,
      error: result.ok ? null : (result.error ?? result.errorType ?? "failed"),
      refused: result.errorType === "not_allowed",
    };
  }
}
