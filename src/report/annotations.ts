/** A crash's annotations (Crashpad's) in one line for a person: the report id, the process's pairs, each module's last words. */
import type { Crash } from "./schema.js";

const MAX_SHOWN = 12;

export function annotationsText(annotations: NonNullable<Crash["annotations"]>): string {
  const pairs = (record: Record<string, string>) => Object.entries(record).map(([key, value]) => `${key} = ${value}`);
  const parts = [
    ...(annotations.reportId ? [`report ${annotations.reportId}`] : []),
    ...pairs(annotations.simple),
    ...annotations.modules.flatMap((module) => {
      const name = module.module?.split(/[\\/]/).at(-1) ?? "a module";
      return [...module.list.map((text) => `${name}: "${text}"`), ...pairs({ ...module.simple, ...module.objects }).map((pair) => `${name}: ${pair}`)];
    }),
  ];
  const shown = parts.slice(0, MAX_SHOWN).join("; ");
  return parts.length > MAX_SHOWN ? `${shown}; and ${parts.length - MAX_SHOWN} more` : shown;
}
