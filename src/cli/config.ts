/**
 * Settings from config files, below flags and environment variables: the project's
 * (`dumpdbg.config.json` or `.dumpdbgrc`, found from the working directory upwards, or a "dumpdbg"
 * key in package.json) over the user's (`$XDG_CONFIG_HOME/dumpdbg/config.json`). JSON only: a
 * config file never runs code. Paths in a file are relative to the file.
 */
import { existsSync, readFileSync } from "node:fs";
import os from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { lilconfigSync } from "lilconfig";
import { ExitCode, ExitError } from "./exit.js";

export const PROVIDERS = ["auto", "offline", "openai", "anthropic", "ollama"] as const;

export interface Settings {
  provider?: (typeof PROVIDERS)[number];
  model?: string;
  localModel?: string;
  gdb?: string;
  lldb?: string;
  cdb?: string;
  dlv?: string;
  sessionsDir?: string;
  reportsDir?: string;
  symbols?: string;
  symbolsCache?: string;
}

type Key = keyof Settings;

/** Each setting: what it is, the option it fills, and the environment variable that wins over files. */
export const SETTINGS: Record<Key, { about: string; option: string; env?: string; path?: boolean; fallback: string }> = {
  provider: { about: "model provider", option: "provider", fallback: "auto (batch and worker: offline)" },
  model: { about: "the model (cloud, or Ollama's with provider ollama)", option: "model", fallback: "the provider's default" },
  localModel: { about: "an Ollama model for light work beside a cloud model", option: "localModel", fallback: "none" },
  gdb: { about: "the gdb binary", option: "gdb", env: "DUMPDBG_GDB", path: true, fallback: "gdb on PATH" },
  lldb: { about: "the lldb binary", option: "lldb", env: "DUMPDBG_LLDB", path: true, fallback: "lldb on PATH" },
  cdb: { about: "the cdb binary", option: "cdb", env: "DUMPDBG_CDB", path: true, fallback: "cdb on PATH" },
  dlv: { about: "Delve, for Go programs' cores", option: "dlv", env: "DUMPDBG_DLV", path: true, fallback: "dlv on PATH" },
  sessionsDir: { about: "where sessions live", option: "sessionsDir", env: "DUMPDBG_SESSIONS_DIR", path: true, fallback: "" },
  reportsDir: { about: "where reports are written", option: "out", path: true, fallback: "reports" },
  symbols: { about: "symbol stores, folders and servers, `;`-separated, searched after --symbols", option: "symbolsConfig", fallback: "none" },
  symbolsCache: { about: "where downloaded symbols are kept", option: "symbolsCache", path: true, fallback: "$XDG_CACHE_HOME/dumpdbg/symbols" },
};

export interface ConfigFile {
  file: string;
  settings: Settings;
}

export interface LoadedConfig {
  project: ConfigFile | null;
  user: ConfigFile | null;
}

const PROJECT_FILES = ["dumpdbg.config.json", ".dumpdbgrc", ".dumpdbgrc.json", "package.json"];
const MAX_CONFIG_BYTES = 256 * 1024;

/** The user's config file: `$XDG_CONFIG_HOME/dumpdbg/config.json`, by default under ~/.config. */
export function userConfigFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CONFIG_HOME || join(os.homedir(), ".config"), "dumpdbg", "config.json");
}

/**
 * dumpdbg's home when no project holds the sessions: `$DUMPDBG_HOME`, else
 * `$XDG_STATE_HOME/dumpdbg` (by default ~/.local/state/dumpdbg).
 */
export function homeDir(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.DUMPDBG_HOME || join(env.XDG_STATE_HOME || join(os.homedir(), ".local", "state"), "dumpdbg"));
}

let cached: { cwd: string; config: LoadedConfig } | null = null;

