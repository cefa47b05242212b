import { parseModelName, parseAssistantModels, type ModelProvider } from '#core/config/model-names.js';
import type { LlmConfig } from '#core/config/settings.js';
import { BUILTIN_ASSISTANTS, type AssistantInfo } from '#core/config/assistant-catalog.js';
import type { ChatModel } from '#core/llm/chat-model.js';
import { ANTHROPIC_API_URL, AnthropicChatModel } from './anthropic-chat-model.js';
import { OfflineChatModel, type OfflineChatModelOptions } from './offline-chat-model.js';
import { OpenAIChatModel, safeUrl } from './openai-chat-model.js';

/** The provider and model a name selects under a config. */
export interface ModelChoice {
  provider: ModelProvider;
  model: string;
}

/**
 * Which provider and model a name selects: its `provider:` prefix, else DATAAGENT_LLM_PROVIDER,
 * else (auto) `claude-*` is Anthropic's, and any other name OpenAI-compatible when OpenAI is
 * configured and the offline model when it is not, so `npm start` works without any key.
 */
export function resolveModel(name: string, config: LlmConfig): ModelChoice {
  const { provider, model } = parseModelName(name);
  const chosen = provider ?? (config.provider !== 'auto' ? config.provider : /^claude-/i.test(model) ? 'anthropic' : openaiConfigured(config) ? 'openai' : 'offline');
  return chosen === 'offline' ? { provider: 'offline', model: 'offline' } : { provider: chosen, model };
}

/**
 * The chat model a name selects (see {@link resolveModel}).
 * @param offline options of the offline model (its chunk delay), when that is the one chosen.
 * @throws Error naming the missing variable when the provider has no key configured.
 */
export function createModel(name: string, config: LlmConfig, offline?: OfflineChatModelOptions): ChatModel {
  const { provider, model } = resolveModel(name, config);
  const missing = missingSetting(provider, config);
  if (missing) throw new Error(`The model ${name} needs ${missing}.`);
  if (provider === 'offline') return new OfflineChatModel(offline);
  if (provider === 'anthropic') {
    return new AnthropicChatModel({ model, apiKey: config.anthropicApiKey!, baseUrl: config.anthropicBaseUrl, maxTokens: config.maxTokens, timeoutMs: config.timeoutMs });
  }
  return new OpenAIChatModel({ model, apiKey: config.openaiApiKey, baseUrl: config.openaiBaseUrl, timeoutMs: config.timeoutMs, streamUsage: config.streamUsage });
}

/** The default model (DATAAGENT_MODEL). @throws Error as {@link createModel} does. */
export function createChatModel(config: LlmConfig, offline?: OfflineChatModelOptions): ChatModel {
  return createModel(config.model, config, offline);
}

/** The model name an assistant uses: its DATAAGENT_ASSISTANT_MODELS entry, else its own in the catalog, else DATAAGENT_MODEL. */
export function assistantModelName(assistant: AssistantInfo, config: LlmConfig): string {
  return parseAssistantModels(config.assistantModels).models.get(assistant.id) ?? assistant.model ?? config.model;
}

/**
 * What a worker refuses to start with: each model in use (the default, and each assistant's)
 * whose provider lacks its key, naming the variable to set.
 */
export function missingModelSettings(config: LlmConfig, assistants: readonly AssistantInfo[] = BUILTIN_ASSISTANTS): string[] {
  const problems: string[] = [];
  const missing = missingSetting(resolveModel(config.model, config).provider, config);
  if (missing) problems.push(`DATAAGENT_MODEL ${config.model} needs ${missing}`);
  const listed = parseAssistantModels(config.assistantModels).models;
  for (const assistant of assistants) {
    const name = assistantModelName(assistant, config);
    const needs = missingSetting(resolveModel(name, config).provider, config);
    if (!needs || name === config.model) continue;
    const where = listed.has(assistant.id) ? 'DATAAGENT_ASSISTANT_MODELS' : 'the assistant catalog';
    problems.push(`${where}: the assistant "${assistant.id}" uses ${name}, which needs ${needs}`);
  }
  return problems;
}

/** One line for startup logs: provider, model, endpoint and whether a key is set (never the key). */
export function describeChatModel(config: LlmConfig): string {
  const { provider, model } = resolveModel(config.model, config);
  if (provider === 'offline') {
    if (parseModelName(config.model).provider === 'offline') return 'offline model (DATAAGENT_MODEL=offline)';
    return config.provider === 'offline'
      ? 'offline model (DATAAGENT_LLM_PROVIDER=offline)'
      : 'offline model (set OPENAI_API_KEY or OPENAI_BASE_URL, or ANTHROPIC_API_KEY with a claude-* model, to use a real one)';
  }
  if (provider === 'anthropic') {
    const endpoint = safeUrl(isSet(config.anthropicBaseUrl) ? config.anthropicBaseUrl!.trim() : ANTHROPIC_API_URL);
    return `anthropic model ${model} at ${endpoint} (${isSet(config.anthropicApiKey) ? 'API key set' : 'no API key'})`;
  }
  const endpoint = isSet(config.openaiBaseUrl) ? safeUrl(config.openaiBaseUrl!.trim()) : 'https://api.openai.com/v1';
  return `openai-compatible model ${model} at ${endpoint} (${isSet(config.openaiApiKey) ? 'API key set' : 'no API key'})`;
}

/** The setting a provider cannot work without, when it is missing. */
function missingSetting(provider: ModelProvider, config: LlmConfig): string | undefined {
  if (provider === 'anthropic' && !isSet(config.anthropicApiKey)) return 'ANTHROPIC_API_KEY';
  if (provider === 'openai' && !openaiConfigured(config)) return 'OPENAI_API_KEY (or OPENAI_BASE_URL for an OpenAI-compatible server)';
  return undefined;
}

function openaiConfigured(config: LlmConfig): boolean {
  return isSet(config.openaiApiKey) || isSet(config.openaiBaseUrl);
}

function isSet(value: string | undefined): boolean {
  return value !== undefined && value.trim() !== '';
}
