import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import WebSocket from 'ws';
import type { EventDict } from '#core/events/execution-event.js';
import type { UserEvent } from '#transport/user-event-bus.js';
import { GLOBAL_MCP_OWNER } from '#core/mcp/mcp-catalog-store.js';
import { redisKeys } from '#transport/redis-keys.js';
import type { GatewayProcess } from './support/app-processes.js';
import { api, connectChat, type HttpAnswer } from './support/chat-clients.js';
import { EventCollector } from './support/event-waits.js';
import { OTHER_API_KEY, TEST_API_KEY, TestSystem } from './support/system.js';

const ALICE = TEST_API_KEY; // acme:alice
const BOB = OTHER_API_KEY; // acme:bob
const ACME_ADMIN = 'test-key-acme-admin';
const GLOBEX_ADMIN = 'test-key-globex-admin';

/** Values that must never come back from the API nor reach a log. */
const SECRETS = ['Bearer tok-3b7f9e1c-alice', 'Bearer tok-rotated-5d2a', 'env-secret-8c41e6', 'bob-token-77aa'];

const remote = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  url: 'http://127.0.0.1:9/mcp',
  headers: { Authorization: SECRETS[0] },
  timeout_ms: 20_000,
  description: 'Issues and pull requests',
  trigger_keywords: ['issue', 'pull request'],
  ...extra,
});

