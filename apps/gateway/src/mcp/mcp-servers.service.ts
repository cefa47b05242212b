import { Inject, Injectable } from '@nestjs/common';
import type { RedisClient } from '#transport/redis-connection.js';
import { GLOBAL_MCP_OWNER } from '#core/mcp/mcp-catalog-store.js';
import { MCP_NAME_PATTERN, takesPersonalSignIn } from '#core/mcp/mcp-config.js';
import { ACCEPTED_MCP_SHAPES, readMcpPaste, type PastedServer } from '#core/mcp/mcp-config-paste.js';
import { SecretKeyRequiredError, type McpServerOwner } from '#core/mcp/mcp-secrets.js';
import { McpServerExistsError, McpServerLimitError, type UserMcpServer } from '#core/mcp/mcp-server-store.js';
import { parseStdioAllowlist } from '#core/mcp/stdio-allowlist.js';
import { checkUserMcpServer, type UserServerPolicy } from '#core/mcp/user-server-policy.js';
import { isAdmin, type Caller } from '#core/auth/caller.js';
import type { ConversationStore } from '#core/session/session-store.js';
import { toAllowRules } from '#core/tools/builtin/net/outbound-guard.js';
import { announceMcpConfigChange } from '#transport/mcp-config-changes.js';
import { readMcpStatuses } from '#transport/mcp-status.js';
import { ApiError } from '../common/api-error.js';
import { invalidFields } from '../common/validation.js';
import type { GatewaySettings } from '../infra/gateway-config.js';
import { REDIS, SETTINGS, STORE } from '../infra/tokens.js';
import { Quotas, tooMany } from '../quotas/quotas.service.js';
import { McpReleases } from './mcp-releases.service.js';
import { McpSignIns } from './mcp-sign-ins.service.js';
import { globalServerView, mcpCatalogView, mcpServerView } from './mcp-server.view.js';
import type { McpCatalogView, McpPasteAnswer, McpPasteRefusal, McpServerDeleted, McpServerList, McpServerView } from './mcp-server-views.dto.js';

/** The user_id column's width: longer ids cannot own anything. */
const MAX_USER_ID_LENGTH = 128;

/**
 * Users' MCP servers: who may see them, what may be registered, and telling workers and the
 * user's sockets after each change.
 */
@Injectable()
export class McpServersService {
  private readonly policy: UserServerPolicy;

  constructor(
    @Inject(SETTINGS) settings: GatewaySettings,
    @Inject(STORE) private readonly store: ConversationStore,
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly releases: McpReleases,
    private readonly quotas: Quotas,
    private readonly signIns: McpSignIns,
  ) {
    this.policy = { stdioAllow: parseStdioAllowlist(settings.mcp.stdioAllow), outbound: { allowlist: toAllowRules(settings.tools.outboundAllowlist) } };
  }

