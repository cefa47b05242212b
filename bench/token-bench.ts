/**
 * Prompt tokens per turn for MCP tools: intent-based layered injection (the worker's
 * mcpInjection middleware, as it runs) against every tool's full schema every turn, over a
 * question set of Chinese and English messages with and without tool intent and 20 servers of 10
 * tools (bench/data). Tokens are counted with o200k_base (js-tiktoken). Also: how many
 * tool-intent messages were offered the tool they need, and how many others were offered any.
 */
import { readFileSync } from 'node:fs';
import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';
import type { ModelCallState } from '#core/engine/agent-middleware.js';
import { findAssistant } from '#core/config/assistant-catalog.js';
import type { ToolSpec } from '#core/llm/chat-model.js';
import { wireToolName } from '#core/tools/tool-names.js';
import { mcpInjection } from '#mcp/mcp-injection.js';
import { summarize, type LatencySummary } from './percentiles.js';
import { repoRoot } from './repo-paths.js';

interface ServerData {
  name: string;
  description: string;
  trigger_keywords: string[];
  tools: Array<[string, string, Array<[string, string, string, boolean]>]>;
}

export interface TokenFigures {
  messages: number;
  intentMessages: number;
  servers: number;
  tools: number;
  tokenizer: string;
  /** Prompt tokens per turn (system prompt, the message, tool definitions and tool text). */
  allSchemas: LatencySummary;
  layeredNative: LatencySummary;
  layeredText: LatencySummary;
  /** Share of tool-intent messages offered every tool they need. */
  rightToolOffered: number;
  /** Share of messages without tool intent offered any MCP tool. */
  noIntentOffered: number;
  /** The messages that missed, for a look. */
  misses: string[];
  falseOffers: string[];
}

function loadJson<T>(name: string): T {
  return JSON.parse(readFileSync(`${repoRoot}bench/data/${name}`, 'utf8')) as T;
}

/** The server's tools as the worker's MCP adapter describes them to the model. */
function toolSpecs(server: ServerData): ToolSpec[] {
  return server.tools.map(([name, description, params]) => ({
    name: `${server.name}.${name}`,
    description: `${description} (from ${server.name}: ${server.description})`,
    parameters: {
      type: 'object',
      properties: Object.fromEntries(params.map(([p, type, about]) => [p, { type, description: about }])),
      required: params.filter(([, , , required]) => required).map(([p]) => p),
    },
  }));
}

/** Tool definitions as an OpenAI-compatible request carries them. */
function wireTools(specs: readonly ToolSpec[]): string {
  return JSON.stringify(specs.map((s) => ({ type: 'function', function: { name: wireToolName(s.name), description: s.description, parameters: s.parameters } })));
}

export async function measureTokens(): Promise<TokenFigures> {
  const servers = loadJson<{ servers: ServerData[] }>('mcp-token-servers.json').servers;
  const messages = loadJson<{ messages: Array<{ text: string; expect: string[] }> }>('mcp-token-questions.json').messages;
  const encoder = new Tiktoken(o200k);
  const count = (text: string) => encoder.encode(text).length;
  const specs = servers.flatMap(toolSpecs);
  const byName = new Map(specs.map((s) => [s.name, s]));
  const intentServers = servers.map((s) => ({ name: s.name, triggerKeywords: s.trigger_keywords, tools: s.tools.map(([name]) => name) }));
  const system = findAssistant('default')!.systemPrompt;

  const all: number[] = [];
  const native: number[] = [];
  const text: number[] = [];
  const misses: string[] = [];
  const falseOffers: string[] = [];
  let right = 0;
  let offeredWithoutIntent = 0;
  for (const { text: message, expect } of messages) {
    all.push(count(system) + count(message) + count(wireTools(specs)));
    for (const textTools of [false, true]) {
      const state: ModelCallState = { sessionId: 's', runId: 'r', iteration: 0, messages: [{ role: 'system', content: system }, { role: 'user', content: message }], tools: [...specs] };
      await mcpInjection({ servers: intentServers, specs: byName, textTools }).beforeModel!(state);
      const tokens = count(state.messages[0]!.content) + count(message) + (state.tools.length > 0 ? count(wireTools(state.tools)) : 0);
      (textTools ? text : native).push(tokens);
      if (textTools) continue;
      const offered = new Set(state.tools.map((t) => t.name));
      if (expect.length > 0) {
        if (expect.every((t) => offered.has(t))) right++;
        else misses.push(message);
      } else if (offered.size > 0) {
        offeredWithoutIntent++;
        falseOffers.push(message);
      }
    }
  }
  const intentMessages = messages.filter((m) => m.expect.length > 0).length;
  return {
    messages: messages.length,
    intentMessages,
    servers: servers.length,
    tools: specs.length,
    tokenizer: 'o200k_base (js-tiktoken)',
    allSchemas: summarize(all),
    layeredNative: summarize(native),
    layeredText: summarize(text),
    rightToolOffered: right / intentMessages,
    noIntentOffered: offeredWithoutIntent / (messages.length - intentMessages),
    misses,
    falseOffers,
  };
}

/** The token figures as the lines the bench prints. */
export function formatTokens(t: TokenFigures): string {
  const row = (label: string, s: LatencySummary) =>
    `  ${label.padEnd(44)} ${s.mean.toFixed(0).padStart(7)} ${s.p50.toFixed(0).padStart(7)} ${s.p99.toFixed(0).padStart(7)} ${`${((1 - s.mean / t.allSchemas.mean) * 100).toFixed(1)} %`.padStart(10)}`;
  const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
  return [
    `MCP prompt tokens per turn: ${t.messages} messages (${t.intentMessages} with tool intent, Chinese and English), ${t.servers} servers × ${t.tools / t.servers} tools, ${t.tokenizer}:`,
    `  ${''.padEnd(44)} ${'mean'.padStart(7)} ${'p50'.padStart(7)} ${'p99'.padStart(7)} ${'saved'.padStart(10)}`,
    row('every tool, full schema, every turn', t.allSchemas),
    row('layered, native function calling', t.layeredNative),
    row('layered, text-format model (<tool_action>)', t.layeredText),
    `  tool-intent messages offered the right tool: ${pct(t.rightToolOffered)} (target ≥ 95 %); messages without tool intent offered any tool: ${pct(t.noIntentOffered)} (target ≤ 5 %); saved with native calls: ${
      (1 - t.layeredNative.mean / t.allSchemas.mean) * 100 >= 80 ? 'met' : 'NOT MET'
    } (target ≥ 80 %)`,
    ...(t.misses.length > 0 ? [`  missed: ${t.misses.map((m) => JSON.stringify(m)).join(', ')}`] : []),
    ...(t.falseOffers.length > 0 ? [`  offered without intent: ${t.falseOffers.map((m) => JSON.stringify(m)).join(', ')}`] : []),
  ].join('\n');
}
