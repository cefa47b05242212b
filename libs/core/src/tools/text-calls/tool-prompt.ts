import type { ToolSpec } from '../../llm/chat-model.js';
import { formatToolAction } from './tool-action-parser.js';

export const NO_TOOLS_PROMPT =
  'No tools are available in this conversation. Answer directly from what you know and do not try to call a tool.';

interface ParameterInfo {
  name: string;
  type: string;
  required: boolean;
  description: string;
  example: string;
}

/**
 * Describes tools for the system prompt: each tool's name, description and parameters
 * (from its JSON Schema), how to call one with a `<tool_action>` tag, and an example.
 *
 * @returns the prompt section; with no tools, a statement that none are available.
 */
export function generateToolPrompt(tools: ToolSpec[]): string {
  if (tools.length === 0) return NO_TOOLS_PROMPT;
  const sections = tools.map((tool) => describeTool(tool));
  const first = tools[0]!;
  const firstParams = parametersOf(first);
  const shown = firstParams.some((p) => p.required) ? firstParams.filter((p) => p.required) : firstParams.slice(0, 1);
  const exampleArgs = Object.fromEntries(shown.map((p) => [p.name, p.example]));
  return [
    '# Tools',
    '',
    'You can call the tools below. To call one, write a <tool_action> tag in your reply, with one line per argument:',
    '',
    '<tool_action name="TOOL_NAME">',
    '  <ARGUMENT_NAME value="ARGUMENT_VALUE" />',
    '</tool_action>',
    '',
    'Rules:',
    '- Write the tag exactly as shown and close it with </tool_action>; nothing but argument lines goes inside it.',
    '- Every value is written inside double quotes: numbers and booleans as they are (5, true), lists and objects as JSON.',
    '- In values, write & as &amp;, < as &lt;, > as &gt; and " as &quot;.',
    '- A tool runs only once its tag is complete. Its result comes back in the next message: wait for it, never invent it.',
    '',
    'Example:',
    '',
    formatToolAction(first.name, exampleArgs),
    '',
    '## Available tools',
    '',
    sections.join('\n\n'),
  ].join('\n');
}

function describeTool(tool: ToolSpec): string {
  const params = parametersOf(tool);
  const lines = [`### ${tool.name}`, tool.description.trim() || '(no description)', 'Parameters:'];
  if (params.length === 0) lines.push('- none');
  for (const p of params) {
    const detail = p.description ? `: ${p.description}` : '';
    lines.push(`- ${p.name} (${p.type}, ${p.required ? 'required' : 'optional'})${detail}`);
  }
  return lines.join('\n');
}

function parametersOf(tool: ToolSpec): ParameterInfo[] {
  const schema = tool.parameters;
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : []);
  return Object.entries(properties).map(([name, raw]) => {
    const prop = isObject(raw) ? raw : {};
    return { name, type: typeOf(prop), required: required.has(name), description: describeProperty(prop), example: exampleOf(prop) };
  });
}

function typeOf(prop: Record<string, unknown>): string {
  const type = prop.type;
  if (typeof type === 'string') {
    if (type === 'array' && isObject(prop.items) && typeof prop.items.type === 'string') return `array of ${prop.items.type}`;
    return type;
  }
  if (Array.isArray(type)) return type.join(' | ');
  if (Array.isArray(prop.enum)) return 'enum';
  return 'any';
}

function describeProperty(prop: Record<string, unknown>): string {
  const parts: string[] = [];
  if (typeof prop.description === 'string' && prop.description.trim()) parts.push(prop.description.trim());
  if (Array.isArray(prop.enum)) parts.push(`one of ${prop.enum.map((v) => JSON.stringify(v)).join(', ')}`);
  if (prop.default !== undefined) parts.push(`default ${JSON.stringify(prop.default)}`);
  return parts.join('; ');
}

/** A plausible value for the example, written as the model should write it. */
function exampleOf(prop: Record<string, unknown>): string {
  const sample = Array.isArray(prop.examples) && prop.examples.length > 0 ? prop.examples[0]
    : Array.isArray(prop.enum) && prop.enum.length > 0 ? prop.enum[0]
    : prop.default;
  if (sample !== undefined) return typeof sample === 'string' ? sample : JSON.stringify(sample);
  const type = Array.isArray(prop.type) ? prop.type.find((t) => t !== 'null') : prop.type;
  switch (type) {
    case 'integer':
    case 'number':
      return '1';
    case 'boolean':
      return 'true';
    case 'array':
      return '["..."]';
    case 'object':
      return '{}';
    default:
      return '...';
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
