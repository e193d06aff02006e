/**
 * A memory fault in native code that the program's own code on a runtime called: a Java method whose
 * `Unsafe` read or JNI call faulted in the VM or a library, a Python line whose ctypes call handed a C
 * function a bad address. The program's frame has no registers or
 * variables a debugger can show (the runtime's tools read it); the fault's frame has, and its
 * instruction shows what address the call was given. The question is whether that address came from
 * the program (an API that reads what it is handed) or the native code went wrong on its own.
 */
import { fullRegister, memoryOperand } from "../../analyzers/index.js";
import { BACKTRACE, Citations, verdict, deeperProbes, type PlannedHypothesis, type Playbook } from "./kit.js";
import { concludeOn } from "./conclusions.js";
import type { Facts } from "./facts.js";
import { argumentOrdinal, basename, callPath, quoteLine, where } from "./prose.js";
import { hex, registersOf } from "./values.js";

/** The VM's entry points that read or write the raw address their caller gives (`Unsafe_GetLong`, `Unsafe_CopyMemory0`). */
const RAW_ADDRESS_API = /^(Unsafe_\w+|JNI_\w+|jni_\w+)$/;

export function runtimeCallPlaybook(facts: Facts): Playbook {
  const inside = facts.triage.faultIn ?? null;
  const native = inside ? `\`${inside.function}\`${inside.module ? ` (${basename(inside.module)})` : ""}` : "native code";
  const fault = facts.crash.faultAddress;
  const verb = facts.crash.access === "write" ? "writing" : facts.crash.access === "execute" ? "jumping to" : "reading";
  const operand = memoryOperand(facts.triage.instruction);
  const language = facts.culprit?.language === "python" ? "Python" : "Java";
  const handedDown: PlannedHypothesis = {
    rule: "address-from-caller",
    statement: `${where(facts.culprit)} handed ${native} an address that maps nothing, and it faulted ${verb} ${fault ?? "it"}`,
    plan: [[facts.fault.instruction, facts.fault.registers, facts.fault.record]],
    judge(evidence) {
      const c = new Citations();
      const instruction = evidence.find(facts.fault.instruction);
      const registers = evidence.find(facts.fault.registers);
      const record = evidence.find(facts.fault.record);
      const value = operand?.base ? registersOf(registers).get(fullRegister(operand.base)) : undefined;
      if (!operand?.base || value === undefined || fault === null) {
        return verdict("inconclusive", `What address the faulting instruction used could not be read from its registers${c.cite(registers)}; the fault was at ${fault ?? "an address the dump does not record"}${c.cite(record)}.`, registers, record);
      }
      const address = BigInt.asUintN(64, value + BigInt(operand.displacement ?? 0));
      const text = `The faulting instruction \`${facts.triage.instruction}\`${c.cite(instruction)} in ${native} used ${operand.shown ?? "its base register"} = ${hex(value)}${c.cite(registers)}, ${verb} ${hex(address)}, the fault address${c.cite(record)}`;
      if (address !== BigInt(fault)) return verdict("inconclusive", `${text.replace(/, the fault address.*$/, "")}, not the fault address ${fault}${c.cite(record)}: the instruction's own operand does not explain it.`, instruction, registers, record);
      // The address came from the caller where the entry reads the raw address it is given, or where the
      // library function was handed it as an argument (ctypes' string_at passing it to strlen, or on to memcpy).
      const raw = inside !== null && (RAW_ADDRESS_API.test(inside.function) || inside.argument !== null);
      return verdict(
        raw ? "confirmed" : "inconclusive",
        raw ? `${text}. ${native} ${verb === "writing" ? "writes" : "reads"} the raw address its caller passes: it came from the program's call.` : `${text}; whether the address was the caller's or ${native} computed it is not shown.`,
        instruction,
        registers,
        record,
      );
    },
  };
  const nativeBug: PlannedHypothesis = {
    rule: "native-code-fault",
    statement: `${native} faulted on memory of its own, not on anything ${where(facts.culprit)} passed (a bug in the runtime or the library)`,
    plan: [[BACKTRACE]],
    judge(evidence) {
      const bt = evidence.find(BACKTRACE);
      const c = new Citations();
      if (inside !== null && RAW_ADDRESS_API.test(inside.function)) {
        return verdict("rejected", `${native} is the runtime's entry for a call that reads or writes the address it is given${c.cite(bt)}: it acts on what its ${language} caller passed, not on memory of its own.`, bt);
      }
      if (inside?.argument) {
        return verdict("rejected", `${native} was handed ${inside.argument.value} as its ${argumentOrdinal(inside.argument.position)} argument (${inside.argument.register})${c.cite(bt)}: it faulted on what it was passed, not on memory of its own.`, bt);
      }
      return verdict("inconclusive", `${native} is called on the path ${callPath(facts)}${c.cite(bt)}; whether its own data was bad cannot be told without its debug information.`, bt);
    },
  };
  return {
    hypotheses: [handedDown, nativeBug],
    investigate: deeperProbes([]),
    conclude: concludeOn(facts, ["address-from-caller"], "what address the program's call passed", ({ hit, evidence }, c) => ({
      summary: `${where(facts.culprit)} called ${native} with the address ${fault ?? "it faulted at"}, which maps nothing: ${verb} it faulted${c.cite(evidence.find(facts.fault.record))}${fault !== null && BigInt(fault) < 0x10000n ? (BigInt(fault) === 0n ? " (NULL)" : " (NULL plus an offset)") : ""}${facts.triage.caught ? `, and the ${facts.triage.jvm ? "JVM" : "runtime"}'s handler caught the fault and ended the process` : ""}.`,
      cause: [hit.finding ?? "", facts.line ? `The program's line: ${quoteLine(facts.line)}.` : "", pythonLocalsSaid(facts, c.cite(evidence.findCommand(facts.triage.python?.threadsCommand ?? null))), `The call was made on the path ${callPath(facts)}.`],
      confidence: 0.8,
      recommendations: [
        `Check where ${where(facts.culprit)} gets the address it passes to ${native}${fault !== null && BigInt(fault) < 0x10000n ? ": it was computed from a base of 0 (an object or buffer that was never allocated, or a lookup that returned nothing)" : ""}, and validate it before the call.`,
        language === "Python"
          ? "Prefer objects that carry their length (bytes, a memoryview, a ctypes array or buffer) over raw addresses handed to ctypes: a bad one then raises in the program instead of crashing the process."
          : "Prefer APIs the runtime bounds-checks (a ByteBuffer, a VarHandle, the Foreign Memory API's segments) over raw addresses: a bad index then throws in the program instead of crashing the process.",
      ],
    })),
    openQuestions: [{ text: "Where the address the program passed was computed, before the call, is not in the dump.", question: `Which object or buffer should ${where(facts.culprit)} have read from, and can it be absent?` }],
  };
}

/** The culprit's Python locals as the core holds them (`address = 8`), said where the Python side read them; "" otherwise. */
function pythonLocalsSaid(facts: Facts, cite: string): string {
  const { culprit } = facts.crash;
  if (culprit.language !== "python") return "";
  const frame = facts.triage.python?.threads.find((thread) => thread.id === facts.crash.thread.id)?.frames.find((f) => f.function === culprit.function && f.line === culprit.line);
  if (!frame?.locals?.length) return "";
  const shown = frame.locals.slice(0, MAX_LOCALS_SAID).map((local) => `\`${local.name} = ${local.value}\``);
  return `The locals of \`${culprit.function}\` as the core holds them: ${shown.join(", ")}${frame.locals.length > MAX_LOCALS_SAID ? ", …" : ""}${cite}.`;
}

const MAX_LOCALS_SAID = 6;
