/** Fills a command's options from the config files where the command line left them at their defaults. */
import type { Command } from "commander";
import { effective, loadConfig, SETTINGS } from "./config.js";

export function applyConfig(command: Command): void {
  const config = loadConfig();
  if (!config.project && !config.user) return;
  for (const key of Object.keys(SETTINGS) as (keyof typeof SETTINGS)[]) {
    const option = SETTINGS[key].option;
    if (!command.options.some((o) => o.attributeName() === option)) continue;
    const source = command.getOptionValueSource(option);
    if (source === "cli" || source === "env") continue;
    const found = effective(key, config);
    // An environment variable is read where the setting is used, and wins there.
    if (!found || found.from.startsWith("$")) continue;
    command.setOptionValueWithSource(option, found.value, "config");
  }
}
