import type { ChatModel } from '#core/llm/chat-model.js';

/** A server as the classifier is told about it. */
export interface ClassifiedServer {
  name: string;
  description?: string;
  triggerKeywords?: readonly string[];
}

/** Asks which servers a message needs; resolves to their names (none: []). */
export type IntentClassifier = (message: string, servers: readonly ClassifiedServer[], signal: AbortSignal) => Promise<string[]>;

/**
 * Layer 2, off by default (it costs a model call): asks the model which MCP servers a message that Layer 1
 * left unsure needs. One short, tool-less model call, bounded by `timeoutMs`; any failure or an
 * answer it cannot read counts as "none", so the run goes on without MCP tools.
 */
export function llmIntentClassifier(model: ChatModel, timeoutMs = 5_000): IntentClassifier {
  return async (message, servers, signal) => {
    if (servers.length === 0) return [];
    const catalog = servers.map((s) => `- ${s.name}: ${s.description ?? s.name}${s.triggerKeywords?.length ? ` (${s.triggerKeywords.slice(0, 8).join(', ')})` : ''}`).join('\n');
    const system =
      'You route requests to tool servers. Given the servers below and a user message, answer with a JSON array of the names of the servers ' +
      'the message needs, or [] when it needs none. Answer with the JSON array only.\n\nServers:\n' +
      catalog;
    const controller = new AbortController();
    const stop = () => controller.abort();
    signal.addEventListener('abort', stop, { once: true });
    const timer = setTimeout(stop, timeoutMs);
    let text = '';
    try {
      for await (const chunk of model.stream({ messages: [{ role: 'system', content: system }, { role: 'user', content: message }], tools: [], signal: controller.signal })) {
        if (chunk.type === 'text') text += chunk.text;
        if (text.length > 2_000) break;
      }
    } catch {
      return [];
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', stop);
    }
    const known = new Set(servers.map((s) => s.name));
    const array = text.match(/\[[^\]]*\]/)?.[0];
    try {
      const names = array ? (JSON.parse(array) as unknown[]) : [];
      return [...new Set(names.filter((n): n is string => typeof n === 'string' && known.has(n)))];
    } catch {
      return [];
    }
  };
}
