/**
 * A small program that uses DataAgent through a client generated from its OpenAPI document, as a
 * user of `openapi-typescript` + `openapi-fetch` would write it: test/openapi-client.test.ts
 * type-checks it (strict) next to the generated `api.d.ts`, then runs it against a gateway.
 *
 * It reads every answer through the generated types (`data.session_id`, `event.todos`,
 * `error.error_code`, ...) and throws when a value is not what the call did. It writes every
 * exchange it had (method, schema path, status, body) and a few facts it read to the file named
 * by its last argument, for the test to check against the document's schemas.
 *
 * Arguments: base URL, a user's key, an operator's key, the output file.
 */
export const TYPED_CLIENT_PROGRAM = String.raw`
import { writeFileSync } from 'node:fs';
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './api.js';

type Schemas = components['schemas'];
type RunEvent = Schemas['ChatAnswer']['events'][number];

interface Exchange { method: string; path: string; status: number; type: string; body: unknown }

const [baseUrl, userKey, operatorKey, out] = process.argv.slice(2) as [string, string, string, string];
const exchanges: Exchange[] = [];
const streamsRead: Array<Promise<void>> = [];
const facts: Record<string, unknown> = {};

/** Keeps each exchange; an event stream's body is read alongside the program, which reads it as it comes. */
const record: Middleware = {
  async onResponse({ request, response, schemaPath }) {
    const type = response.headers.get('content-type') ?? '';
    const exchange: Exchange = { method: request.method, path: schemaPath, status: response.status, type, body: null };
    exchanges.push(exchange);
    if (response.status === 204) return;
    const body = response.clone().text();
    if (type.startsWith('text/event-stream')) streamsRead.push(body.then((text) => void (exchange.body = text)));
    else exchange.body = type.startsWith('application/json') ? JSON.parse(await body) : await body;
  },
};

function client(headers: Record<string, string> = {}) {
  const api = createClient<paths, 'application/json'>({ baseUrl, headers });
  api.use(record);
  return api;
}

function check(condition: unknown, what: string): asserts condition {
  if (!condition) throw new Error('Not as expected: ' + what);
}

/** The answer's body, or a thrown error with the status and the error body. */
function ok<T>(result: { data?: T; error?: unknown; response: Response }, what: string): T {
  if (result.data === undefined) throw new Error(what + ': ' + result.response.status + ' ' + JSON.stringify(result.error));
  return result.data;
}

const anonymous = client();
const user = client({ 'X-API-Key': userKey });
const operator = client({ 'X-API-Key': operatorKey });

// Health needs no key.
const health = ok(await anonymous.GET('/api/v1/health'), 'health');
check(health.status === 'ok' && health.redis === 'up' && health.database === 'up', 'health is ok');
check((ok(await anonymous.GET('/api/v1/health/live'), 'live')).status === 'ok', 'live');
check((ok(await anonymous.GET('/api/v1/health/ready'), 'ready')).status === 'ready', 'ready');

// The same key as a bearer token, as OpenAI clients send it.
const me = ok(await client({ Authorization: 'Bearer ' + userKey }).GET('/api/v1/me'), 'me');
check(me.role === 'user' && me.auth_disabled === false, 'a user key');
const userId: string = me.user_id;
facts.me = me.tenant_id + '/' + me.user_id;

const agents = ok(await user.GET('/api/v1/agents'), 'agents');
check(agents.agents.some((a) => a.assistant_id === 'default'), 'the default assistant is listed');

// Sessions.
const session = ok(await user.POST('/api/v1/sessions', { body: { title: 'Typed client' } }), 'create a session');
const sessionId: string = session.session_id;
check(session.assistant_id === 'default' && session.title === 'Typed client', 'the session as created');
const renamed = ok(await user.PATCH('/api/v1/sessions/{id}', { params: { path: { id: sessionId } }, body: { title: 'Renamed' } }), 'rename');
check(renamed.title === 'Renamed' && Date.parse(renamed.updated_at) >= Date.parse(session.created_at), 'renamed');

// A chat turn with a tool: its events, narrowed by event_type.
const todos: Schemas['TodoUpdateEventView']['todos'] = [
  { content: 'Read the document', status: 'completed' },
  { content: 'Generate a client', status: 'in_progress' },
];
const chat = ok(await user.POST('/api/v1/chat', { body: { session_id: sessionId, message: 'Plan it [[tool:write_todos ' + JSON.stringify({ todos }) + ']]' } }), 'chat');
check(chat.session_id === sessionId, 'the chat is in the session');
const events: RunEvent[] = chat.events;
const done = events.at(-1);
check(done?.event_type === 'done' && done.cancelled === false, 'the run ends with done');
check(events.every((e, i) => e.run_id === chat.run_id && e.seq === i + 1), 'the events are the run, in seq order');
const update = events.find((e): e is Schemas['TodoUpdateEventView'] => e.event_type === 'todo_update');
check(update?.todos[1]?.status === 'in_progress', 'the todo list came back');
const call = events.find((e): e is Schemas['ToolCallEventView'] => e.event_type === 'tool_call');
const result = events.find((e): e is Schemas['ToolResultEventView'] => e.event_type === 'tool_result');
check(call?.tool_name === 'write_todos' && result?.tool_call_id === call.tool_call_id && result.status === 'success', 'the tool ran');
facts.answer = events.flatMap((e) => (e.event_type === 'text' ? [e.content] : [])).join('');
facts.eventTypes = events.map((e) => e.event_type);

const sessions = ok(await user.GET('/api/v1/sessions', { params: { query: { limit: 10, offset: 0 } } }), 'list sessions');
check(sessions.limit === 10 && sessions.sessions.some((s) => s.session_id === sessionId), 'the session is listed');
const detail = ok(await user.GET('/api/v1/sessions/{id}', { params: { path: { id: sessionId } } }), 'one session');
const messages = ok(await user.GET('/api/v1/sessions/{id}/messages', { params: { path: { id: sessionId }, query: { limit: 100 } } }), 'messages');
check(messages.total === detail.message_count && messages.messages.length === messages.total, 'the count is the messages');
check(messages.messages[0]?.role === 'user' && messages.messages[0].run_id === chat.run_id, 'the user message first');
facts.roles = messages.messages.map((m) => m.role);

// The run's events again, by a stream ticket as a browser's EventSource would open them; nothing after done.
const runPath = { params: { path: { runId: chat.run_id } } };
const ticket = ok(await user.POST('/api/v1/runs/{runId}/stream-tickets', runPath), 'a stream ticket');
check(ticket.run_id === chat.run_id && ticket.url.endsWith('?ticket=' + ticket.ticket), 'a ticket for the run');
const replay = ok(await anonymous.GET('/api/v1/runs/{runId}/events', { params: { path: { runId: chat.run_id }, query: { ticket: ticket.ticket } }, parseAs: 'text' }), 'replay');
check(replay.split('\n').filter((line) => line.startsWith('id: ')).length === events.length, 'the replay is the whole run');
const after = await user.GET('/api/v1/runs/{runId}/events', { params: { path: { runId: chat.run_id }, query: { after_seq: done.seq } } });
check(after.response.status === 204, 'nothing after done');

const cancel = ok(await user.POST('/api/v1/chat/{sessionId}/cancel', { params: { path: { sessionId } } }), 'cancel');
check(cancel.cancelled === false && cancel.reason === 'no_active_run' && cancel.run_ids.length === 0, 'nothing to cancel');

// A streamed turn whose tool needs approval: read the stream as it comes, approve, read on to done.
const stream = ok(
  await user.POST('/api/v1/chat/stream', { body: { session_id: sessionId, message: '[[tool:write_file {"path":"notes.md","content":"typed"}]]' }, parseAs: 'stream' }),
  'chat stream',
);
check(stream !== null, 'a stream');
const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
const streamed: RunEvent[] = [];
let buffered = '';
for (let next = await reader.read(); !next.done; next = await reader.read()) {
  buffered += next.value;
  const blocks = buffered.split('\n\n');
  buffered = blocks.pop() ?? '';
  for (const block of blocks) {
    const data = block.split('\n').find((line) => line.startsWith('data: '));
    if (!data) continue;
    const event = JSON.parse(data.slice('data: '.length)) as RunEvent;
    streamed.push(event);
    if (event.event_type === 'hitl_request') {
      check(event.action_request.name === 'write_file', 'approval asked for write_file');
      const decided = ok(await user.POST('/api/v1/hitl/{requestId}', { params: { path: { requestId: event.request_id } }, body: { decision: 'approve' } }), 'approve');
      check(decided.accepted === true && decided.decision === 'approve', 'approved');
    }
  }
}
const written = streamed.find((e): e is Schemas['FileOperationEventView'] => e.event_type === 'file_operation');
check(written?.path.endsWith('notes.md') && written.stats.additions >= 1, 'the file was written once approved');
facts.streamedTypes = streamed.map((e) => e.event_type);

// Errors are typed too.
const missing = await user.GET('/api/v1/sessions/{id}', { params: { path: { id: 'no-such-session' } } });
check(missing.error?.error_code === 'session_not_found', 'an unknown session is a typed 404');

// The user's MCP servers: one, then a pasted config of which one server is refused.
const mcp = { params: { path: { userId } } };
const added = ok(await user.POST('/api/v1/users/{userId}/mcp-servers', { ...mcp, body: { name: 'docs', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer secret' } } }), 'add an MCP server');
check('transport' in added && added.transport === 'streamable-http' && added.headers?.Authorization === '***' && added.status === 'unknown', 'the server, secrets masked');
const listed = ok(await user.GET('/api/v1/users/{userId}/mcp-servers', mcp), 'list MCP servers');
check(listed.servers.map((s) => s.name).join() === 'docs' && listed.max_servers > 0, 'the server is listed');
const catalog = ok(await user.GET('/api/v1/users/{userId}/mcp-servers/{name}/tools', { params: { path: { userId, name: 'docs' } } }), 'its tools');
check(catalog.scope === 'user' && catalog.version === null && catalog.tools.length === 0, 'no worker has listed its tools yet');
const replaced = ok(await user.PUT('/api/v1/users/{userId}/mcp-servers/{name}', { params: { path: { userId, name: 'docs' } }, body: { name: 'docs', url: 'http://127.0.0.1:9/mcp', description: 'The docs' } }), 'replace');
check(replaced.description === 'The docs' && replaced.headers === undefined, 'replaced');
const pasted = ok(await user.POST('/api/v1/users/{userId}/mcp-servers', { ...mcp, body: { mcpServers: { wiki: { url: 'http://127.0.0.1:9/wiki' }, shell: { command: 'not-on-the-allowlist' } } } }), 'paste');
check('refused' in pasted && pasted.added[0]?.name === 'wiki' && pasted.refused[0]?.error_code === 'mcp_server_not_allowed', 'one added, one refused');
for (const name of ['docs', 'wiki']) {
  const removed = ok(await user.DELETE('/api/v1/users/{userId}/mcp-servers/{name}', { params: { path: { userId, name } } }), 'remove ' + name);
  check(removed.deleted === true && removed.name === name, 'removed');
}
const forgotten = ok(await user.DELETE('/api/v1/users/{userId}/memory', mcp), 'clear memory');
check(forgotten.cleared === true, 'memory cleared');

// The OpenAI-compatible API.
const models = ok(await user.GET('/v1/models'), 'models');
check(models.object === 'list' && models.data.some((m) => m.id === 'default'), 'the assistants as models');
check(ok(await user.GET('/v1/models/{id}', { params: { path: { id: 'default' } } }), 'a model').owned_by === 'dataagent', 'one model');
const noModel = await user.GET('/v1/models/{id}', { params: { path: { id: 'nope' } } });
check(noModel.error?.error.code === 'model_not_found', "an unknown model is a typed 404 in OpenAI's shape");
const completion = ok(await user.POST('/v1/chat/completions', { body: { model: 'default', messages: [{ role: 'user', content: 'Hello' }] } }), 'completion');
check(completion.object === 'chat.completion' && completion.choices[0]?.finish_reason === 'stop', 'a whole completion');
facts.completion = completion.choices[0]?.message.content;

// Tenants and keys, by an operator; the key issued works.
const tenant = ok(await operator.POST('/api/v1/admin/tenants', { body: { tenant_id: 'globex', name: 'Globex', max_users: 10, features_enabled: { tools: ['write_todos'] } } }), 'create a tenant');
check(tenant.max_users === 10 && tenant.max_concurrent_runs === null && tenant.features_enabled.tools?.[0] === 'write_todos', 'the tenant as created');
const tenants = ok(await operator.GET('/api/v1/admin/tenants', { params: { query: { limit: 10 } } }), 'list tenants');
check(tenants.tenants.some((t) => t.tenant_id === 'globex'), 'the tenant is listed');
const tenantPath = { params: { path: { tenantId: 'globex' } } };
check(ok(await operator.GET('/api/v1/admin/tenants/{tenantId}', tenantPath), 'one tenant').name === 'Globex', 'one tenant');
const changed = ok(await operator.PUT('/api/v1/admin/tenants/{tenantId}', { ...tenantPath, body: { requests_per_minute: 600, workspace_quota: '1GB', max_users: null } }), 'change a tenant');
check(changed.requests_per_minute === 600 && changed.workspace_quota === 1024 ** 3 && changed.max_users === null, 'the tenant as changed');

const issued = ok(await operator.POST('/api/v1/admin/api-keys', { body: { user_id: 'gina', tenant_id: 'globex', role: 'admin' } }), 'issue a key');
check(issued.key.startsWith(issued.prefix) && issued.expires_at === null, 'the key, shown once');
const keys = ok(await operator.GET('/api/v1/admin/api-keys', { params: { query: { tenant_id: 'globex' } } }), 'list keys');
check(keys.api_keys.some((k) => k.key_id === issued.key_id && k.revoked_at === null && !('key' in k)), 'the key is listed, without the key');
const admin = client({ 'X-API-Key': issued.key });
const gina = ok(await admin.GET('/api/v1/me'), 'the issued key');
check(gina.tenant_id === 'globex' && gina.user_id === 'gina' && gina.role === 'admin', 'the issued key is gina, admin of globex');
const binding = ok(await admin.POST('/api/v1/admin/tool-bindings', { body: { agent_id: 'default', tools: ['docs.*'] } }), 'bind tools');
check(ok(await admin.GET('/api/v1/admin/tool-bindings'), 'bindings').bindings.some((b) => b.binding_id === binding.binding_id && b.agent_id === 'default'), 'the binding is listed');
check(ok(await admin.GET('/api/v1/admin/tool-calls', { params: { query: { limit: 5 } } }), 'tool calls').tool_calls.length === 0, 'no MCP call yet');
check(ok(await admin.DELETE('/api/v1/admin/tool-bindings/{bindingId}', { params: { path: { bindingId: binding.binding_id } } }), 'unbind').deleted === true, 'unbound');
check(ok(await operator.DELETE('/api/v1/admin/api-keys/{keyId}', { params: { path: { keyId: issued.key_id } } }), 'revoke').revoked === true, 'revoked');
const dropped = ok(await operator.DELETE('/api/v1/admin/tenants/{tenantId}', tenantPath), 'delete a tenant');
facts.revokedWithTenant = dropped.revoked_keys;

const deleted = ok(await user.DELETE('/api/v1/sessions/{id}', { params: { path: { id: sessionId } } }), 'delete the session');
check(deleted.deleted === true && deleted.session_id === sessionId, 'deleted');

// What the types refuse, checked by tsc alone (never run).
if (process.env.NEVER === 'run') {
  // @ts-expect-error: a message's role is one of four
  const role: Schemas['MessageView']['role'] = 'robot';
  // @ts-expect-error: a rename needs a title
  await user.PATCH('/api/v1/sessions/{id}', { params: { path: { id: sessionId } }, body: {} });
  // @ts-expect-error: a chat answer has no such field
  void chat.answer;
  void role;
}

await Promise.all(streamsRead);
writeFileSync(out, JSON.stringify({ exchanges, facts }));
`;
