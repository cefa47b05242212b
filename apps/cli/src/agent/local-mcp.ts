import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { McpRuntimeConfig } from '#core/config/mcp-settings.js';
import type { RunToolProvider } from '#core/engine/run-tools.js';
import { parseMcpConfigFile, takesPersonalSignIn, type McpServerConfig } from '#core/mcp/mcp-config.js';
import type { McpOAuthStore } from '#core/mcp/mcp-oauth-store.js';
import { McpAuthorizationRequired } from '#mcp/mcp-errors.js';
import { McpPool, type McpLease } from '#mcp/mcp-pool.js';
import { McpOAuthSession, MemoryRefreshLock, oauthFetch } from '#mcp/oauth/mcp-oauth-session.js';
import { FileMcpOAuthStore, LOCAL_OWNER, loopbackSignIn } from './local-mcp-oauth.js';
import { poolOptionsFor } from '#mcp/mcp-pool-options.js';
import { mcpToolProvider } from '#mcp/mcp-provider.js';
import type { McpReload } from './agent-backend.js';
import { McpConfigFileError } from './usage-errors.js';

export { McpConfigFileError };


/** A server as `/mcp list` shows it. */
export interface McpServerState {
  name: string;
  status: 'connected' | 'failed';
  /** Tools it offers, when connected. */
  tools?: number;
  /** Why it is not connected. */
  reason?: string;
}

export interface LocalMcpOptions {
  config: McpRuntimeConfig;
  outboundAllowlist: readonly string[];
  /** The model reads tools from the prompt (DATAAGENT_TOOL_PROMPT). */
  textTools: boolean;
  /** One line for the person at the terminal. */
  warn: (line: string) => void;
  /** Where the person's sign-ins to OAuth servers are kept; default `mcp-oauth.json` beside the config file. */
  oauthFile?: string;
  /** Offer servers elicitation: a person at the terminal answers their questions. */
  elicitation?: boolean;
}

/**
 * The file that names the local servers: `--mcp-config PATH`, else
 * `~/.deepagents/{assistant_id}/mcp.json` when it exists (`$HOME` first, so tests can move it).
 */
export function localMcpConfigPath(flag: string | undefined, assistantId: string): string | undefined {
  if (flag) return flag;
  const file = join(process.env.HOME || homedir(), '.deepagents', assistantId, 'mcp.json');
  return existsSync(file) ? file : undefined;
}

/**
 * Reads the servers from `file` and sets up the worker's pool and provider for them, with one
 * owner (the local person) and no bindings or audit store. Servers connect when a run starts,
 * or all at once with {@link LocalMcp.connect}; one that fails is warned about and left out, so one broken server does not stop the others.
 * @throws McpConfigFileError when the file cannot be read or has no known shape.
 */
export async function openLocalMcp(file: string, options: LocalMcpOptions): Promise<LocalMcp> {
  const mcp = new LocalMcp(file, options);
  mcp.servers.push(...(await mcp.readFile()));
  return mcp;
}

/** The local CLI's MCP servers: the provider that equips its runs, their states, reload and close. */
export class LocalMcp {
  /** The servers runs are offered: the provider reads this list at each run. */
  readonly servers: McpServerConfig[] = [];
  readonly provider: RunToolProvider;
  private readonly pool: McpPool;
  /** Servers connected up front (interactive), each held by a lease so it does not idle out. */
  private readonly held = new Map<string, { config: McpServerConfig; lease: McpLease }>();
  private readonly failed = new Map<string, { config: McpServerConfig; reason: string; challenge?: McpAuthorizationRequired['challenge'] }>();
  /** The person's sign-ins to servers that want one (OAuth, loopback redirect). */
  readonly signIns: McpOAuthStore;

  constructor(readonly file: string, private readonly options: LocalMcpOptions) {
    const { config, outboundAllowlist, textTools, warn } = options;
    this.signIns = new FileMcpOAuthStore(options.oauthFile ?? join(dirname(file), 'mcp-oauth.json'));
    const lock = new MemoryRefreshLock();
    // Local servers are the person's own, all in the global scope: no per-user cap applies.
    this.pool = new McpPool({
      ...poolOptionsFor(config, 1, outboundAllowlist),
      ...(options.elicitation ? { elicitation: true } : {}),
      // A remote server is signed in to with the person's own sign-in, unless the config sends an Authorization header.
      authorizeFetch: (_scope, server) => {
        if (!takesPersonalSignIn(server)) return undefined;
        const session = new McpOAuthSession({ owner: LOCAL_OWNER, server: server.name, store: this.signIns, lock });
        return (base) => oauthFetch(base, session, server.name);
      },
    });
    this.provider = mcpToolProvider({
      pool: this.pool,
      globalServers: this.servers,
      userServers: async () => [],
      bindings: async () => null,
      audit: () => undefined,
      auditPayloads: false,
      injection: config.toolInjection,
      textTools,
      callTimeoutMs: config.callTimeoutMs,
      logger: {
        warn: (obj: { server?: string; reason?: string }, msg: string) => warn(obj.server ? `MCP server ${obj.server} not connected: ${obj.reason ?? msg}` : msg),
      },
    });
  }

