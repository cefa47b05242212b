import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api } from './support/chat-clients.js';
import { chatToDone } from './support/event-waits.js';
import { rawDirective } from './support/scripted-llm-server.js';
import { OTHER_API_KEY, TEST_API_KEY, TestSystem } from './support/system.js';

const ACME_ADMIN = 'test-key-carol-admin';
const GLOBEX_ALICE = 'test-key-globex-alice';
const GLOBEX_ADMIN = 'test-key-globex-dave';
const DAY = 24 * 60 * 60 * 1000;

describe('skills and memory through the real worker', () => {
  let system: TestSystem;
  /** The worker's DATAAGENT_STORAGE_ROOT: not the gateway's, as with pods that share no disk. */
  let workerRoot: string;
  const carolNotes = () => join(workerRoot, 'tenants', 'acme', 'memories', 'carol', 'default');

  beforeAll(async () => {
    workerRoot = mkdtempSync(join(tmpdir(), 'da-worker-root-'));
    // Notes an earlier version kept on the worker's disk (one JSON file each), a recent one and an expired one.
    mkdirSync(carolNotes(), { recursive: true });
    for (const [seq, text, age] of [[1, 'Carol reports in euros', 3 * DAY], [2, 'Carol note past retention', 100 * DAY]] as const) {
      const at = Date.now() - age;
      const id = `${String(at).padStart(15, '0')}-${String(seq).padStart(6, '0')}-0000abcd`;
      writeFileSync(join(carolNotes(), `${id}.json`), JSON.stringify({ id, text, createdAt: new Date(at).toISOString() }));
    }
    system = await TestSystem.start({
      workers: [{ DATAAGENT_STORAGE_ROOT: workerRoot }],
      env: { DATAAGENT_API_KEYS: `${TEST_API_KEY}:acme:alice,${OTHER_API_KEY}:acme:bob,${ACME_ADMIN}:acme:carol:admin,${GLOBEX_ALICE}:globex:alice,${GLOBEX_ADMIN}:globex:dave:admin` },
    });
  });
  afterAll(async () => {
    await system?.stop();
    if (workerRoot) rmSync(workerRoot, { recursive: true, force: true });
  });

  const chat = (message: string, apiKey = TEST_API_KEY) => chatToDone(system.url, apiKey, message);
  const systemPromptOf = (marker: string) => {
    const request = system.llm.requests.find((r) => JSON.stringify(r.body.messages).includes(marker))!;
    return String(request.body.messages![0].content);
  };
  const remember = async (apiKey: string, note: string, marker: string) => {
    const run = await chat(`[[tool:remember ${JSON.stringify({ note })}]] ${marker}`, apiKey);
    expect(run.find((e) => e.event_type === 'tool_result')).toMatchObject({ status: 'success' });
  };
  const clear = (apiKey: string, userId: string) => api(system.url, 'DELETE', `/users/${userId}/memory`, { apiKey });

  it('lists skills in the prompt and runs a skill script in the user’s workspace', async () => {
    const files = join(system.dataDir, 'workspaces', 'acme', 'alice', 'files');
    mkdirSync(files, { recursive: true });
    writeFileSync(join(files, 'notes.txt'), 'one two three\nfour five\n');
    const run = await chat(
      `skill-run ${rawDirective(['<tool_action name="run_skill"><name value="text-stats" /><script value="stats.sh" /><args value=\'["files/notes.txt"]\' /></tool_action>'])}`,
    );
    expect(systemPromptOf('skill-run')).toContain('text-stats');
    const result = run.find((e) => e.event_type === 'tool_result')!;
    expect(result.status).toBe('success');
    expect(JSON.stringify(result.result)).toContain('lines=2 words=5');
  });

  it('remembers a note in one run and recalls it in a later one; a DELETE on the gateway, which shares no disk with the worker, forgets it', async () => {
    await remember(TEST_API_KEY, 'Favourite colour is teal', 'memo-1');
    await chat('memo-2 what do you know?');
    expect(systemPromptOf('memo-2')).toContain('Favourite colour is teal');
    // Kept in the database, not on either process's disk.
    expect(existsSync(join(workerRoot, 'tenants', 'acme', 'memories', 'alice'))).toBe(false);
    expect(existsSync(join(system.dataDir, 'tenants'))).toBe(false);

    expect((await clear(TEST_API_KEY, 'bob')).status).toBe(404);
    // Another user's runs do not see alice's notes.
    const bob = await api(system.url, 'POST', '/chat', { apiKey: OTHER_API_KEY, body: { message: 'memo-bob' } });
    expect(bob.status).toBe(200);
    expect(systemPromptOf('memo-bob')).not.toContain('teal');

    const cleared = await clear(TEST_API_KEY, 'alice');
    expect(cleared.body).toEqual({ user_id: 'alice', cleared: true });
    await chat('memo-3 and now?');
    expect(systemPromptOf('memo-3')).not.toContain('teal');
    expect(systemPromptOf('memo-3')).toContain('no saved notes');
  });

  it("keeps acme's alice and globex's alice apart, in recall and in DELETE", async () => {
    await remember(TEST_API_KEY, 'Acme alice ships on Fridays', 'memo-acme-1');
    await remember(GLOBEX_ALICE, 'Globex alice prefers green', 'memo-globex-1');
    await chat('memo-acme-2');
    await chat('memo-globex-2', GLOBEX_ALICE);
    expect(systemPromptOf('memo-acme-2')).toContain('Acme alice ships on Fridays');
    expect(systemPromptOf('memo-acme-2')).not.toContain('Globex alice');
    expect(systemPromptOf('memo-globex-2')).toContain('Globex alice prefers green');
    expect(systemPromptOf('memo-globex-2')).not.toContain('Acme alice');

    // globex's admin reaches globex's alice only.
    expect((await clear(GLOBEX_ADMIN, 'alice')).status).toBe(200);
    await chat('memo-acme-3');
    await chat('memo-globex-3', GLOBEX_ALICE);
    expect(systemPromptOf('memo-acme-3')).toContain('Acme alice ships on Fridays');
    expect(systemPromptOf('memo-globex-3')).not.toContain('Globex alice prefers green');
  });

  it("lets an admin clear another user's memory in their own tenant", async () => {
    await remember(OTHER_API_KEY, 'Bob likes bar charts', 'memo-bob-1');
    expect((await clear(ACME_ADMIN, 'bob')).body).toEqual({ user_id: 'bob', cleared: true });
    await chat('memo-bob-2', OTHER_API_KEY);
    expect(systemPromptOf('memo-bob-2')).not.toContain('bar charts');
  });

  it("moves notes an earlier version kept on the worker's disk into the database when the worker starts", async () => {
    await chat('memo-carol', ACME_ADMIN);
    expect(systemPromptOf('memo-carol')).toContain('Carol reports in euros');
    expect(systemPromptOf('memo-carol')).not.toContain('past retention');
    expect(readdirSync(join(workerRoot, 'tenants', 'acme', 'memories'))).toEqual([]);
  });
});
