/** SIGBUS: a file mapping read past the end of its file, or an unaligned access. */
import { mappingAt } from "../../analyzers/index.js";
import { probes } from "../../debuggers/probe.js";
import type { Evidence } from "../evidence.js";
import { concludeOn } from "./conclusions.js";
import type { Facts } from "./facts.js";
import { Citations, MAPPINGS, notYetRun, verdict, type Playbook, type PlannedHypothesis } from "./kit.js";
import { listing, outerCallers } from "./origins.js";
import { where } from "./prose.js";
import { hex } from "./values.js";

export function busErrorPlaybook(facts: Facts): Playbook {
  const fault = facts.crash.faultAddress === null ? null : BigInt(facts.crash.faultAddress);
  const mapping = (evidence: Evidence) => {
    const found = evidence.find(MAPPINGS);
    if (!found?.reading || fault === null) return { found, hit: null };
    return { found, hit: mappingAt(found.reading, fault) };
  };
  const truncated: PlannedHypothesis = {
    rule: "truncated-mapping",
    statement: `${where(facts.culprit)} read a file mapping past the end of its file: the file shrank (or was truncated) after it was mapped`,
    plan: [[MAPPINGS, facts.inCulprit(probes.arguments())]],
    judge(evidence) {
      const { found, hit } = mapping(evidence);
      const info = evidence.find(facts.fault.record);
      const c = new Citations();
      if (hit?.objfile) {
        const deleted = /\(deleted\)$/.test(hit.objfile) ? " The file has since been deleted." : "";
        return verdict("confirmed", `${hex(fault ?? 0n)} is inside the mapping of ${hit.objfile} (${hit.start}-${hit.end}, file offset ${hit.offset})${c.cite(found)}, and the signal is ${facts.crash.signalCode}${c.cite(info)}: the page exists in the mapping but not in the file.${deleted}`, found, info);
      }
      if (hit) return verdict("rejected", `${hex(fault ?? 0n)} is in anonymous memory${c.cite(found)}, not a file mapping.`, found);
      return verdict("inconclusive", "The mapping of the fault address is not in the dump.", found);
    },
  };
  const misaligned: PlannedHypothesis = {
    rule: "misaligned-access",
    statement: "an unaligned access on a strict-alignment path raised SIGBUS",
    plan: [[facts.fault.record]],
    judge(evidence) {
      const info = evidence.find(facts.fault.record);
      if (facts.crash.signalCode === "BUS_ADRALN") return verdict("confirmed", `The signal code is BUS_ADRALN${new Citations().cite(info)}.`, info);
      return verdict("rejected", `The signal code is ${facts.crash.signalCode}${new Citations().cite(info)}, a nonexistent physical address, not BUS_ADRALN (misalignment).`, info);
    },
  };
  return {
    hypotheses: [truncated, misaligned],
    investigate: (rule, evidence) => (rule === "truncated-mapping" ? notYetRun(evidence, [facts.culpritListing, ...outerCallers(facts).map(listing), facts.inCaller(probes.locals())]) : []),
    conclude: concludeOn(facts, ["truncated-mapping", "misaligned-access"], "why the access raised SIGBUS", ({ evidence, hit }, c) => {
      const { hit: region, found } = mapping(evidence);
      const args = evidence.find(facts.inCulprit(probes.arguments()));
      const summary = hit.rule === "truncated-mapping"
        ? `${where(facts.culprit)} read ${hex(fault ?? 0n)} in the mapping of ${region?.objfile ?? "a file"}${c.cite(found)}; the file no longer had data there, so the kernel raised SIGBUS${c.cite(evidence.find(facts.fault.record))}.`
        : `${where(facts.culprit)} made an unaligned access${c.cite(evidence.find(facts.fault.record))}.`;
      return {
        summary,
        cause: [hit.finding ?? "", args?.reading?.length ? `Its arguments: ${args.reading.map((v) => `${v.name} = ${v.value}`).join(", ")}${c.cite(args)}.` : ""],
        confidence: 0.8,
        recommendations: [
          "Do not truncate or rotate a file in place while it is mapped; rotate by rename and keep the old file until readers unmap it.",
          `Or read with read()/pread() in \`${facts.fn}\`, or re-check the file size (fstat) before touching mapped pages, and handle SIGBUS where files can shrink underneath.`,
        ],
      };
    }),
    openQuestions: [
      { text: "Who truncated the file is not in this process's dump.", question: "Which process or job truncates or rotates this file (log rotation, cleanup), and does it coordinate with readers?" },
      { text: "The dump cannot show the file's size at crash time.", question: "How large was the file when it was mapped, and how large after the rotation?" },
    ],
  };
}
