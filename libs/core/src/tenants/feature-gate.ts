import type { AgentMiddleware } from '../engine/agent-middleware.js';
import { SkillsMiddleware } from '../skills/skills-middleware.js';
import { READ_SKILL_TOOL, RUN_SKILL_TOOL } from '../skills/skill-tools.js';
import type { Tool, ToolResult } from '../tools/tool.js';
import type { FeatureSwitch } from './tenant-directory.js';

/** What a call names: an MCP server's tool (`server.tool`, wire `server__tool`), a skill, or a tool. */
type Feature = { kind: 'mcp_server' | 'skill' | 'tool'; name: string };

function featureOf(toolName: string, args: Record<string, unknown>): Feature {
  const dot = toolName.indexOf('.');
  if (dot > 0) return { kind: 'mcp_server', name: toolName.slice(0, dot) };
  const wire = toolName.indexOf('__');
  if (wire > 0) return { kind: 'mcp_server', name: toolName.slice(0, wire) };
  if ((toolName === READ_SKILL_TOOL || toolName === RUN_SKILL_TOOL) && typeof args.name === 'string') return { kind: 'skill', name: args.name };
  return { kind: 'tool', name: toolName };
}

function enabled(features: FeatureSwitch, feature: Feature): boolean {
  if (feature.kind === 'mcp_server') return features.mcpServer(feature.name);
  if (feature.kind === 'skill') return features.skill(feature.name);
  return features.tool(feature.name);
}

const KIND_WORDS: Record<Feature['kind'], string> = { mcp_server: 'MCP server', skill: 'skill', tool: 'tool' };

/**
 * A tenant's feature switches applied to one run: switched-off tools, skills and MCP
 * servers are not offered, the skills the model is told of are only the enabled ones, and a
 * call to something switched off anyway (a model that guesses a name) is refused with
 * `feature_disabled`, outermost, before approval or any other layer sees it.
 */
export function applyFeatures(tools: readonly Tool[], middleware: readonly AgentMiddleware[], features: FeatureSwitch): { tools: Tool[]; middleware: AgentMiddleware[] } {
  if (features.allOn) return { tools: [...tools], middleware: [...middleware] };
  const skillsOff = features.features.skills?.length === 0;
  const offered = tools.filter((tool) => {
    if (tool.name === READ_SKILL_TOOL || tool.name === RUN_SKILL_TOOL) return !skillsOff;
    return enabled(features, featureOf(tool.name, {}));
  });
  const gate: AgentMiddleware = {
    name: 'feature-gate',
    async wrapToolCall(call, ctx, next): Promise<ToolResult> {
      const feature = featureOf(call.name, call.arguments);
      if (enabled(features, feature)) return next(call, ctx);
      return {
        success: false,
        output: { error_code: 'feature_disabled', feature: feature.kind, name: feature.name },
        error: `The ${KIND_WORDS[feature.kind]} "${feature.name}" is switched off for this organisation (feature_disabled), so ${call.name} did not run. Do without it, or tell the person it is not available.`,
        status: 'error',
      };
    },
  };
  const gated = middleware.map((m) => (m instanceof SkillsMiddleware ? m.only((name) => features.skill(name)) : m));
  return { tools: offered, middleware: [gate, ...gated] };
}