  /**
   * The user's own servers, and the operator's global ones they also get (as workers last
   * reported them; one of the user's by the same name overrides it).
   * @throws ApiError 404 for another user (unless the caller is an admin of their tenant).
   */
  async list(caller: Caller, userId: string): Promise<McpServerList> {
    const owner = this.owner(caller, userId);
    const [servers, statuses, globalStatuses] = await Promise.all([
      this.store.mcpServers.list(owner.tenantId, owner.userId),
      readMcpStatuses(this.redis, owner.tenantId, owner.userId),
      readMcpStatuses(this.redis, GLOBAL_MCP_OWNER.tenantId, GLOBAL_MCP_OWNER.userId),
    ]);
    const own = new Set(servers.map((s) => s.config.name));
    const globalServers = [...globalStatuses]
      .filter(([name]) => !own.has(name))
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([name, status]) => globalServerView(name, status));
    const views = await Promise.all(servers.map((s) => this.withSignIn(caller, owner, s, mcpServerView(s, statuses.get(s.config.name)))));
    return { servers: views, global_servers: globalServers, max_servers: await this.quotas.maxMcpServers(owner.tenantId) };
  }

  /** A remote server's view says whether the person signed in, and how to when it needs them to. */
  private async withSignIn(caller: Caller, owner: McpServerOwner, server: UserMcpServer, view: McpServerView): Promise<McpServerView> {
    if (!takesPersonalSignIn(server.config)) return view;
    const signedIn = await this.signIns.signedIn(owner, server.config.name);
    if (view.status !== 'needs_authorization') return { ...view, signed_in: signedIn };
    return { ...view, signed_in: signedIn, authorize_url: (await this.signIns.authorizeUrl(caller, owner.userId, server.config.name)).authorize_url };
  }

  /**
   * A server's tools as a worker last listed them (`mcp_tools`), named `server.tool`: the user's
   * own server of that name, else the operator's global one.
   * @throws ApiError 404 for another user, or a server the user neither has nor gets globally.
   */
  async tools(caller: Caller, userId: string, name: string): Promise<McpCatalogView> {
    const owner = this.owner(caller, userId);
    if (!MCP_NAME_PATTERN.test(name)) throw serverNotFound(name);
    const own = await this.store.mcpServers.get(owner.tenantId, owner.userId, name);
    const catalog = await this.store.mcpCatalog.get(own ? owner : GLOBAL_MCP_OWNER, name);
    if (!own && !catalog) throw serverNotFound(name);
    return mcpCatalogView(name, own ? 'user' : 'global', catalog);
  }

  /**
   * Registers what the body holds: one server (201 and the server, or an ApiError as always), or
   * a pasted Claude Desktop / Cursor config, each of its servers registered as one POST would be.
   * @returns the status to answer with and the body.
   * @throws ApiError 404 for another user; 422 `invalid_mcp_config` for a body of no accepted
   * shape; for a single server, 403 (stdio not allowlisted), 409 (name taken), 422 (bad fields, no
   * secret key), 429 `mcp_server_limit` (the tenant's max_mcp_servers); for a paste of which nothing was added,
   * `mcp_servers_refused` with every server's reason (the refusals' status when they share one, else 422).
   */
  async register(caller: Caller, userId: string, body: unknown): Promise<{ status: 201; body: McpServerView | McpPasteAnswer } | { status: 207; body: McpPasteAnswer }> {
    const owner = this.owner(caller, userId);
    const reading = readMcpPaste(body);
    if (reading.shape === 'server') return { status: 201, body: await this.createFor(owner, body) };
    if (reading.shape === 'unknown') throw new ApiError(422, 'invalid_mcp_config', reading.message, { accepted_shapes: ACCEPTED_MCP_SHAPES });
    const { added, refused } = await this.paste(owner, reading.entries);
    if (added.length === 0) throw nothingAdded(refused);
    const message = refused.length === 0 ? `${added.length} MCP servers added` : `${added.length} of ${added.length + refused.length} MCP servers added; refused: ${refusalNames(refused)}`;
    const answer: McpPasteAnswer = { message, added, refused: refused.map(refusalView) };
    return refused.length === 0 ? { status: 201, body: answer } : { status: 207, body: answer };
  }

  /**
   * A paste's servers one after another, in its order, each through {@link createFor} like one
   * POST: later ones see the earlier ones (a name taken, the limit reached).
   */
  private async paste(owner: McpServerOwner, entries: PastedServer[]) {
    const added: McpServerView[] = [];
    const refused: Array<{ name: string; error: ApiError }> = [];
    for (const entry of entries) {
      if ('skipped' in entry) {
        refused.push({ name: entry.name, error: new ApiError(422, 'mcp_server_disabled', entry.skipped) });
        continue;
      }
      try {
        added.push(await this.createFor(owner, entry.body));
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        refused.push({ name: entry.name, error: err });
      }
    }
    return { added, refused };
  }

  /** One server, as a single POST registers it. @throws ApiError as {@link register} for a single server. */
  private async createFor(owner: McpServerOwner, body: unknown): Promise<McpServerView> {
    const server = await this.admit(body);
    let created: UserMcpServer;
    try {
      created = await this.store.mcpServers.create(owner.tenantId, owner.userId, server, { maxServers: await this.quotas.maxMcpServers(owner.tenantId) });
    } catch (err) {
      if (err instanceof McpServerExistsError) {
        throw new ApiError(409, 'mcp_server_exists', `An MCP server named "${server.name}" exists already; PUT replaces it`, { server_name: server.name });
      }
      if (err instanceof McpServerLimitError) {
        throw tooMany('mcp_server_limit', `You have ${err.maxServers} MCP servers, the most a user may keep; delete one first`, 'mcp_servers_per_user', err.maxServers, 60);
      }
      throw storeError(err);
    }
    await announceMcpConfigChange(this.redis, owner.tenantId, owner.userId, server.name, 'created');
    return mcpServerView(created);
  }

  /** @throws ApiError 404 (no such user or server), 403, 422 (bad fields, another name in the body, no secret key). */
  async replace(caller: Caller, userId: string, name: string, body: unknown): Promise<McpServerView> {
    const owner = this.owner(caller, userId);
    if (!MCP_NAME_PATTERN.test(name)) throw serverNotFound(name);
    const server = await this.admit(body, name);
    const updated = await this.store.mcpServers.update(owner.tenantId, owner.userId, name, server).catch((err: unknown) => {
      throw storeError(err);
    });
    if (!updated) throw serverNotFound(name);
    await announceMcpConfigChange(this.redis, owner.tenantId, owner.userId, name, 'updated');
    await this.releases.serverChanged(owner.tenantId, owner.userId, name);
    return mcpServerView(updated);
  }

  /** @throws ApiError 404 (no such user or server). */
  async remove(caller: Caller, userId: string, name: string): Promise<McpServerDeleted> {
    const owner = this.owner(caller, userId);
    if (!MCP_NAME_PATTERN.test(name) || !(await this.store.mcpServers.delete(owner.tenantId, owner.userId, name))) throw serverNotFound(name);
    await this.store.mcpCatalog.delete(owner, name);
    await announceMcpConfigChange(this.redis, owner.tenantId, owner.userId, name, 'deleted');
    await this.releases.serverChanged(owner.tenantId, owner.userId, name);
    return { name, deleted: true };
  }

  /** Users manage their own servers; an admin, any user's of their tenant. */
  private owner(caller: Caller, userId: string): McpServerOwner {
    const allowed = userId === caller.userId || isAdmin(caller);
    if (!allowed || userId.length === 0 || userId.length > MAX_USER_ID_LENGTH) throw ApiError.notFound('user', userId);
    return { tenantId: caller.tenantId, userId };
  }

  private async admit(body: unknown, pathName?: string) {
    const check = await checkUserMcpServer(body, this.policy, pathName);
    if (check.ok) return check.server;
    if (check.status === 403) throw new ApiError(403, 'mcp_server_not_allowed', check.reason, { field: check.field });
    const fields: Record<string, string[]> = {};
    for (const { field, message } of check.errors) (fields[field] ??= []).push(message);
    throw invalidFields(fields);
  }
}