describe('per-user MCP servers API', () => {
  let system: TestSystem;
  /** A second gateway, without DATAAGENT_SECRET_KEY: user events reach sockets on every gateway. */
  let keyless: GatewayProcess;
  let redis: Redis;
  /** Every answer's raw text, checked for secrets at the end. */
  const answers: string[] = [];

  const call = async (method: string, path: string, apiKey: string, body?: unknown, base = system.url): Promise<HttpAnswer> => {
    const answer = await api(base, method, path, { apiKey, body });
    answers.push(JSON.stringify(answer.body));
    return answer;
  };
  const servers = (user: string, key: string) => call('GET', `/users/${user}/mcp-servers`, key);

  /** The stdio programs the operator allows, on disk (the allowlist matches real paths): never run here. */
  let tools: string;

  beforeAll(async () => {
    tools = mkdtempSync(join(tmpdir(), 'da-mcp-api-'));
    for (const dir of ['bin', 'mcp']) mkdirSync(join(tools, dir));
    for (const file of ['bin/mcp-server-everything', 'mcp/weather']) {
      writeFileSync(join(tools, file), '#!/bin/sh\n');
      chmodSync(join(tools, file), 0o755);
    }
    system = await TestSystem.start({
      workers: 0,
      env: {
        DATAAGENT_API_KEYS: `${ALICE}:acme:alice,${BOB}:acme:bob,${ACME_ADMIN}:acme:carol:admin,${GLOBEX_ADMIN}:globex:dave:admin`,
        DATAAGENT_MCP_MAX_SERVERS_PER_USER: '3',
        DATAAGENT_MCP_STDIO_ALLOW: `mcp-server-everything env=API_KEY,${tools}/mcp/*`,
        PATH: `${tools}/bin:${process.env.PATH}`,
        DATAAGENT_OUTBOUND_ALLOWLIST: '127.0.0.1',
        DATAAGENT_LOG_LEVEL: 'debug',
      },
      extraGateways: [{ DATAAGENT_SECRET_KEY: '', DATAAGENT_LOG_LEVEL: 'debug' }],
    });
    keyless = system.extraGateways[0]!;
    redis = new Redis(process.env.DATAAGENT_REDIS_URL!);
    // Statuses other test files' workers left in the shared Redis (no worker runs here).
    for (const user of ['alice', 'bob']) await redis.del(redisKeys.mcpStatus('acme', user));
    await redis.del(redisKeys.mcpStatus(GLOBAL_MCP_OWNER.tenantId, GLOBAL_MCP_OWNER.userId));
  });

  afterAll(async () => {
    redis?.disconnect();
    await system?.stop();
    if (tools) rmSync(tools, { recursive: true, force: true });
  });

  afterEach(async () => {
    for (const [user, key] of [['alice', ALICE], ['bob', BOB]] as const) {
      for (const s of (await servers(user, key)).body.servers) await call('DELETE', `/users/${user}/mcp-servers/${s.name}`, key);
    }
  });

  it('creates, lists, replaces and deletes a user\'s server, its secrets masked', async () => {
    const created = await call('POST', '/users/alice/mcp-servers', ALICE, remote('github'));
    expect(created.status).toBe(201);
    const view = {
      name: 'github',
      transport: 'streamable-http',
      url: 'http://127.0.0.1:9/mcp',
      headers: { Authorization: '***' },
      timeout_ms: 20_000,
      disabled: false,
      description: 'Issues and pull requests',
      trigger_keywords: ['issue', 'pull request'],
      status: 'unknown',
      last_error: null,
      tool_count: null,
      last_check: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    };
    expect(created.body).toEqual(view);
    expect((await servers('alice', ALICE)).body).toEqual({ servers: [view], global_servers: [], max_servers: 3 });

    const replaced = await call('PUT', '/users/alice/mcp-servers/github', ALICE, { url: 'http://127.0.0.1:9/sse', headers: { Authorization: SECRETS[1], 'X-Org': 'acme' }, disabled: true });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toEqual({ name: 'github', transport: 'sse', url: 'http://127.0.0.1:9/sse', headers: { Authorization: '***', 'X-Org': '***' }, disabled: true, status: 'unknown', last_error: null, tool_count: null, last_check: null, created_at: created.body.created_at, updated_at: expect.any(String) });
    expect((await servers('alice', ALICE)).body.servers).toEqual([replaced.body]);

    expect(await call('DELETE', '/users/alice/mcp-servers/github', ALICE)).toMatchObject({ status: 200, body: { name: 'github', deleted: true } });
    expect(await call('DELETE', '/users/alice/mcp-servers/github', ALICE)).toMatchObject({ status: 404, body: { error_code: 'mcp_server_not_found' } });
    expect(await call('PUT', '/users/alice/mcp-servers/github', ALICE, remote('github'))).toMatchObject({ status: 404, body: { error_code: 'mcp_server_not_found' } });
    expect((await servers('alice', ALICE)).body.servers).toEqual([]);
  });

  it('answers 409 for a name the user has, and lets another user have it', async () => {
    expect((await call('POST', '/users/alice/mcp-servers', ALICE, remote('github'))).status).toBe(201);
    expect(await call('POST', '/users/alice/mcp-servers', ALICE, remote('github'))).toMatchObject({ status: 409, body: { error_code: 'mcp_server_exists', details: { server_name: 'github' } } });
    expect((await call('POST', '/users/bob/mcp-servers', BOB, remote('github', { headers: { Authorization: SECRETS[3] } }))).status).toBe(201);
  });

  it('answers 404 for another user\'s servers, and lets an admin of their tenant only manage them', async () => {
    await call('POST', '/users/alice/mcp-servers', ALICE, remote('github'));
    for (const [method, path, body] of [
      ['GET', '/users/alice/mcp-servers', undefined],
      ['POST', '/users/alice/mcp-servers', remote('planted')],
      ['PUT', '/users/alice/mcp-servers/github', remote('github')],
      ['DELETE', '/users/alice/mcp-servers/github', undefined],
    ] as const) {
      expect(await call(method, path, BOB, body)).toMatchObject({ status: 404, body: { error_code: 'user_not_found', details: { user_id: 'alice' } } });
    }
    expect((await servers('bob', BOB)).body.servers).toEqual([]);
    expect((await servers('alice', ALICE)).body.servers.map((s: { name: string }) => s.name)).toEqual(['github']);

    // An admin of acme manages alice's servers; an admin of another tenant reaches a different alice.
    expect((await servers('alice', ACME_ADMIN)).body.servers.map((s: { name: string }) => s.name)).toEqual(['github']);
    expect((await call('POST', '/users/alice/mcp-servers', ACME_ADMIN, remote('jira'))).status).toBe(201);
    expect((await call('DELETE', '/users/alice/mcp-servers/github', ACME_ADMIN)).status).toBe(200);
    expect((await servers('alice', GLOBEX_ADMIN)).body.servers).toEqual([]);
    expect((await call('DELETE', '/users/alice/mcp-servers/jira', GLOBEX_ADMIN)).status).toBe(404);
    expect((await servers('alice', ALICE)).body.servers.map((s: { name: string }) => s.name)).toEqual(['jira']);
  });

  it('answers 422 naming each bad field', async () => {
    const fieldsOf = async (body: unknown, path = '/users/alice/mcp-servers', method = 'POST') => {
      const answer = await call(method, path, ALICE, body);
      expect(answer.status).toBe(422);
      expect(answer.body.error_code).toBe('validation_failed');
      return Object.keys(answer.body.details.fields).sort();
    };
    expect(await fieldsOf(remote('has space'))).toEqual(['name']);
    expect(await fieldsOf(remote('a__b'))).toEqual(['name']);
    expect(await fieldsOf({ name: 'local', transport: 'stdio', args: ['x'] })).toEqual(['command']);
    expect(await fieldsOf(remote('files', { url: 'ftp://127.0.0.1/files' }))).toEqual(['url']);
    expect(await fieldsOf({ name: '', transport: 'carrier-pigeon', timeout_ms: 5, trigger_keywords: 'x' })).toEqual(['name', 'timeout_ms', 'transport', 'trigger_keywords']);
    expect(await fieldsOf(remote('hdr', { headers: { Authorization: 42 } }))).toEqual(['headers.Authorization']);
    expect(await fieldsOf([remote('array')])).toEqual(['body']);

    await call('POST', '/users/alice/mcp-servers', ALICE, remote('github'));
    expect(await fieldsOf(remote('gitlab'), '/users/alice/mcp-servers/github', 'PUT')).toEqual(['name']);
  });

  it('refuses a private or loopback URL that is not allowlisted, with a 422 on url', async () => {
    for (const url of ['http://10.0.0.1/mcp', 'http://169.254.169.254/latest', 'http://127.0.0.2:9/mcp', 'http://[::1]:9/mcp', 'http://2130706434/mcp']) {
      const answer = await call('POST', '/users/alice/mcp-servers', ALICE, remote('internal', { url }));
      expect(answer).toMatchObject({ status: 422, body: { error_code: 'validation_failed', details: { fields: { url: [expect.stringContaining('not allowlisted')] } } } });
    }
    expect((await servers('alice', ALICE)).body.servers).toEqual([]);
  });

  it('answers 429 mcp_server_limit past DATAAGENT_MCP_MAX_SERVERS_PER_USER', async () => {
    for (const name of ['one', 'two', 'three']) expect((await call('POST', '/users/alice/mcp-servers', ALICE, remote(name))).status).toBe(201);
    const over = await call('POST', '/users/alice/mcp-servers', ALICE, remote('four'));
    expect(over).toMatchObject({ status: 429, body: { error_code: 'mcp_server_limit', details: { limit: 'mcp_servers_per_user', max: 3 } } });
    expect(over.headers.get('retry-after')).toBe('60');
    expect((await call('POST', '/users/bob/mcp-servers', BOB, remote('four'))).status).toBe(201);
  });

  it('runs only allowlisted stdio commands: 403 with the reason otherwise', async () => {
    const refused = await call('POST', '/users/alice/mcp-servers', ALICE, { name: 'shell', command: 'bash', args: ['-c', 'id'] });
    expect(refused).toMatchObject({ status: 403, body: { error_code: 'mcp_server_not_allowed', message: expect.stringContaining('"bash" is not on the operator\'s allowlist (DATAAGENT_MCP_STDIO_ALLOW)'), details: { field: 'command' } } });
    expect(await call('POST', '/users/alice/mcp-servers', ALICE, { name: 'sneaky', command: 'mcp-server-everything', env: { NODE_OPTIONS: '--require /tmp/x.js' } })).toMatchObject({ status: 403, body: { details: { field: 'env.NODE_OPTIONS' } } });

    const everything = await call('POST', '/users/alice/mcp-servers', ALICE, { name: 'everything', command: 'mcp-server-everything', args: ['stdio'], env: { API_KEY: SECRETS[2] } });
    expect(everything).toMatchObject({ status: 201, body: { name: 'everything', transport: 'stdio', command: 'mcp-server-everything', args: ['stdio'], env: { API_KEY: '***' } } });
    expect((await call('POST', '/users/alice/mcp-servers', ALICE, { name: 'weather', command: join(tools, 'mcp', 'weather') })).status).toBe(201);
    expect((await servers('alice', ALICE)).body.servers.map((s: { name: string }) => s.name)).toEqual(['everything', 'weather']);
  });

  it('shows each server\'s status as workers reported it in Redis, and forgets it when the server changes', async () => {
    await call('POST', '/users/alice/mcp-servers', ALICE, remote('github'));
    await call('POST', '/users/alice/mcp-servers', ALICE, remote('jira'));
    await call('POST', '/users/alice/mcp-servers', ALICE, remote('wiki'));
    const at = new Date().toISOString();
    await redis.hset(redisKeys.mcpStatus('acme', 'alice'), {
      github: JSON.stringify({ status: 'connected', last_error: null, tool_count: 12, last_check: at, worker_id: 'worker-7' }),
      jira: JSON.stringify({ status: 'error', last_error: '401 Unauthorized', tool_count: 0, last_check: at, worker_id: 'worker-7' }),
      wiki: 'not json',
    });
    const statuses = (await servers('alice', ALICE)).body.servers.map((s: Record<string, unknown>) => [s.name, s.status, s.last_error, s.tool_count, s.last_check]);
    expect(statuses).toEqual([
      ['github', 'connected', null, 12, at],
      ['jira', 'error', '401 Unauthorized', 0, at],
      ['wiki', 'unknown', null, null, null],
    ]);
    // Bob's servers of the same names have no status of alice's.
    await call('POST', '/users/bob/mcp-servers', BOB, remote('github'));
    expect((await servers('bob', BOB)).body.servers[0].status).toBe('unknown');

    const version = Number(await redis.get(redisKeys.mcpConfigVersion('acme', 'alice')));
    await call('PUT', '/users/alice/mcp-servers/github', ALICE, remote('github', { timeout_ms: 5_000 }));
    expect(Number(await redis.get(redisKeys.mcpConfigVersion('acme', 'alice')))).toBe(version + 1);
    expect((await servers('alice', ALICE)).body.servers.find((s: { name: string }) => s.name === 'github').status).toBe('unknown');
    await call('DELETE', '/users/alice/mcp-servers/jira', ALICE);
    expect(Number(await redis.get(redisKeys.mcpConfigVersion('acme', 'alice')))).toBe(version + 2);
    expect(await redis.hkeys(redisKeys.mcpStatus('acme', 'alice'))).toEqual(['wiki']);
  });

  it('sends mcp_config_changed to the user\'s open sockets on every gateway, and to nobody else', async () => {
    const aliceIo = await connectChat(keyless.url, ALICE);
    const bobIo = await connectChat(system.url, BOB);
    const session = await call('POST', '/sessions', ALICE, {});
    const aliceWs = new WebSocket(`${system.url.replace('http', 'ws')}/ws/chat/${session.body.session_id}`, { headers: { 'x-api-key': ALICE } });
    const changed = (e: EventDict) => (e.event_type as string) === 'mcp_config_changed';
    const wsChanges = new Promise<EventDict[]>((resolve) => {
      const seen: EventDict[] = [];
      aliceWs.on('message', (data) => {
        const event = JSON.parse(data.toString()) as EventDict;
        if (changed(event) && seen.push(event) === 3) resolve(seen);
      });
    });
    await new Promise((resolve, reject) => aliceWs.once('open', resolve).once('error', reject));
    const aliceEvents = new EventCollector(aliceIo);
    const bobEvents = new EventCollector(bobIo);
    try {
      await call('POST', '/users/alice/mcp-servers', ALICE, remote('github'));
      await call('PUT', '/users/alice/mcp-servers/github', ACME_ADMIN, remote('github', { disabled: true }));
      await call('DELETE', '/users/alice/mcp-servers/github', ALICE);
      // User events reach the socket beside run events; the collector types only the latter.
      await aliceEvents.next((e) => changed(e) && (e as unknown as UserEvent).change === 'deleted');
      const expected = (change: string) => ({ event_type: 'mcp_config_changed', server_name: 'github', change, timestamp: expect.any(String), session_id: '', run_id: '', seq: 0 });
      expect(aliceEvents.events.filter(changed)).toEqual(['created', 'updated', 'deleted'].map(expected));
      expect(await wsChanges).toEqual(['created', 'updated', 'deleted'].map(expected));

      // Events travel in publish order: bob's own change arriving first shows alice's never came.
      await call('POST', '/users/bob/mcp-servers', BOB, remote('bobs', { headers: { Authorization: SECRETS[3] } }));
      await bobEvents.next(changed);
      expect(bobEvents.events.filter(changed)).toEqual([expect.objectContaining({ server_name: 'bobs', change: 'created' })]);
    } finally {
      aliceIo.disconnect();
      bobIo.disconnect();
      aliceWs.close();
    }
  });

  it('without DATAAGENT_SECRET_KEY, refuses to store secrets, naming each field, and shows stored ones as unreadable', async () => {
    const refused = await call('POST', '/users/alice/mcp-servers', ALICE, remote('github', { headers: { Authorization: SECRETS[0], 'X-Org': 'acme' } }), keyless.url);
    expect(refused).toMatchObject({
      status: 422,
      body: { error_code: 'secret_key_required', details: { fields: { 'headers.Authorization': [expect.stringContaining('DATAAGENT_SECRET_KEY')], 'headers.X-Org': [expect.any(String)] } } },
    });
    expect((await call('POST', '/users/alice/mcp-servers', ALICE, remote('public', { headers: undefined }), keyless.url)).status).toBe(201);

    await call('POST', '/users/alice/mcp-servers', ALICE, remote('github'));
    const listed = (await call('GET', '/users/alice/mcp-servers', ALICE, undefined, keyless.url)).body.servers;
    expect(listed.find((s: { name: string }) => s.name === 'github')).toMatchObject({ headers: { Authorization: '***' }, unreadable_secrets: ['headers.Authorization'] });
    expect(listed.find((s: { name: string }) => s.name === 'public').unreadable_secrets).toBeUndefined();
  });

  it('never returns or logs a secret value', () => {
    expect(answers.length).toBeGreaterThan(50);
    const logs = [...system.gateway.output, ...keyless.output].join('\n');
    expect(logs).toContain('mcp-servers'); // the request log is there to look at
    for (const secret of SECRETS) {
      for (const text of answers) expect(text).not.toContain(secret);
      expect(logs).not.toContain(secret);
    }
  });
});
