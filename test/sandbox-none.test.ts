import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { api } from './support/chat-clients.js';
import { chatToDone, waitUntil } from './support/event-waits.js';
import { TestSystem } from './support/system.js';

const PROBE_SERVER = fileURLToPath(new URL('./support/mcp-probe-server.mjs', import.meta.url)).replace('/dist/test/', '/test/');
const ALICE = 'test-key-acme-alice';
const KEYS = `${ALICE}:acme:alice`;

/**
 * A multi-tenant worker with no sandbox (DATAAGENT_SANDBOX=none) would run users' processes as
 * itself: it refuses to start with the shell tool on, and refuses skill scripts and users' stdio
 * servers, saying why, while plain chats go on.
 */
describe('multi-tenant mode without a sandbox', () => {
  let system: TestSystem;
  let dir: string;
  const env = () => ({
    DATAAGENT_MULTI_TENANT: 'true',
    DATAAGENT_SANDBOX: 'none',
    DATAAGENT_API_KEYS: KEYS,
    DATAAGENT_SKILLS_DIR: join(dir, 'skills'),
    DATAAGENT_MCP_STDIO_ALLOW: JSON.stringify([{ command: process.execPath, args: [PROBE_SERVER] }]),
  });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'da-sandbox-none-'));
    const skill = join(dir, 'skills', 'probe');
    mkdirSync(join(skill, 'scripts'), { recursive: true });
    writeFileSync(join(skill, 'SKILL.md'), '---\nname: probe\ndescription: Prints who it runs as.\n---\nRun `run.sh`.\n');
    writeFileSync(join(skill, 'scripts', 'run.sh'), '#!/bin/sh\nid -u\n');
    chmodSync(join(skill, 'scripts', 'run.sh'), 0o755);
    system = await TestSystem.start({ env: env() });
  });

  afterAll(async () => {
    await system?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a worker with the shell tool on refuses to start, and says why', async () => {
    await expect(system.addWorker({ DATAAGENT_SHELL_ENABLED: 'true' })).rejects.toThrow(/exited with 2[\s\S]*DATAAGENT_SHELL_ENABLED=true in multi-tenant mode needs the sandbox/);
  });

  it('refuses a skill script with the reason, and the run ends as usual', async () => {
    const events = await chatToDone(system.url, ALICE, `[[tool:run_skill ${JSON.stringify({ name: 'probe', script: 'run.sh' })}]]`);
    const result = events.find((e) => e.event_type === 'tool_result')!;
    expect(result.status).toBe('error');
    expect(JSON.stringify(result.result)).toContain('skill scripts run only in the sandbox in multi-tenant mode');
    expect(events.at(-1)).toMatchObject({ event_type: 'done', cancelled: false });
  });

  it("leaves a user's stdio server unconnected, its status saying why", async () => {
    const added = await api(system.url, 'POST', '/users/alice/mcp-servers', { apiKey: ALICE, body: { name: 'mine', command: process.execPath, args: [PROBE_SERVER] } });
    expect(added.status).toBe(201);
    await chatToDone(system.url, ALICE, 'hello');
    let server: { status?: string; last_error?: string | null } | undefined;
    await waitUntil(async () => {
      server = (await api(system.url, 'GET', '/users/alice/mcp-servers', { apiKey: ALICE })).body.servers.find((s: { name: string }) => s.name === 'mine');
      return server?.status === 'error';
    });
    expect(server!.last_error).toMatch(/stdio servers of users run only in the sandbox in multi-tenant mode, and this worker has none \(DATAAGENT_SANDBOX=none\)/);
  });
});
