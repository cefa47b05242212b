import { createHash } from 'node:crypto';
import { ClientCredentialsProvider, PrivateKeyJwtProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type CallToolResult, CallToolResultSchema, type ElicitRequest, ElicitRequestSchema, type ElicitResult, ErrorCode, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { McpCatalogTool } from '#core/mcp/mcp-catalog-store.js';
import type { McpServerConfig } from '#core/mcp/mcp-config.js';
import { stdioEnvironment } from '#core/mcp/stdio-environment.js';
import { boundedFetch, type MessageLimit } from './bounded-body.js';
import { droppedStreamFetch, HttpConnectionError } from './dropped-stream-fetch.js';
import { currentCall, InFlightCall, SDK_TIMEOUT_OFF, type ElicitationAnswerer, type McpCallOptions } from './in-flight-call.js';
import { McpAuthorizationRequired, McpUnavailableError } from './mcp-errors.js';
import { MessageGuard } from './message-guard.js';
import { DEFAULT_MAX_MESSAGE_BYTES, formatBytes, MAX_JSON_DEPTH, McpMessageTooLargeError, refusalOf } from './message-limits.js';
import { pinnedFetch, type PinnedAddress, type PinnedFetch } from './pinned-fetch.js';
import { StdioGroupTransport, type StdioGroupOptions } from './stdio-group-transport.js';

export { McpAuthorizationRequired, McpUnavailableError };
export type { ElicitationAnswerer, McpCallOptions };

export type McpStatus = 'connecting' | 'connected' | 'disconnected' | 'error' | 'needs_authorization';

/** One tool a server offers, as its tools/list described it. */
export type McpToolEntry = McpCatalogTool;

export interface McpCatalog {
  tools: McpToolEntry[];
  /** A hash of the tools' names and schemas: changes when the server's tools do. */
  version: string;
  /** The list was cut (too many pages, tools or bytes, or an error midway). */
  partial: boolean;
}

/** Bounds on a server's tools/list. */
export interface ListLimits {
  maxPages: number;
  maxTools: number;
  maxBytes: number;
  timeoutMs: number;
}

/** A call that keeps reporting progress may run this many times its timeout, and no longer. */
export const PROGRESS_MAX_FACTOR = 10;

export const DEFAULT_LIST_LIMITS: ListLimits = { maxPages: 20, maxTools: 500, maxBytes: 2 * 1024 * 1024, timeoutMs: 15_000 };

/** The outbound address policy's answer for a remote server's URL: refused, or the address to connect to. */
export type UrlCheck = { ok: false; reason: string } | ({ ok: true } & PinnedAddress);

export interface McpConnectionOptions {
  connectTimeoutMs: number;
  /**
   * Checks a remote server's URL before any traffic (the outbound address policy). The connection
   * then goes only to the address the check approved (no second DNS lookup to rebind).
   */
  checkUrl?: (url: string) => Promise<UrlCheck>;
  /** Most bytes of one message from the server (DATAAGENT_MCP_MAX_MESSAGE_BYTES). Default {@link DEFAULT_MAX_MESSAGE_BYTES}. */
  maxMessageBytes?: number;
  listLimits?: ListLimits;
  /** Called when the connection's status or catalog changes. */
  onChange?: (connection: McpConnection) => void;
  /** Starts a stdio server in the caller's sandbox; absent: the command is spawned as it is. */
  launchStdio?: StdioGroupOptions['launch'];
  /** Signs a remote server's requests (a person's OAuth sign-in, see oauth/mcp-oauth-session.ts). */
  authorizeFetch?: (base: FetchLike) => FetchLike;
  /**
   * Answers the server's `elicitation/create` (form and URL modes) by asking the person, when the
   * call it belongs to brings no answerer of its own ({@link McpCallOptions.onElicitation}).
   * Defaults in a form's schema fill what the answer omits.
   */
  onElicitation?: ElicitationAnswerer;
  /**
   * Offer elicitation (form and URL modes) to the server, answered by the calls that bring an
   * answerer; implied by `onElicitation`. Absent: the client does not offer it.
   */
  elicitation?: boolean;
}

/**
 * One live connection to one MCP server over stdio, SSE or streamable HTTP, on the SDK's
 * Client: the handshake, the tool catalog (kept fresh on tools/list_changed), calls and pings.
 * Closing it leaves nothing behind: an HTTP session is ended with DELETE, a stdio server's
 * whole process group is killed.
 */
export class McpConnection {
  status: McpStatus = 'disconnected';
  lastError?: string;
  lastCheck?: Date;
  catalog: McpCatalog = { tools: [], version: '', partial: false };

  private client?: Client;
  private transport?: Transport;
  /** The pinned fetch of a remote server's transport, closed with it. */
  private http?: PinnedFetch;
  private closing = false;
  /** Tool calls waiting for their answer, for elicitations to find theirs. */
  private readonly inFlight = new Set<InFlightCall>();

  constructor(
    readonly config: McpServerConfig,
    private readonly options: McpConnectionOptions,
  ) {}

  /**
   * Connects, shakes hands and lists the tools.
   * @throws McpUnavailableError when the server cannot be reached in time or refuses.
   */
  async connect(): Promise<void> {
    // A connection that went away (a crash, a dropped stream) may still hold its client and transport.
    await this.dispose();
    this.closing = false;
    this.setStatus('connecting');
    let pinned: PinnedAddress | undefined;
    if (this.config.url && this.options.checkUrl) {
      const check = await this.options.checkUrl(this.config.url);
      if (!check.ok) {
        this.setStatus('error', `refused: ${check.reason}`);
        throw new McpUnavailableError(this.config.name, `its URL is refused: ${check.reason}`, false);
      }
      pinned = check;
    }
    const { transport, guarded } = this.createTransport(pinned);
    const elicits = this.options.elicitation === true || this.options.onElicitation !== undefined;
    const client = new Client({ name: 'dataagent', version: '0.1.0' }, { capabilities: elicits ? { elicitation: { form: { applyDefaults: true }, url: {} } } : {} });
    if (elicits) client.setRequestHandler(ElicitRequestSchema, (request, extra) => this.elicit(request.params, extra.signal));
    client.onclose = () => {
      if (this.client !== client) return;
      if (!this.closing) this.setStatus('disconnected', this.lastError ?? 'the connection closed');
    };
    client.onerror = (err) => {
      this.lastError = describe(err);
    };
    this.client = client;
    this.transport = transport;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new McpUnavailableError(this.config.name, `no handshake within ${this.options.connectTimeoutMs} ms`, true)), this.options.connectTimeoutMs);
    });
    try {
      await Promise.race([client.connect(guarded, { timeout: this.options.connectTimeoutMs }), timeout]);
      client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
        await this.refreshCatalog().catch((err: unknown) => (this.lastError = describe(err)));
      });
      await this.refreshCatalog();
      this.lastCheck = new Date();
      this.setStatus('connected');
    } catch (err) {
      const unavailable = err instanceof McpUnavailableError ? err : new McpUnavailableError(this.config.name, this.reasonFor(err), isRetryable(err));
      await this.close().catch(() => undefined);
      this.setStatus(unavailable instanceof McpAuthorizationRequired ? 'needs_authorization' : 'error', unavailable.reason);
      throw unavailable;
    } finally {
      clearTimeout(timer);
    }
  }

  get connected(): boolean {
    return this.status === 'connected';
  }

  /** The pid of a stdio server (its process group), for tests and leak checks. */
  get pid(): number | undefined {
    return this.transport instanceof StdioGroupTransport ? this.transport.pid : undefined;
  }

  /**
   * Calls a tool. Cancelling `signal` cancels the request on the server (notifications/cancelled);
   * progress notifications keep a long call alive up to `maxTotalMs`; an elicitation during the
   * call goes to `onElicitation`, its timeouts held while the person answers. A streamable HTTP
   * server that lost the session (404) gets a new session and the call once more.
   * @throws McpMessageRefusedError when the answer was too large or too deeply nested to read.
   */
  async callTool(name: string, args: Record<string, unknown>, options: McpCallOptions): Promise<CallToolResult> {
    const attempt = async () => {
      const client = this.client;
      if (!client || !this.connected) throw new McpUnavailableError(this.config.name, this.lastError ?? 'not connected', true);
      const call = new InFlightCall(options, options.maxTotalMs ?? options.timeoutMs * PROGRESS_MAX_FACTOR);
      const cancel = () => call.controller.abort(options.signal.reason);
      if (options.signal.aborted) cancel();
      else options.signal.addEventListener('abort', cancel, { once: true });
      this.inFlight.add(call);
      try {
        return (await currentCall.run(call, () =>
          client.callTool({ name, arguments: args }, CallToolResultSchema, {
            signal: call.controller.signal,
            timeout: SDK_TIMEOUT_OFF,
            onprogress: () => call.progress(),
          }),
        )) as CallToolResult;
      } catch (err) {
        const refused = refusalOf(this.config.name, err);
        if (refused) throw refused;
        if (err instanceof McpAuthorizationRequired) {
          if (this.client === client) {
            this.setStatus('needs_authorization', err.reason);
            await this.close();
          }
          throw err;
        }
        await this.markLost(client, err);
        throw err;
      } finally {
        call.end();
        this.inFlight.delete(call);
        options.signal.removeEventListener('abort', cancel);
      }
    };
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof StreamableHTTPError && err.code === 404) || options.signal.aborted) throw err;
      await this.close();
      await this.connect();
      return attempt();
    }
  }

  /**
   * Answers the server's `elicitation/create` through the call it is about: the call whose
   * response stream carried it (streamable HTTP), else the only call in flight. With several in
   * flight and nothing to tell them apart (stdio, SSE, the standalone stream) nobody is asked:
   * on a connection shared by several people the wrong one could be.
   * @throws McpError (invalid request) saying why nobody can be asked; the server gets it.
   */
  private async elicit(params: ElicitRequest['params'], signal: AbortSignal): Promise<ElicitResult> {
    const carried = currentCall.getStore();
    const call = carried && this.inFlight.has(carried) ? carried : this.inFlight.size === 1 ? [...this.inFlight][0] : undefined;
    const answerer = call?.options.onElicitation ?? this.options.onElicitation;
    if (!answerer) {
      const why = call
        ? 'nobody can be asked in the run that made this call'
        : this.inFlight.size === 0
          ? 'DataAgent asks a person only during one of their tool calls, and none is in flight'
          : `${this.inFlight.size} tool calls are in flight on this connection and the request is not tied to one of them, so DataAgent cannot tell whose person to ask`;
      throw new McpError(ErrorCode.InvalidRequest, `Elicitation refused: ${why}`);
    }
    const release = call?.hold();
    try {
      return await answerer(params, signal);
    } finally {
      release?.();
    }
  }

  /**
   * After a call failed because the server went away (a crash, a dropped stream, a refused
   * connection) or stopped accepting our credentials (401, 403), the connection is closed and
   * marked `error`: its tools are hidden from later runs, and the pool's next use reconnects
   * within its backoff and breaker instead of every run retrying the dead session.
   */
  private async markLost(client: Client, err: unknown): Promise<void> {
    const lost =
      (err instanceof McpError && err.code === ErrorCode.ConnectionClosed) ||
      err instanceof HttpConnectionError ||
      (err instanceof StreamableHTTPError && (err.code === 401 || err.code === 403));
    // Another caller may have reconnected meanwhile: that newer connection is not this call's to close.
    if (!lost || this.client !== client) return;
    await this.markUnavailable(`${isRetryable(err) ? 'lost during a call' : 'refused during a call'}: ${this.reasonFor(err)}`);
  }

  /** Marks the server unavailable (`error`, with the reason: its tools are hidden) and closes the connection. */
  async markUnavailable(reason: string): Promise<void> {
    this.setStatus('error', reason);
    await this.close();
  }

  /** Pings the server; false when it does not answer within `timeoutMs`. */
  async ping(timeoutMs: number): Promise<boolean> {
    if (!this.client || !this.connected) return false;
    try {
      await this.client.ping({ timeout: timeoutMs });
      this.lastCheck = new Date();
      return true;
    } catch (err) {
      this.lastError = describe(err);
      this.lastCheck = new Date();
      return false;
    }
  }

  /** Ends the connection: an HTTP session is terminated (DELETE), a stdio server's process group killed. */
  async close(): Promise<void> {
    this.closing = true;
    await this.dispose();
    if (this.status !== 'error' && this.status !== 'needs_authorization') this.setStatus('disconnected');
  }

  /** Why the server wants sign-in, when it does. */
  get needsAuthorization(): boolean {
    return this.status === 'needs_authorization';
  }

  private async dispose(): Promise<void> {
    const { client, transport, http } = this;
    this.client = undefined;
    this.transport = undefined;
    this.http = undefined;
    if (transport instanceof StreamableHTTPClientTransport && transport.sessionId) {
      await transport.terminateSession().catch(() => undefined);
    }
    await client?.close().catch(() => undefined);
    await transport?.close().catch(() => undefined);
    await http?.close().catch(() => undefined);
  }

  /** Reads tools/list page by page within the limits; what was read before an error is kept (partial). */
  private async refreshCatalog(): Promise<void> {
    const client = this.client;
    if (!client) return;
    const limits = this.options.listLimits ?? DEFAULT_LIST_LIMITS;
    const deadline = Date.now() + limits.timeoutMs;
    const tools: McpToolEntry[] = [];
    let bytes = 0;
    let partial = false;
    let cursor: string | undefined;
    try {
      for (let page = 0; ; page++) {
        if (page >= limits.maxPages) {
          partial = true;
          break;
        }
        const left = deadline - Date.now();
        if (left <= 0) {
          partial = true;
          break;
        }
        const listed = await client.listTools(cursor ? { cursor } : undefined, { timeout: left });
        for (const tool of listed.tools) {
          bytes += JSON.stringify(tool).length;
          if (tools.length >= limits.maxTools || bytes > limits.maxBytes) {
            partial = true;
            break;
          }
          tools.push({
            name: tool.name,
            description: tool.description ?? tool.title ?? tool.name,
            inputSchema: tool.inputSchema as Record<string, unknown>,
            ...(tool.outputSchema ? { outputSchema: tool.outputSchema as Record<string, unknown> } : {}),
            ...(tool.annotations ? { annotations: tool.annotations } : {}),
          });
        }
        cursor = listed.nextCursor;
        if (partial || !cursor) break;
      }
    } catch (err) {
      if (tools.length === 0) throw err;
      partial = true;
      this.lastError = `tools/list failed midway: ${describe(err)}`;
    }
    const version = createHash('sha256')
      .update(JSON.stringify(tools.map((t) => [t.name, t.inputSchema, t.outputSchema ?? null])))
      .digest('hex')
      .slice(0, 16);
    this.catalog = { tools, version, partial };
    this.options.onChange?.(this);
  }

  /**
   * The server's transport (`transport`, for its pid, session and stderr) and the guard the client
   * talks through (`guarded`): every message is read within DATAAGENT_MCP_MAX_MESSAGE_BYTES, and
   * checked for depth before the client sees it. A remote server's requests go to `pinned`.
   */
  private createTransport(pinned: PinnedAddress | undefined): { transport: Transport; guarded: MessageGuard } {
    const { config } = this;
    const limit: MessageLimit = { server: config.name, maxBytes: this.options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES };
    // Assigned below, before the transport starts: nothing arrives earlier.
    let guard: MessageGuard | undefined;
    const refuse = (error: McpMessageTooLargeError, head: string) => guard?.refuseOversized(error, head);
    const transport = this.openTransport(limit, pinned, refuse);
    guard = new MessageGuard(transport, { server: config.name, maxDepth: MAX_JSON_DEPTH });
    return { transport, guarded: guard };
  }

  private openTransport(limit: MessageLimit, pinned: PinnedAddress | undefined, refuse: (error: McpMessageTooLargeError, head: string) => void): Transport {
    const { config } = this;
    if (config.transport === 'stdio') {
      return new StdioGroupTransport({
        command: config.command!,
        args: config.args,
        env: stdioEnvironment(config),
        cwd: config.cwd,
        launch: this.options.launchStdio,
        name: config.name,
        maxMessageBytes: limit.maxBytes,
        onOversized: refuse,
      });
    }
    const requestInit: RequestInit = config.headers ? { headers: config.headers } : {};
    const url = new URL(config.url!);
    this.http = pinned ? pinnedFetch(pinned) : undefined;
    const plain: FetchLike = this.http?.fetch ?? fetch;
    const base = this.options.authorizeFetch ? this.options.authorizeFetch(plain) : plain;
    const authProvider = machineCredentials(config);
    if (config.transport !== 'sse') {
      return new StreamableHTTPClientTransport(url, { requestInit, fetch: droppedStreamFetch(boundedFetch(base, limit)), ...(authProvider ? { authProvider } : {}) });
    }
    const onOversizedEvent = (head: string) => {
      refuse(new McpMessageTooLargeError(config.name, limit.maxBytes), head);
      // Every answer comes down this one stream, and it is cut: the connection is of no more use.
      void this.markUnavailable(`its event stream was cut at a message of more than ${formatBytes(limit.maxBytes)} (DATAAGENT_MCP_MAX_MESSAGE_BYTES)`);
    };
    return new SSEClientTransport(url, { requestInit, fetch: boundedFetch(base, limit), ...(authProvider ? { authProvider } : {}), eventSourceInit: { fetch: withHeaders(boundedFetch(base, limit, onOversizedEvent), config.headers) } });
  }

  private reasonFor(err: unknown): string {
    const stderr = this.transport instanceof StdioGroupTransport ? this.transport.stderr : '';
    return `${describe(err)}${stderr ? ` (stderr: ${stderr.split('\n').slice(-3).join(' | ')})` : ''}`;
  }

  private setStatus(status: McpStatus, error?: string): void {
    this.status = status;
    if (error !== undefined) this.lastError = error;
    else if (status === 'connected') this.lastError = undefined;
    this.options.onChange?.(this);
  }
}

