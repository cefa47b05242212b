import type { AgentBackend } from '../agent/agent-backend.js';
import type { SessionUsage } from '../ui/session-usage.js';

/** What the commands act on: the interactive session, seen from here. */
export interface CommandContext {
  readonly backend: AgentBackend;
  readonly mode: 'local' | 'remote';
  readonly busy: boolean;
  /** What this session's model calls used, from their usage events. */
  readonly usage: SessionUsage;
  notice(text: string, tone?: 'info' | 'warn'): void;
  cancel(): boolean;
  retry(): Promise<void>;
  clear(): void;
  quit(): void;
}

interface SlashCommand {
  usage: string;
  help: string;
  /** Runs while an answer is running, too. */
  anytime?: boolean;
  run(ctx: CommandContext, args: string[]): Promise<void> | void;
}

const COMMANDS: Record<string, SlashCommand> = {
  help: { usage: '/help', help: 'this list', anytime: true, run: (ctx) => ctx.notice(helpText(ctx.mode)) },
  new: {
    usage: '/new',
    help: 'start a new session (clears the screen)',
    run: (ctx) => {
      ctx.backend.newSession();
      ctx.usage.reset();
      ctx.clear();
      ctx.notice('new session: the next question starts it');
    },
  },
  sessions: {
    usage: '/sessions',
    help: 'list earlier sessions, newest first',
    run: async (ctx) => {
      const sessions = await ctx.backend.sessions();
      if (sessions.length === 0) return ctx.notice('no sessions yet');
      const lines = sessions.slice(0, 20).map((s) => `  ${s.id}  ${formatDate(s.updatedAt)}  ${oneLine(s.title) || '(untitled)'}`);
      ctx.notice(`sessions (continue one with /resume ID):\n${lines.join('\n')}`);
    },
  },
  resume: {
    usage: '/resume ID',
    help: 'continue an earlier session',
    run: async (ctx, [id]) => {
      if (!id) return ctx.notice('usage: /resume ID (see /sessions)', 'warn');
      await ctx.backend.resume(id);
      ctx.notice(`resumed session ${id}: the next question continues it`);
    },
  },
  usage: { usage: '/usage', help: "what this session's model calls used: tokens, and cost where the model has a price", anytime: true, run: (ctx) => ctx.notice(ctx.usage.describe()) },
  retry: { usage: '/retry', help: 'send the last question again (after an error)', run: (ctx) => ctx.retry() },
  cancel: {
    usage: '/cancel',
    help: 'cancel the running answer (also Ctrl-C)',
    anytime: true,
    run: (ctx) => {
      if (!ctx.cancel()) ctx.notice('nothing is running');
    },
  },
  clear: { usage: '/clear', help: 'clear the screen (the session goes on)', anytime: true, run: (ctx) => ctx.clear() },
  exit: { usage: '/exit', help: 'leave (also Ctrl-D on an empty line)', anytime: true, run: (ctx) => ctx.quit() },
  mcp: {
    usage: '/mcp list|reload|sign-in NAME',
    help: 'MCP servers and their status; reload re-reads mcp.json and connects what is new; sign-in NAME signs in to an OAuth server through the browser (local mode)',
    run: async (ctx, [sub, name]) => {
      if (sub === 'list' || sub === undefined) return ctx.notice(await mcpList(ctx));
      if (sub === 'sign-in') {
        if (!name) return ctx.notice('usage: /mcp sign-in NAME', 'warn');
        if (!ctx.backend.signInMcp) return ctx.notice("/mcp sign-in is a local-mode command: sign in to a gateway's servers from its web UI (the MCP tab)", 'warn');
        const state = await ctx.backend.signInMcp(name, (line) => ctx.notice(line));
        return ctx.notice(state.status === 'connected' ? `Signed in to ${name}: ${state.tools ?? 0} tools` : `Signed in to ${name}, but it is not connected: ${state.reason ?? 'unknown'}`, state.status === 'connected' ? 'info' : 'warn');
      }
      if (sub !== 'reload') return ctx.notice('usage: /mcp list | /mcp reload | /mcp sign-in NAME', 'warn');
      if (!ctx.backend.reloadMcp) return ctx.notice("/mcp reload is a local-mode command: a gateway's servers are managed on the gateway (/mcp list shows them)", 'warn');
      const { added, removed, failed } = await ctx.backend.reloadMcp();
      const parts = [added.length ? `connected ${added.join(', ')}` : '', removed.length ? `removed ${removed.join(', ')}` : '', failed.length ? `failed ${failed.join(', ')}` : ''].filter(Boolean);
      ctx.notice(`MCP config reloaded: ${parts.join('; ') || 'nothing changed'}\n${await mcpList(ctx)}`);
    },
  },
};

/**
 * Runs a `/command` line in the interactive UI.
 * @throws the command's own errors (an unknown session, a gateway that refuses), for the caller to show.
 */
export async function runSlashCommand(ctx: CommandContext, line: string): Promise<void> {
  const [name = '', ...args] = line.slice(1).trim().split(/\s+/);
  const command = COMMANDS[name.toLowerCase()];
  if (!command) return ctx.notice(`unknown command /${name}: /help lists them`, 'warn');
  if (ctx.busy && !command.anytime) return ctx.notice(`/${name} waits until the answer ends (or Ctrl-C cancels it)`, 'warn');
  await command.run(ctx, args);
}

/** The keys and commands, for /help and the README. */
export function helpText(mode: 'local' | 'remote'): string {
  const commands = Object.values(COMMANDS).map((c) => `  ${c.usage.padEnd(18)}${c.help}`);
  return [
    `DataAgent (${mode} mode)`,
    'keys:',
    '  Enter             send',
    '  \\ then Enter      new line (also Alt+Enter or Ctrl+J)',
    '  Up / Down         earlier questions',
    '  Ctrl-C            cancel the running answer; twice, or on an idle prompt twice, exit',
    '  Ctrl-D            exit (on an empty line)',
    '  approvals         Up/Down (or Left/Right) choose approve, reject or approve all; Enter confirms',
    'commands:',
    ...commands,
    mode === 'remote' ? "  (remote mode: /mcp list shows the gateway's servers for this key; /mcp reload is local only)" : '',
  ]
    .filter(Boolean)
    .join('\n');
}

async function mcpList(ctx: CommandContext): Promise<string> {
  const servers = await ctx.backend.mcpServers();
  if (servers.length === 0) return ctx.mode === 'local' ? 'no MCP servers (see --mcp-config, or ~/.deepagents/<assistant>/mcp.json)' : 'no MCP servers on the gateway for this key';
  const lines = servers.map((s) => {
    const tools = s.tools === undefined || s.tools === null ? '' : `  ${s.tools} tools`;
    const reason = s.reason ? `: ${oneLine(s.reason)}` : '';
    return `  ${s.name.padEnd(16)} ${s.status}${tools}${reason}`;
  });
  return `MCP servers:\n${lines.join('\n')}`;
}

function formatDate(date: Date): string {
  return date.toISOString().slice(0, 16).replace('T', ' ');
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}
