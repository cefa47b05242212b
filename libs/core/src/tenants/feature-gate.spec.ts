import type { AgentMiddleware } from '../engine/agent-middleware.js';
import { SkillCatalog } from '../skills/skill-catalog.js';
import { SkillsMiddleware } from '../skills/skills-middleware.js';
import type { Tool, ToolContext } from '../tools/tool.js';
import { applyFeatures } from './feature-gate.js';
import { FeatureSwitch } from './tenant-directory.js';

function tool(name: string): Tool {
  return { name, description: name, parameters: { type: 'object' }, execute: async () => ({ success: true, output: `${name} ran` }) };
}

const TOOLS = ['write_todos', 'http_request', 'shell', 'remember', 'read_skill', 'run_skill', 'github.create_issue', 'jira.search'].map(tool);
const ctx = { signal: new AbortController().signal } as ToolContext;

/** Runs a call through the gate's middleware to a tool that always succeeds. */
async function call(middleware: AgentMiddleware[], name: string, args: Record<string, unknown> = {}) {
  const gate = middleware.find((m) => m.name === 'feature-gate')!;
  return gate.wrapToolCall!({ id: 'c1', name, arguments: args }, ctx, async () => ({ success: true, output: 'ran' }));
}

describe('applyFeatures', () => {
  it('changes nothing when everything is on', () => {
    const middleware: AgentMiddleware[] = [{ name: 'other' }];
    const out = applyFeatures(TOOLS, middleware, FeatureSwitch.ALL_ON);
    expect(out.tools.map((t) => t.name)).toEqual(TOOLS.map((t) => t.name));
    expect(out.middleware.map((m) => m.name)).toEqual(['other']);
  });

  it('offers only enabled tools and servers, and refuses a call to the others with feature_disabled', async () => {
    const features = new FeatureSwitch({ tools: ['write_todos', 'shell'], shell: false, mcp_servers: ['github'], skills: ['report'] });
    const out = applyFeatures(TOOLS, [{ name: 'other' }], features);
    expect(out.tools.map((t) => t.name)).toEqual(['write_todos', 'read_skill', 'run_skill', 'github.create_issue']);
    expect(out.middleware.map((m) => m.name)).toEqual(['feature-gate', 'other']);

    expect(await call(out.middleware, 'write_todos')).toMatchObject({ success: true });
    expect(await call(out.middleware, 'github__create_issue')).toMatchObject({ success: true });
    expect(await call(out.middleware, 'http_request')).toMatchObject({ success: false, output: { error_code: 'feature_disabled', feature: 'tool', name: 'http_request' } });
    expect(await call(out.middleware, 'shell')).toMatchObject({ success: false, output: { error_code: 'feature_disabled', feature: 'tool', name: 'shell' } });
    const jira = await call(out.middleware, 'jira__search');
    expect(jira).toMatchObject({ success: false, output: { error_code: 'feature_disabled', feature: 'mcp_server', name: 'jira' } });
    expect(jira.error).toContain('switched off for this organisation');
    expect(await call(out.middleware, 'read_skill', { name: 'report' })).toMatchObject({ success: true });
    expect(await call(out.middleware, 'run_skill', { name: 'payroll' })).toMatchObject({ success: false, output: { feature: 'skill', name: 'payroll' } });
  });

  it('drops the skill tools when no skill is enabled', () => {
    const out = applyFeatures(TOOLS, [], new FeatureSwitch({ skills: [] }));
    expect(out.tools.map((t) => t.name)).not.toContain('read_skill');
    expect(out.tools.map((t) => t.name)).not.toContain('run_skill');
  });

  it('tells the model only of enabled skills', () => {
    const catalog = { list: () => [{ name: 'report', description: 'Monthly report' }, { name: 'payroll', description: 'Pays people' }] } as unknown as SkillCatalog;
    const out = applyFeatures(TOOLS, [new SkillsMiddleware(catalog)], new FeatureSwitch({ skills: ['report'] }));
    const skills = out.middleware.find((m): m is SkillsMiddleware => m instanceof SkillsMiddleware)!;
    expect(skills.section()).toContain('- report: Monthly report');
    expect(skills.section()).not.toContain('payroll');
    expect(new SkillsMiddleware(catalog).section()).toContain('payroll');
  });
});