/**
 * An operator's server signed in to as DataAgent itself (the client credentials grant, with a
 * secret or a private key JWT): the SDK fetches and renews the token on a 401.
 */
function machineCredentials(config: McpServerConfig): OAuthClientProvider | undefined {
  const oauth = config.oauth;
  if (oauth?.grant !== 'client_credentials' || !oauth.clientId) return undefined;
  if (oauth.privateKey) {
    return new PrivateKeyJwtProvider({ clientId: oauth.clientId, privateKey: oauth.privateKey, algorithm: oauth.signingAlgorithm ?? 'RS256', clientName: 'DataAgent', ...(oauth.scope ? { scope: oauth.scope } : {}) });
  }
  return new ClientCredentialsProvider({ clientId: oauth.clientId, clientSecret: oauth.clientSecret ?? '', clientName: 'DataAgent', ...(oauth.scope ? { scope: oauth.scope } : {}) });
}

/** The SSE transport's GET goes through EventSource, which takes headers only through its fetch. */
function withHeaders(base: FetchLike, headers: Record<string, string> | undefined): FetchLike {
  return (url, init) => {
    const merged = new Headers(init?.headers);
    for (const [name, value] of Object.entries(headers ?? {})) merged.set(name, value);
    return base(url, { ...init, headers: merged });
  };
}

function describe(err: unknown): string {
  if (err instanceof StreamableHTTPError && err.code) return `HTTP ${err.code}${err.message ? `: ${err.message}` : ''}`;
  const e = err as { code?: unknown; message?: unknown };
  if (typeof e?.code === 'number' && e.code >= 400 && e.code < 600) return `HTTP ${e.code}: ${String(e.message ?? '')}`;
  return err instanceof Error ? err.message || err.name : String(err);
}

/** 401/403 and a command that does not exist do not heal by waiting; everything else may. */
function isRetryable(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  if (code === 401 || code === 403 || code === 'ENOENT' || code === 'EACCES') return false;
  return !/\b(401|403|Unauthorized|Forbidden)\b/.test(describe(err));
}
