/**
 * The crash's stripped modules that are here in the build that ran: their packages are named, so the
 * user knows whose debug symbols give names, lines and variables.
 */
import type { Inspector } from "../../debuggers/inspector.js";
import type { PlacedFrame } from "../culprit.js";
import type { TriageOptions } from "./options.js";
import type { TriageResult } from "./result.js";

export async function debugPackages(q: Inspector, culprit: PlacedFrame | null, frames: PlacedFrame[], executable: string | null, options: TriageOptions): Promise<NonNullable<TriageResult["packages"]>> {
  const stripped = [
    ...(culprit && culprit.file === null && culprit.module ? [culprit.module] : []),
    ...(executable && !frames.some((frame) => frame.file !== null && frame.module === executable) ? [executable] : []),
  ].filter((module, index, all) => all.indexOf(module) === index && sameBuildAsDumped(module, options));
  const { packageOf } = options;
  const owners = packageOf ? await Promise.all(stripped.map(async (path) => ({ path, owner: await packageOf(path) }))) : [];
  const packages = owners.flatMap(({ path, owner }) => (owner ? [{ path, ...owner }] : []));
  if (packages.length > 0) {
    const said = packages.map((p) => `${p.path.split("/").at(-1)} is from ${p.name} ${p.version}`).join(", ");
    q.problems.push(`no debug information here for the code that crashed: ${said}, the builds that ran (the files here have the dump's build ids); install those versions' debug symbols (from Debian's debug archive, or through debuginfod) and analyse again for function names, lines and variables`);
  }
  return packages;
}

/** Whether the file here is the build the dump's process ran: the same build id as the dump's copy of its first page. */
function sameBuildAsDumped(path: string, options: TriageOptions): boolean {
  const dumped = options.modules?.find((module) => module.path === path)?.buildId ?? null;
  return dumped !== null && options.buildIdOf !== undefined && options.buildIdOf(path) === dumped;
}
