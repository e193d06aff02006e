/** C++ runtime terminations: an exception nobody caught, a pure virtual call. */
import { CLR_EXCEPTION, normalizeFunctionName } from "../../analyzers/index.js";
import { probes, type ProbeOf } from "../../debuggers/probe.js";
import type { Evidence } from "../evidence.js";
import type { Facts } from "./facts.js";
import { ABORT_MESSAGE, BACKTRACE, backtraceOf, Citations, deeperProbes, verdict, type PlannedHypothesis, type Playbook } from "./kit.js";
import { concludeOn } from "./conclusions.js";
import { listedCode } from "./origins.js";
import { basename, callPath, where } from "./prose.js";
import { grep, type SourceFile } from "./source.js";
import { printed, stringOf, variablesOf } from "./values.js";


/** The runtime frames between abort() and the culprit, innermost first, by name. */
function machinery(evidence: Evidence, facts: Facts): { found: ReturnType<Evidence["find"]>; names: string[] } {
  const { found, frames } = backtraceOf(evidence, facts);
  const names = frames.filter((f) => f.level < facts.culpritLevel).map((f) => (f.function ? normalizeFunctionName(f.function) : "??"));
  return { found, names };
}

/**
 * The library call the culprit made that threw (`std::vector<int>::at`), when the throw is not in
 * the culprit's own code: the frame right above it, if it is not the throw machinery itself.
 */
function libraryThrower(names: string[]): string | null {
  const above = names.at(-1);
  if (!above || above === "??" || /^(__cxa_|std::terminate|std::__terminate|__gxx_|_Unwind_)/.test(above)) return null;
  return above;
}

export function uncaughtExceptionPlaybook(facts: Facts): Playbook {
  if (facts.crash.signalCode === CLR_EXCEPTION) return managedExceptionPlaybook(facts);
  const type = facts.triage.thrown ?? null;
  const thrown = type ? `\`${type}\`` : "an exception";
  const noHandler: PlannedHypothesis = {
    rule: "no-handler",
    statement: `${where(facts.culprit)} threw ${thrown} and no caller on the path ${callPath(facts)} catches it`,
    plan: [[facts.culpritListing, BACKTRACE].filter((c) => c !== null)],
    judge(evidence) {
      const { found, names } = machinery(evidence, facts);
      const c = new Citations();
      const throws = names.some((n) => /^__cxa_(re)?throw$/.test(n));
      if (throws && names.some((n) => /terminate/.test(n)) && !names.some((n) => /__cxa_call_terminate|__cxa_call_unexpected/.test(n))) {
        const code = evidence.find(facts.culpritListing);
        const source = code?.ok ? ` The line is \`${listedCode(code)}\`${c.cite(code)}.` : "";
        const chain = names.slice(names.findIndex((n) => /abort$/.test(n))).reverse().filter((n) => n !== "??");
        const api = libraryThrower(names);
        const via = api ? ` The throw came from \`${api}\`, which ${where(facts.culprit)} called.` : "";
        return verdict("confirmed", `Above ${where(facts.culprit)} the stack runs ${chain.join(" → ")}${c.cite(found)}: __cxa_throw found no handler and called std::terminate.${via}${source}`, found, code);
      }
      return verdict("inconclusive", `The runtime frames (${names.join(", ") || "none"})${c.cite(found)} do not show a throw that found no handler.`, found);
    },
  };
  const noexcept: PlannedHypothesis = {
    rule: "noexcept-boundary",
    statement: "the exception reached a noexcept function or a destructor during unwinding, which terminates even if a handler exists further out",
    plan: [[BACKTRACE]],
    judge(evidence) {
      const { found, names } = machinery(evidence, facts);
      const c = new Citations();
      if (names.some((n) => /__cxa_call_terminate|__cxa_call_unexpected/.test(n))) {
        return verdict("confirmed", `__cxa_call_terminate is on the stack${c.cite(found)}: unwinding hit a noexcept boundary.`, found);
      }
      return verdict("rejected", `std::terminate was called from __cxa_throw itself${c.cite(found)}, before any unwinding: the search for a handler failed, no noexcept boundary was involved.`, found);
    },
  };
  const files = ownFiles(facts);
  const catches = () => files.flatMap((file) => grep(file, /\bcatch\s*\(/).map((line) => ({ file, line })));
  return {
    hypotheses: [noHandler, noexcept],
    investigate: deeperProbes([facts.inCulprit(probes.arguments()), facts.inCulprit(probes.locals()), ...catches().slice(0, 3).map((c) => facts.list(c.line, c.line, c.file.path))]),
    conclude: concludeOn(facts, ["no-handler"], "where the exception came from", ({ evidence, hit }, c) => {
      const args = evidence.find(facts.inCulprit(probes.arguments()));
      const values = variablesOf(args).map((v) => ({ name: v.name, text: stringOf(v.value) })).filter((v) => v.text !== null);
      const handlers = catches().map((h) => ({ ...h, found: evidence.find(facts.list(h.line, h.line, h.file.path)) }));
      const api = libraryThrower(machinery(evidence, facts).names);
      const summary = `${where(facts.culprit)} ${api ? `called \`${api}\`, which threw` : "threw"} ${thrown}${c.cite(evidence.find(ABORT_MESSAGE))}${values.length ? ` (with ${values.map((v) => `${v.name} = "${v.text}"`).join(", ")}${c.cite(args)})` : ""}, and nothing on the path ${callPath(facts)} catches it, so std::terminate aborted the process.`;
      return {
        summary,
        cause: [
          hit.finding ?? "",
          handlers.length === 0
            ? `There is no \`catch\` in ${files.map((f) => basename(f.path)).join(", ") || "the program's files on the stack"}.`
            : `The \`catch\` clauses in the program (${handlers.map((h) => `${basename(h.file.path)}:${h.line}${c.cite(h.found)}`).join(", ")}) are not on this path or do not match ${thrown}.`,
        ],
        withCaller: true,
        confidence: 0.9,
        recommendations: [
          `Catch ${thrown} where the failure can be handled — the caller that can skip or reject the input (on the path ${callPath(facts)}) — and report which input caused it.`,
          `Or make the condition that throws an expected outcome (e.g. return an optional/error) if callers must deal with it anyway.`,
        ],
      };
    }),
    openQuestions: [
      { text: "The exception object's message is not recoverable from this core without libstdc++ debug info.", question: "Does the program's stderr show the exception's what() text (\"terminate called after throwing...\")?" },
      { text: "Which input triggered the throw is not in the core beyond the arguments shown.", question: "Which input (file, request, plugin) was being processed, and is it expected to be invalid sometimes?" },
    ],
  };
}