function storeError(err: unknown): unknown {
  if (!(err instanceof SecretKeyRequiredError)) return err;
  const message = 'cannot be stored: secret values are kept encrypted, and this deployment has no DATAAGENT_SECRET_KEY (the operator sets it on the gateways and workers)';
  return invalidFields(Object.fromEntries(err.fields.map((f) => [f, [message]])), 'secret_key_required');
}

/** One refused server of a paste, as the answer shows it: the error a single POST of it would have had. */
function refusalView({ name, error }: { name: string; error: ApiError }): McpPasteRefusal {
  return { name, error_code: error.errorCode, message: error.message, ...(Object.keys(error.details).length > 0 ? { details: error.details } : {}) };
}

/** A paste of which nothing was added: the refusals' common status (a lone server answers as one POST), else 422. */
function nothingAdded(refused: Array<{ name: string; error: ApiError }>): ApiError {
  const statuses = new Set(refused.map((r) => r.error.status));
  const status = statuses.size === 1 ? [...statuses][0]! : 422;
  const retryAfter = status === 429 ? refused[0]!.error.headers : {};
  return new ApiError(status, 'mcp_servers_refused', `No MCP server of the config was added: ${refusalNames(refused)}; details.refused says why for each`, { added: [], refused: refused.map(refusalView) }, retryAfter);
}

function refusalNames(refused: Array<{ name: string; error: ApiError }>): string {
  return refused.map((r) => `${r.name} (${r.error.errorCode})`).join(', ');
}

function serverNotFound(name: string): ApiError {
  return new ApiError(404, 'mcp_server_not_found', `MCP server not found: ${name}`, { server_name: name });
}
