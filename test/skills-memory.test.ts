import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { api } from './support/chat-clients.js';
import { chatToDone } from './support/event-waits.js';
import { rawDirective } from './support/scripted-llm-server.js';
import { OTHER_API_KEY, TEST_API_KEY, TestSystem } from './support/system.js';

describe('skills and memory through the real worker', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 1 });
  });
  afterAll(async () => {
    await system?.stop();
  });

  const chat = (message: string) => chatToDone(system.url, TEST_API_KEY, message);
  const systemPromptOf = (marker: string) => {
    const request = system.llm.requests.find((r) => JSON.stringify(r.body.messages).includes(marker))!;
    return String(request.body.messages![0].content);
  };

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

  it('remembers a note for the user, recalls it in a later session, and forgets it on DELETE', async () => {
    const saved = await chat('[[tool:remember {"note":"Favourite colour is teal"}]] memo-1');
    expect(saved.find((e) => e.event_type === 'tool_result')).toMatchObject({ status: 'success' });
    await chat('memo-2 what do you know?');
    expect(systemPromptOf('memo-2')).toContain('Favourite colour is teal');

    expect((await api(system.url, 'DELETE', '/users/bob/memory', { apiKey: TEST_API_KEY })).status).toBe(404);
    // Another user's runs do not see alice's notes.
    const bob = await api(system.url, 'POST', '/chat', { apiKey: OTHER_API_KEY, body: { message: 'memo-bob' } });
    expect(bob.status).toBe(200);
    expect(systemPromptOf('memo-bob')).not.toContain('teal');

    const cleared = await api(system.url, 'DELETE', '/users/alice/memory', { apiKey: TEST_API_KEY });
    expect(cleared.body).toEqual({ user_id: 'alice', cleared: true });
    await chat('memo-3 and now?');
    expect(systemPromptOf('memo-3')).not.toContain('teal');
  });
});
