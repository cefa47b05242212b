import type { AgentMiddleware, ModelCallState } from '#core/engine/agent-middleware.js';
import { McpIntentRecognizer, type IntentServer, type McpIntent } from '#core/intent/mcp-intent.js';
import { levelOneLine, levelTwoLine } from '#core/intent/tool-descriptions.js';
import type { ToolSpec } from '#core/llm/chat-model.js';
import type { ClassifiedServer, IntentClassifier } from './intent-classifier.js';

export interface InjectionOptions {
  /** The run's MCP servers with their tools (as offered after bindings). */
  servers: readonly IntentServer[];
  /** The run's MCP tool specs, by `server.tool`. */
  specs: ReadonlyMap<string, ToolSpec>;
  /** The model reads tools from the prompt (`<tool_action>`), not from native function definitions. */
  textTools: boolean;
  /** Told each run's recognized intent, for logs and benchmarks. */
  onIntent?: (intent: McpIntent) => void;
  /** Layer 2: asked about messages Layer 1 left unsure (DATAAGENT_MCP_INTENT_CLASSIFIER). */
  classifier?: IntentClassifier;
  /** The servers' descriptions and keywords, for the classifier. */
  describeServers?: readonly ClassifiedServer[];
}

/**
 * Puts into each model call only the MCP tools the person's message points at (in
 * layered descriptions, to keep the prompt small): no MCP intent, no MCP tool text at all; a match, the matched tools'
 * Level 1 lines in the system prompt, and Level 2 lines where several tools of one server must
 * be told apart. A native function-calling model gets the matched tools' full schemas (Level 3);
 * a text-format model gets them only when it calls a tool with wrong arguments. Tools the model
 * has called in this run stay offered. Every MCP tool of the run remains callable by name.
 */
export function mcpInjection(options: InjectionOptions): AgentMiddleware {
  const recognizer = recognizerFor(options.servers);
  let intent: McpIntent | undefined;
  return {
    name: 'mcp-injection',
    async beforeModel(state: ModelCallState) {
      if (!intent) {
        const asked = [...state.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
        intent = recognizer.recognize(asked);
        if (intent.unsure && options.classifier) {
          const servers = await options.classifier(asked, options.describeServers ?? options.servers, state.signal ?? AbortSignal.timeout(10_000));
          const tools = options.servers.filter((s) => servers.includes(s.name)).flatMap((s) => s.tools.map((t) => `${s.name}.${t}`));
          if (tools.length > 0) intent = { tools, rule: 'classifier' };
        }
        options.onIntent?.(intent);
      }
      const called = state.messages.flatMap((m) => m.toolCalls ?? []).map((c) => canonical(c.name, options.specs));
      const offered = new Set([...intent.tools, ...called].filter((name) => options.specs.has(name)));
      const isMcp = (name: string) => options.specs.has(name);
      state.tools = state.tools
        .filter((spec) => !isMcp(spec.name) || offered.has(spec.name))
        // A text-format model learns a tool's full schema when its arguments are wrong.
        .map((spec) => (options.textTools && isMcp(spec.name) ? { ...spec, parameters: { type: 'object' } } : spec));
      if (offered.size === 0) return;
      const system = state.messages[0];
      if (system?.role !== 'system') return;
      state.messages[0] = { ...system, content: `${system.content}\n\n${describeOffered([...offered], options.specs)}` };
    },
  };
}

/** Recognizers by their servers' names, keywords and tools: rules are compiled once per configuration, not per run. */
const recognizers = new Map<string, McpIntentRecognizer>();

function recognizerFor(servers: readonly IntentServer[]): McpIntentRecognizer {
  const key = JSON.stringify(servers.map((s) => [s.name, s.triggerKeywords ?? [], s.tools]));
  let recognizer = recognizers.get(key);
  if (!recognizer) {
    recognizer = new McpIntentRecognizer(servers);
    recognizers.set(key, recognizer);
    if (recognizers.size > 1_000) recognizers.delete(recognizers.keys().next().value!);
  }
  return recognizer;
}

/** Level 1 lines for the offered tools; Level 2 for servers of which several are offered. */
function describeOffered(offered: string[], specs: ReadonlyMap<string, ToolSpec>): string {
  const perServer = new Map<string, number>();
  for (const name of offered) perServer.set(serverOf(name), (perServer.get(serverOf(name)) ?? 0) + 1);
  const lines = offered.map((name) => {
    const spec = specs.get(name)!;
    return perServer.get(serverOf(name))! > 1 ? levelTwoLine(spec) : levelOneLine(spec);
  });
  return ['MCP tools for this request:', ...lines].join('\n');
}

function serverOf(name: string): string {
  return name.slice(0, name.indexOf('.'));
}

/** `server__tool` → `server.tool` when that is a tool of the run. */
function canonical(name: string, specs: ReadonlyMap<string, ToolSpec>): string {
  if (specs.has(name)) return name;
  const wire = name.indexOf('__');
  const dotted = wire > 0 ? `${name.slice(0, wire)}.${name.slice(wire + 2)}` : name;
  return specs.has(dotted) ? dotted : name;
}
