import type { AgentBackend } from '../agent/agent-backend.js';
import { SessionUsage } from '../ui/session-usage.js';
import { helpText, runSlashCommand, type CommandContext } from './slash-commands.js';

function context(backend: Partial<AgentBackend>, busy = false) {
  const notices: string[] = [];
  const calls: string[] = [];
  const ctx: CommandContext = {
    backend: backend as AgentBackend,
    mode: 'local',
    busy,
    usage: new SessionUsage(),
    notice: (text) => void notices.push(text),
    cancel: () => (calls.push('cancel'), busy),
    retry: async () => void calls.push('retry'),
    clear: () => void calls.push('clear'),
    quit: () => void calls.push('quit'),
  };
  return { ctx, notices, calls };
}

describe('slash commands', () => {
  it("tells this session's usage, also while an answer runs, and a new session starts it again", async () => {
    const { ctx, notices } = context({ newSession: () => undefined }, false);
    ctx.usage.add({ event_type: 'usage', session_id: 's', run_id: 'r', seq: 1, timestamp: '', model: 'm', call: 1, input_tokens: 10, output_tokens: 2, cached_input_tokens: 0, cost: '0.000100000000', currency: 'USD' });
    await runSlashCommand(ctx, '/usage');
    expect(notices.pop()).toBe('this session: 1 model call, 12 tokens (10 in, 2 out), 0.0001 USD');
    await runSlashCommand({ ...context({}, true).ctx, usage: ctx.usage, notice: (t) => void notices.push(t) }, '/usage');
    expect(notices.pop()).toContain('12 tokens');
    await runSlashCommand({ ...ctx, clear: () => undefined }, '/new');
    await runSlashCommand(ctx, '/usage');
    expect(notices.pop()).toBe('this session: no model calls yet');
  });

  it('lists sessions with the id /resume takes, newest first as the backend gives them', async () => {
    const { ctx, notices } = context({ sessions: async () => [{ id: 'abc', title: 'sales\nby region', updatedAt: new Date('2026-03-04T05:06:07Z') }] });
    await runSlashCommand(ctx, '/sessions');
    expect(notices).toEqual(['sessions (continue one with /resume ID):\n  abc  2026-03-04 05:06  sales by region']);
  });

  it('resumes the named session, and asks for an id without one', async () => {
    const resumed: string[] = [];
    const { ctx, notices } = context({ resume: async (id: string) => void resumed.push(id) });
    await runSlashCommand(ctx, '/resume');
    await runSlashCommand(ctx, '/resume abc');
    expect(resumed).toEqual(['abc']);
    expect(notices[0]).toContain('usage: /resume ID');
  });

  it('shows MCP servers with status, tools and reason; reload needs a backend that can', async () => {
    const { ctx, notices } = context({ mcpServers: async () => [{ name: 'everything', status: 'connected', tools: 13 }, { name: 'broken', status: 'failed', reason: 'spawn x ENOENT' }] });
    await runSlashCommand(ctx, '/mcp list');
    expect(notices[0]).toMatch(/everything\s+connected {2}13 tools/);
    expect(notices[0]).toMatch(/broken\s+failed: spawn x ENOENT/);
    await runSlashCommand(ctx, '/mcp reload');
    expect(notices[1]).toContain('local-mode command');
  });

  it('waits for the answer for commands that change the session; /cancel and /exit run at once', async () => {
    const { ctx, notices, calls } = context({ newSession: () => undefined }, true);
    await runSlashCommand(ctx, '/new');
    await runSlashCommand(ctx, '/cancel');
    await runSlashCommand(ctx, '/exit');
    await runSlashCommand(ctx, '/nope');
    expect(notices[0]).toContain('/new waits until the answer ends');
    expect(calls).toEqual(['cancel', 'quit']);
    expect(notices[1]).toContain('unknown command /nope');
  });

  it('/help names the keys and every command', () => {
    const help = helpText('remote');
    for (const text of ['Ctrl-C', 'Ctrl-D', 'Alt+Enter', '/sessions', '/resume ID', '/mcp list|reload', 'remote mode']) expect(help).toContain(text);
  });
});
