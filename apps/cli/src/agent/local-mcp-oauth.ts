import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import type { McpServerConfig } from '#core/mcp/mcp-config.js';
import { type McpOAuthGrant, type McpOAuthOwner, type McpOAuthStore, type StoredMcpOAuthGrant } from '#core/mcp/mcp-oauth-store.js';
import type { McpAuthorizationRequired } from '#mcp/mcp-errors.js';
import { beginSignIn, completeSignIn, preRegisteredClient, type OAuthClientIdentity } from '#mcp/oauth/mcp-sign-in.js';

/** The one person of the local CLI, as sign-ins are keyed. */
export const LOCAL_OWNER: McpOAuthOwner = { tenantId: 'local', userId: 'local' };

/** How long the CLI waits for the browser to come back. */
const SIGN_IN_TIMEOUT_MS = 5 * 60_000;

/**
 * The local person's sign-ins, in a file of their own (mode 0600) next to their mcp.json, as other
 * command-line tools keep theirs: read once, written after every change. One person: keyed by server.
 */
export class FileMcpOAuthStore implements McpOAuthStore {
  private readonly grants = new Map<string, { grant: McpOAuthGrant | null; version: number; updatedAt: string }>();

  constructor(private readonly file: string) {
    try {
      const saved = JSON.parse(readFileSync(file, 'utf8')) as Record<string, { grant: McpOAuthGrant | null; version: number; updatedAt: string }>;
      for (const [server, entry] of Object.entries(saved)) this.grants.set(server, entry);
    } catch {
      /* none yet */
    }
  }

  async get(_owner: McpOAuthOwner, server: string): Promise<StoredMcpOAuthGrant | null> {
    const entry = this.grants.get(server);
    return entry?.grant ? { grant: structuredClone(entry.grant), version: entry.version, updatedAt: new Date(entry.updatedAt) } : null;
  }

  async put(_owner: McpOAuthOwner, server: string, grant: McpOAuthGrant, expectedVersion: number): Promise<number | null> {
    const entry = this.grants.get(server);
    if ((entry?.grant ? entry.version : 0) !== expectedVersion) return null;
    const version = (entry?.version ?? 0) + 1;
    this.grants.set(server, { grant: structuredClone(grant), version, updatedAt: new Date().toISOString() });
    this.save();
    return version;
  }

  async delete(_owner: McpOAuthOwner, server: string): Promise<boolean> {
    const entry = this.grants.get(server);
    if (!entry?.grant) return false;
    this.grants.set(server, { grant: null, version: entry.version + 1, updatedAt: new Date().toISOString() });
    this.save();
    return true;
  }

  private save(): void {
    mkdirSync(dirname(this.file), { recursive: true });
    writeFileSync(this.file, `${JSON.stringify(Object.fromEntries(this.grants), null, 2)}\n`, { mode: 0o600 });
  }
}

export interface LoopbackSignInOptions {
  config: McpServerConfig;
  store: McpOAuthStore;
  /** What the server's last 401 or 403 asked for. */
  challenge?: McpAuthorizationRequired['challenge'];
  /** Shows the person the URL to open (always called: a browser may not open by itself). */
  print: (line: string) => void;
  /** Opens the URL in a browser; default the desktop's opener (xdg-open, open), failures ignored. */
  open?: (url: string) => void | Promise<void>;
  timeoutMs?: number;
}

/**
 * Signs the local person in to a server with a loopback redirect (RFC 8252): a one-request HTTP
 * server on 127.0.0.1 receives the authorization server's redirect, the code is redeemed with
 * the PKCE verifier, and the tokens are stored.
 * @throws Error when the person does not come back in time, or the authorization server refuses.
 */
export async function loopbackSignIn(options: LoopbackSignInOptions): Promise<void> {
  const { config, store } = options;
  const state = randomBytes(24).toString('base64url');
  let settle!: (result: { code?: string; error?: string }) => void;
  const back = new Promise<{ code?: string; error?: string }>((resolve) => (settle = resolve));
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback' || url.searchParams.get('state') !== state) {
      res.writeHead(404).end();
      return;
    }
    const error = url.searchParams.get('error');
    const code = url.searchParams.get('code');
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(error ? `Sign-in to ${config.name} did not complete: ${error}. You can close this tab.` : `Signed in to ${config.name}. You can close this tab and go back to the terminal.`);
    settle(error ? { error } : code ? { code } : { error: 'no code' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const identity: OAuthClientIdentity = {
      redirectUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
      clientName: 'DataAgent CLI',
      ...preRegisteredClient(config),
    };
    const scope = options.challenge?.scope ?? config.oauth?.scope;
    const { authorizationUrl, pending } = await beginSignIn({ serverUrl: config.url!, identity, state, ...options.challenge, ...(scope ? { scope } : {}) });
    options.print(`Sign in to ${config.name} in your browser: ${authorizationUrl.toString()}`);
    await (options.open ?? openInBrowser)(authorizationUrl.toString());
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`nobody came back from the browser within ${Math.round((options.timeoutMs ?? SIGN_IN_TIMEOUT_MS) / 1000)} s`)), options.timeoutMs ?? SIGN_IN_TIMEOUT_MS);
    });
    const result = await Promise.race([back, timeout]).finally(() => clearTimeout(timer));
    if (!result.code) throw new Error(`the authorization server did not sign you in: ${result.error}`);
    const grant = await completeSignIn(pending, result.code, identity);
    const current = await store.get(LOCAL_OWNER, config.name);
    if ((await store.put(LOCAL_OWNER, config.name, grant, current?.version ?? 0)) === null) throw new Error('another sign-in was stored at the same moment');
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

/** The desktop's own way to open a URL; nothing happens where there is none (the URL is printed anyway). */
function openInBrowser(url: string): void {
  const command = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  try {
    const child = spawn(command, [url], { stdio: 'ignore', detached: true });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    /* no opener: the printed URL is the way */
  }
}