export function loadConfig(cwd = process.cwd(), env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  if (cached?.cwd === cwd) return cached.config;
  const json = (file: string, content: string): unknown => {
    if (content.length > MAX_CONFIG_BYTES) throw new ExitError(ExitCode.usage, `config file ${file} is larger than ${MAX_CONFIG_BYTES / 1024} KB`);
    if (content.trim() === "") return {};
    try {
      return JSON.parse(content) as unknown;
    } catch (error) {
      throw new ExitError(ExitCode.usage, `config file ${file} is not valid JSON: ${(error as Error).message}`);
    }
  };
  const found = lilconfigSync("dumpdbg", {
    searchPlaces: PROJECT_FILES,
    packageProp: "dumpdbg",
    loaders: { ".json": json, noExt: json },
    stopDir: os.homedir(),
    cache: false,
  }).search(cwd);
  const project = found && !found.isEmpty ? { file: found.filepath, settings: settingsOf(found.config, found.filepath) } : null;
  const userFile = userConfigFile(env);
  let user: ConfigFile | null = null;
  // The user's file is the project's when the search reached it; it is not read twice.
  if (existsSync(userFile) && resolve(userFile) !== project?.file) {
    const text = readFileSync(userFile, "utf8");
    user = { file: userFile, settings: settingsOf(json(userFile, text), userFile) };
  }
  const config = { project, user };
  cached = { cwd, config };
  return config;
}

/** A file's settings, checked: an unknown key or a wrong type is a usage error naming the file. */
export function settingsOf(raw: unknown, file: string): Settings {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) throw new ExitError(ExitCode.usage, `config file ${file} must hold a JSON object`);
  const settings: Settings = {};
  for (const [key, value] of Object.entries(raw)) {
    if (!(key in SETTINGS)) {
      throw new ExitError(ExitCode.usage, `config file ${file}: unknown setting "${key}" (known: ${Object.keys(SETTINGS).join(", ")})`);
    }
    if (typeof value !== "string" || value.trim() === "") throw new ExitError(ExitCode.usage, `config file ${file}: "${key}" must be a non-empty string`);
    if (key === "provider" && !(PROVIDERS as readonly string[]).includes(value)) {
      throw new ExitError(ExitCode.usage, `config file ${file}: "provider" must be one of ${PROVIDERS.join(", ")}, got "${value}"`);
    }
    const meta = SETTINGS[key as Key];
    // A path is relative to the file; a bare program name ("gdb-13") is looked up on PATH.
    const relativePath = meta.path && !isAbsolute(value) && (key.endsWith("Dir") || key.endsWith("Cache") || value.includes("/"));
    (settings as Record<string, string>)[key] = key === "symbols" ? symbolEntries(value, file) : relativePath ? resolve(dirname(file), value) : value;
  }
  return settings;
}

/** A config file's symbol places: its folders relative to the file, its URLs as they are. */
function symbolEntries(value: string, file: string): string {
  return value
    .split(";")
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => (/^https?:\/\//i.test(entry) || isAbsolute(entry) ? entry : resolve(dirname(file), entry)))
    .join(";");
}

/** Where one setting's value comes from, in precedence order below the command line. */
export function effective(key: Key, config: LoadedConfig, env: NodeJS.ProcessEnv = process.env): { value: string; from: string } | null {
  const meta = SETTINGS[key];
  if (meta.env && env[meta.env]) return { value: env[meta.env]!, from: `$${meta.env}` };
  const project = config.project?.settings[key];
  if (project !== undefined) return { value: project, from: config.project!.file };
  const user = config.user?.settings[key];
  if (user !== undefined) return { value: user, from: config.user!.file };
  return null;
}

/** The default sessions folder: the project's `.sessions`, one already here, or dumpdbg's home. */
export function defaultSessionsDir(cwd = process.cwd(), env: NodeJS.ProcessEnv = process.env): { dir: string; why: string } {
  const config = loadConfig(cwd, env);
  if (config.project) return { dir: join(dirname(config.project.file), ".sessions"), why: `the project of ${config.project.file}` };
  const here = join(cwd, ".sessions");
  if (existsSync(here)) return { dir: here, why: "a .sessions folder here" };
  return { dir: join(homeDir(env), "sessions"), why: env.DUMPDBG_HOME ? "$DUMPDBG_HOME" : "no project here: dumpdbg's home" };
}