  /**
   * Connects every configured server now (the interactive CLI, at start): runs are then offered
   * the connected ones only, and a failed one is warned about once instead of at every run.
   */
  async connect(): Promise<void> {
    const configured = this.servers.splice(0);
    await Promise.all(configured.map((config) => this.connectOne(config)));
  }

  /** Each configured server, connected with its tool count or failed with the reason. */
  status(): McpServerState[] {
    const connected = [...this.held.values()].map(({ config, lease }) => ({ name: config.name, status: 'connected' as const, tools: lease.connection.catalog.tools.length }));
    const failed = [...this.failed.values()].map(({ config, reason }) => ({ name: config.name, status: 'failed' as const, reason }));
    return [...connected, ...failed].sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * Re-reads the file while running (`/mcp reload`), so an edit needs no restart: connects servers that are new or changed, retries
   * failed ones, and drops those no longer named.
   * @throws McpConfigFileError when the file cannot be read or has no known shape.
   */
  async reload(): Promise<McpReload> {
    const configured = await this.readFile();
    const wanted = new Map(configured.map((c) => [c.name, c]));
    const removed: string[] = [];
    for (const [name, { config, lease }] of this.held) {
      if (JSON.stringify(wanted.get(name)) === JSON.stringify(config)) continue;
      this.held.delete(name);
      this.servers.splice(this.servers.indexOf(config), 1);
      lease.release();
      if (!wanted.has(name)) removed.push(name);
    }
    for (const name of this.failed.keys()) if (!wanted.has(name)) removed.push(name);
    this.failed.clear();
    const fresh = configured.filter((c) => !this.held.has(c.name));
    await Promise.all(fresh.map((config) => this.connectOne(config)));
    return { added: fresh.filter((c) => this.held.has(c.name)).map((c) => c.name), removed, failed: [...this.failed.keys()] };
  }

  /**
   * Signs the person in to a server that asked for it (a loopback redirect: the URL is printed and
   * opened in the browser), then connects it.
   * @throws Error for a server not configured or not remote, or a sign-in that did not complete.
   */
  async signIn(name: string, print: (line: string) => void, open?: (url: string) => void | Promise<void>): Promise<McpServerState> {
    const config = this.failed.get(name)?.config ?? this.held.get(name)?.config ?? (await this.readFile()).find((c) => c.name === name);
    if (!config) throw new Error(`no MCP server named ${name} in ${this.file}`);
    if (config.transport === 'stdio' || !config.url) throw new Error(`${name} is a stdio server: sign-in is for servers reached by URL`);
    await loopbackSignIn({ config, store: this.signIns, print, ...(open ? { open } : {}), ...(this.failed.get(name)?.challenge ? { challenge: this.failed.get(name)!.challenge } : {}) });
    const held = this.held.get(name);
    if (held) {
      this.held.delete(name);
      this.servers.splice(this.servers.indexOf(held.config), 1);
      held.lease.release();
      await this.pool.closeScope({ kind: 'global' }, name);
    }
    this.failed.delete(name);
    await this.connectOne(config);
    return this.status().find((s) => s.name === name)!;
  }

  /** Closes the connections and stops their stdio servers. */
  async close(): Promise<void> {
    for (const { lease } of this.held.values()) lease.release();
    await this.pool.close();
  }

  /** @throws McpConfigFileError */
  async readFile(): Promise<McpServerConfig[]> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      throw new McpConfigFileError(`cannot read the MCP config ${this.file}: ${(err as Error).message}`);
    }
    const { servers, errors } = parseMcpConfigFile(text);
    if (errors.some((e) => e.field === '(file)')) throw new McpConfigFileError(`MCP config ${this.file}: ${errors.map((e) => e.message).join('; ')}`);
    for (const error of errors) this.options.warn(`MCP config ${this.file}: ${error.field} ${error.message}; that server is left out`);
    return servers.filter((s) => !s.disabled);
  }

  private async connectOne(config: McpServerConfig): Promise<void> {
    try {
      const lease = await this.pool.acquire({ kind: 'global' }, config);
      this.held.set(config.name, { config, lease });
      this.servers.push(config);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      if (err instanceof McpAuthorizationRequired) {
        this.failed.set(config.name, { config, reason, challenge: err.challenge });
        this.options.warn(`MCP server ${config.name} needs you to sign in: type /mcp sign-in ${config.name}`);
        return;
      }
      this.failed.set(config.name, { config, reason });
      this.options.warn(`MCP server ${config.name} not connected: ${reason}`);
    }
  }
}
