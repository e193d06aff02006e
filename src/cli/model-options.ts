/** The model flags of every command that may call a model, and the model configuration they make. */
import { Option, type Command } from "commander";
import type { ModelConfig } from "../llm/index.js";
import { PROVIDERS } from "./config.js";

export interface ModelFlags {
  provider: ModelConfig["provider"];
  model?: string;
  localModel?: string;
  /** `--no-redact` sets it false. */
  redact: boolean;
}

export interface ModelOptionsUse {
  /** `auto` where a person waits for the answer; `offline` for batch work, which must not spend by surprise. */
  provider: "auto" | "offline";
  /** What the models are for, when it is not the command's own work: "for --analyze". */
  purpose?: string;
  /** `--local-model` too: a second, local tier beside a cloud model. */
  localModel: boolean;
}

export function modelOptions(command: Command, use: ModelOptionsUse): Command {
  command
    .addOption(new Option("--provider <name>", use.purpose ? `model provider ${use.purpose}` : "model provider").choices(PROVIDERS).default(use.provider))
    .option("--model <name>", use.purpose ? `the model ${use.purpose}` : "the model (the cloud model, or Ollama's with --provider ollama)");
  if (use.localModel) command.option("--local-model <name>", "an Ollama model for light work beside a cloud model");
  return command.option("--no-redact", "send evidence to a cloud model without masking secrets");
}

export function modelConfig(flags: ModelFlags): ModelConfig {
  return {
    provider: flags.provider,
    redact: flags.redact,
    ...(flags.model !== undefined ? { model: flags.model } : {}),
    ...(flags.localModel !== undefined ? { localModel: flags.localModel } : {}),
  };
}
