/** `dumpdbg config`: the effective settings and where each came from. */
import { defaultSessionsDir, effective, loadConfig, SETTINGS, userConfigFile } from "./config.js";

export function showConfig(flags: { json?: boolean }): void {
  const config = loadConfig();
  const rows = (Object.keys(SETTINGS) as (keyof typeof SETTINGS)[]).map((key) => {
    const found = effective(key, config);
    if (found) return { setting: key, value: found.value, from: found.from };
    if (key === "sessionsDir") {
      const fallback = defaultSessionsDir();
      return { setting: key, value: fallback.dir, from: `default (${fallback.why})` };
    }
    return { setting: key, value: SETTINGS[key].fallback, from: "default" };
  });
  const files = { project: config.project?.file ?? null, user: config.user?.file ?? null, userLooked: userConfigFile() };
  if (flags.json) {
    process.stdout.write(`${JSON.stringify({ settings: rows, files }, null, 2)}\n`);
    return;
  }
  const width = (pick: (row: (typeof rows)[number]) => string, title: string) => Math.max(title.length, ...rows.map((row) => pick(row).length));
  const w1 = width((row) => row.setting, "SETTING");
  const w2 = width((row) => row.value, "VALUE");
  const lines = [`${"SETTING".padEnd(w1)}  ${"VALUE".padEnd(w2)}  FROM`, ...rows.map((row) => `${row.setting.padEnd(w1)}  ${row.value.padEnd(w2)}  ${row.from}`)];
  lines.push("", `project config: ${files.project ?? "none (dumpdbg.config.json or .dumpdbgrc, searched from here upwards)"}`, `user config:    ${files.user ?? `none (${files.userLooked})`}`);
  lines.push("Flags win over environment variables, which win over the project's file, then the user's.");
  process.stdout.write(`${lines.join("\n")}\n`);
}