export function pureVirtualPlaybook(facts: Facts): Playbook {
  const self = facts.inCulprit(probes.evaluate("*this"));
  const destructors = (evidence: Evidence) => {
    const { found, frames } = backtraceOf(evidence, facts);
    return { found, names: frames.filter((f) => f.level > (facts.culprit?.level ?? 0) && f.function && /~/.test(f.function)).map((f) => normalizeFunctionName(f.function ?? "")) };
  };
  const inDestructor: PlannedHypothesis = {
    rule: "called-during-destruction",
    statement: `${where(facts.culprit)} made a virtual call while the object was being destroyed: the derived part was already gone, so the call reached the pure virtual`,
    plan: [[self, BACKTRACE]],
    judge(evidence) {
      const object = evidence.find(self);
      const vptr = /_vptr[.\w]* = 0x[0-9a-f]+ <vtable for ([^+>]+)/.exec(printed(object) ?? "")?.[1] ?? null;
      const { found, names } = destructors(evidence);
      const c = new Citations();
      if (names.length > 0) {
        const dynamic = vptr ? ` The object's vtable pointer is that of \`${vptr}\`${c.cite(object)}, the base class.` : "";
        return verdict("confirmed", `The call comes from inside ${names.map((n) => `\`${n}\``).join(" ← ")}${c.cite(found)}.${dynamic}`, found, object);
      }
      return verdict("inconclusive", `No destructor is on the stack${c.cite(found)}.`, found);
    },
  };
  const dangling: PlannedHypothesis = {
    rule: "dangling-object",
    statement: "the object had already been destroyed and freed, and a dangling pointer was used",
    plan: [[BACKTRACE]],
    judge(evidence) {
      const { found, names } = destructors(evidence);
      if (names.length > 0) return verdict("rejected", `The destructor chain is still running on this very stack${new Citations().cite(found)}: the object is being destroyed now, not used after it was freed.`, found);
      return verdict("inconclusive", "Without a destructor on the stack, a dangling pointer cannot be ruled out.", found);
    },
  };
  const constructor: PlannedHypothesis = {
    rule: "called-during-construction",
    statement: "a base-class constructor made the virtual call before the derived part existed",
    plan: [[BACKTRACE]],
    judge(evidence) {
      const { found, frames } = backtraceOf(evidence, facts);
      const ctor = frames.some((f) => f.function && /(\w+)::\1\s*\(/.test(f.function));
      return ctor ? verdict("confirmed", `A constructor is on the stack${new Citations().cite(found)}.`, found) : verdict("rejected", `No constructor is on the stack${new Citations().cite(found)}.`, found);
    },
  };
  return {
    hypotheses: [inDestructor, dangling, constructor],
    investigate: deeperProbes([facts.culpritListing, facts.callerListing]),
    conclude: concludeOn(facts, ["called-during-destruction", "called-during-construction"], "why a pure virtual function was called", ({ evidence, hit }, c) => {
      const code = evidence.find(facts.culpritListing);
      const destroying = hit.rule === "called-during-destruction";
      const summary = `${where(facts.culprit)} called a pure virtual function${code?.ok ? ` (\`${listedCode(code)}\`${c.cite(code)})` : ""} ${destroying ? "while the object was being destroyed" : "while it was being constructed"}, and libstdc++ aborted with "pure virtual method called".`;
      return {
        summary,
        cause: [
          hit.finding ?? "",
          destroying
            ? "By the time a base-class destructor runs, the derived class's destructor has finished and the object's dynamic type is the base again: a virtual call from there cannot reach the derived override."
            : "While a base-class constructor runs, the object's dynamic type is the base: a virtual call from there cannot reach the derived override.",
        ],
        confidence: 0.9,
        recommendations: [
          destroying
            ? "Do not call virtual functions from a destructor: have the derived class flush/close in its own destructor, or require an explicit close() before destruction."
            : "Do not call virtual functions from a constructor; use a separate init step or a factory.",
          "Compile with -Wall; clang's -Wcall-to-pure-virtual-from-ctor-dtor catches the direct case.",
        ],
      };
    }),
    openQuestions: [{ text: "Which code released the object is outside the stack once it returns.", question: "Who owns and destroys this object — is destruction expected at that point (shutdown, reset)?" }],
  };
}

/** The program's own source files on the crashing stack. */
function ownFiles(facts: Facts): SourceFile[] {
  const files = new Map<string, SourceFile>();
  for (const frame of facts.triage.frames) {
    if (!frame.file || files.has(frame.file) || /^\/usr\/include|^\/rustc|^\.\//.test(frame.file)) continue;
    const file = facts.sourceOf(frame.file);
    if (file) files.set(frame.file, file);
  }
  return [...files.values()];
}

/**
 * A .NET exception no handler caught: the runtime's own record of it (SOS's `!pe`) and the throwing
 * thread's managed stack say which type, which message and which method of the program.
 */
function managedExceptionPlaybook(facts: Facts): Playbook {
  const exception: ProbeOf<"managed-exception"> = { kind: "managed-exception" };
  const stack: ProbeOf<"managed-stack"> = { kind: "managed-stack" };
  const method = facts.crash.culprit.function;
  const unhandled: PlannedHypothesis = {
    rule: "managed-unhandled",
    statement: `${where(facts.culprit)} threw a .NET exception that no catch on its managed stack handled`,
    plan: [[exception, stack]],
    judge(evidence) {
      const record = evidence.find(exception);
      const frames = evidence.find(stack);
      const c = new Citations();
      const thrown = record?.reading ?? null;
      if (!thrown) return verdict("inconclusive", `The runtime's record of the exception could not be read${c.cite(record)} (SOS is needed).`, record);
      const own = frames?.reading?.frames.find((frame) => frame.function !== null && method !== null && frame.function.startsWith(method)) ?? null;
      const at = own ? ` The thread's managed stack has ${method}${own.file ? ` at ${basename(own.file)}:${own.line ?? "?"}` : ""}${c.cite(frames)}.` : "";
      return verdict("confirmed", `The thread's exception is ${thrown.type}${thrown.message ? `: "${thrown.message}"` : ""}${c.cite(record)}, and the runtime ended the process with it.${at}`, record, own ? frames : null);
    },
  };
  return {
    hypotheses: [unhandled],
    investigate: deeperProbes([facts.culpritListing]),
    conclude: concludeOn(facts, ["managed-unhandled"], "which exception ended the process", ({ evidence, hit }, c) => {
      const thrown = evidence.find(exception)?.reading ?? null;
      const code = evidence.find(facts.culpritListing);
      const nullReference = thrown?.type === "System.NullReferenceException";
      return {
        summary: `${where(facts.culprit)} threw ${thrown?.type ?? "an exception"}${thrown?.message ? ` ("${thrown.message}")` : ""}${c.cite(evidence.find(exception))}${code?.ok ? ` at \`${listedCode(code)}\`${c.cite(code)}` : ""}, and no catch on the thread's managed stack handled it, so the runtime ended the process.`,
        cause: [hit.finding ?? ""],
        confidence: 0.85,
        recommendations: [
          nullReference
            ? `Find the reference that is null in ${where(facts.culprit)} (the managed stack's locals and parameters show which) and check it, or make sure it is set before the method runs.`
            : `Handle ${thrown?.type ?? "the exception"} where the failure can be dealt with, on the path that calls ${where(facts.culprit)}, and report which input caused it.`,
          "Log unhandled exceptions with their stack (AppDomain.UnhandledException) so the next one names its input.",
        ],
      };
    }),
    openQuestions: [{ text: "Which request or input the method was processing is not in the exception record.", question: "Which operation was running when the service died, and with what input?" }],
  };
}
