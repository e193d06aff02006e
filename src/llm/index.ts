/**
 * The model layer: providers and tiers, one typed call per agent step, token accounting, context
 * budgets, prompt files and redaction. Nothing here imports a provider package until a model is
 * used; see providers.ts.
 */
export { callStructured, callText, CONTEXT_BUDGET, modelsDown, type CallOptions, type CallResult, type ModelDown, type PromptSpec } from "./call.js";
export { budget } from "./budget.js";
export { ProviderError } from "./errors.js";
export { leavesMachine, resolveModels, type ModelConfig, type ModelProfile, type Models, type Provider, type Tier, type TierModel } from "./models.js";
export { fillPrompt } from "./prompts.js";
export { Redactor, type RedactionStats } from "./redact.js";
export { Usage, type TokenCount, type UsageReport } from "./usage.js";
