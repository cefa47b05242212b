import type { ToolSpec } from '../llm/chat-model.js';

/** About 50 characters: a tool's name and the start of its description (Level 1, the line a matched tool gets in the prompt). */
export function levelOneLine(tool: ToolSpec): string {
  return `[tool] ${tool.name}: ${firstSentence(tool.description, 50)}`;
}

/**
 * About 200 characters: name, a short description and the main parameters, for choosing among
 * several tools of one server (Level 2). `city*: string` marks a required parameter.
 */
export function levelTwoLine(tool: ToolSpec): string {
  const properties = (tool.parameters.properties ?? {}) as Record<string, { type?: unknown; description?: unknown }>;
  const required = new Set((tool.parameters.required ?? []) as string[]);
  const params = Object.entries(properties)
    .slice(0, 6)
    .map(([name, p]) => `${name}${required.has(name) ? '*' : ''}: ${typeof p.type === 'string' ? p.type : 'any'}${typeof p.description === 'string' ? ` (${firstSentence(p.description, 30)})` : ''}`);
  return JSON.stringify({ name: tool.name, description: firstSentence(tool.description, 80), params });
}

/** The description's first sentence (or clause), at most `max` characters. */
function firstSentence(text: string, max: number): string {
  const first = text.split(/(?<=[.!?。！？])\s*|\n/)[0]!.trim();
  const cut = first.length > max ? `${first.slice(0, max - 1).trimEnd()}…` : first;
  return cut.replace(/[.。]$/, '');
}
