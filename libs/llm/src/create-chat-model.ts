import type { LlmConfig } from '#core/config/settings.js';
import type { ChatModel } from '#core/llm/chat-model.js';
import { OfflineChatModel, type OfflineChatModelOptions } from './offline-chat-model.js';
import { OpenAIChatModel, safeUrl } from './openai-chat-model.js';

/** Which provider a config selects: `auto` means OpenAI when a key or base URL is set. */
export function resolveProvider(config: LlmConfig): 'openai' | 'offline' {
  if (config.provider !== 'auto') return config.provider;
  return isSet(config.openaiApiKey) || isSet(config.openaiBaseUrl) ? 'openai' : 'offline';
}

/**
 * The chat model a config asks for.
 * @param offline options of the offline model (its chunk delay), when that is the one chosen.
 * @throws Error when the provider is `openai` and neither OPENAI_API_KEY nor OPENAI_BASE_URL is set.
 */
export function createChatModel(config: LlmConfig, offline?: OfflineChatModelOptions): ChatModel {
  if (resolveProvider(config) === 'offline') return new OfflineChatModel(offline);
  if (!isSet(config.openaiApiKey) && !isSet(config.openaiBaseUrl)) {
    throw new Error('DATAAGENT_LLM_PROVIDER=openai needs OPENAI_API_KEY, or OPENAI_BASE_URL for an OpenAI-compatible server.');
  }
  return new OpenAIChatModel({
    model: config.model,
    apiKey: config.openaiApiKey,
    baseUrl: config.openaiBaseUrl,
    timeoutMs: config.timeoutMs,
  });
}

/** One line for startup logs: provider, model, endpoint and whether a key is set (never the key). */
export function describeChatModel(config: LlmConfig): string {
  if (resolveProvider(config) === 'offline') {
    return config.provider === 'offline'
      ? 'offline model (DATAAGENT_LLM_PROVIDER=offline)'
      : 'offline model (set OPENAI_API_KEY or OPENAI_BASE_URL to use a real one)';
  }
  const endpoint = isSet(config.openaiBaseUrl) ? safeUrl(config.openaiBaseUrl!.trim()) : 'https://api.openai.com/v1';
  const key = isSet(config.openaiApiKey) ? 'API key set' : 'no API key';
  return `openai-compatible model ${config.model} at ${endpoint} (${key})`;
}

function isSet(value: string | undefined): boolean {
  return value !== undefined && value.trim() !== '';
}
