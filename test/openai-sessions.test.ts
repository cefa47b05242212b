import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import { api } from './support/chat-clients.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

/**
 * Sessions of the OpenAI-compatible door: a stateless call (no X-DataAgent-Session) leaves a
 * session that goes DATAAGENT_OPENAI_SESSION_TTL seconds after its run (here 2 s), while a
 * session a client keeps with X-DataAgent-Session stays, as any session does.
 */
describe('OpenAI-compatible sessions', () => {
  let system: TestSystem;
  let client: OpenAI;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 1, env: { DATAAGENT_OPENAI_SESSION_TTL: '2' } });
    client = new OpenAI({ baseURL: `${system.url}/v1`, apiKey: TEST_API_KEY, maxRetries: 0 });
  });
  afterAll(async () => {
    await system?.stop();
  });

  /** The caller's sessions whose title holds `marker`, by the ids their client knows them by. */
  async function listed(marker: string): Promise<string[]> {
    const { body } = await api(system.url, 'GET', '/sessions?limit=1000', { apiKey: TEST_API_KEY });
    // A session the client named shows that name in its metadata (its session_id is the caller's own, scoped one).
    return (body.sessions as Array<{ session_id: string; title: string; metadata: { client_session_id?: string } }>).filter((s) => s.title.includes(marker)).map((s) => s.metadata.client_session_id ?? s.session_id);
  }

  it('does not let stateless calls pile up sessions, and keeps the ones a client continues', async () => {
    const marker = `stateless-${randomUUID()}`;
    const ask = (content: string, session?: string) =>
      client.chat.completions.create({ model: 'default', messages: [{ role: 'user', content }] }, session ? { headers: { 'X-DataAgent-Session': session } } : {}).withResponse();

    const stateless: string[] = [];
    for (let i = 0; i < 4; i++) {
      stateless.push((await ask(`${marker} call ${i}`)).response.headers.get('x-dataagent-session')!);
      // Each call does leave its session, for a while.
      expect(await listed(marker)).toContain(stateless.at(-1));
    }
    // A stateless call's session, continued afterwards by sending its id back: the client keeps it.
    const adopted = (await ask(`${marker} adopted`)).response.headers.get('x-dataagent-session')!;
    await ask(`${marker} adopted, second turn`, adopted);
    // A session the client named from the start.
    const named = `kept-${randomUUID()}`;
    await ask(`${marker} named`, named);
    expect(await listed(marker)).toEqual(expect.arrayContaining([adopted, named]));

    // Every stateless call's session goes soon after its run; the continued ones stay.
    const deadline = Date.now() + 20_000;
    let left = await listed(marker);
    while (stateless.some((id) => left.includes(id)) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      left = await listed(marker);
    }
    expect(new Set(left)).toEqual(new Set([adopted, named]));
    const history = await api(system.url, 'GET', `/sessions/${adopted}/messages`, { apiKey: TEST_API_KEY });
    expect(history.body.messages.filter((m: { role: string }) => m.role === 'user')).toHaveLength(2);
  });
});
