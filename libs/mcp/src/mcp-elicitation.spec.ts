import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from '#core/mcp/mcp-config.js';
import { ELICIT_SERVER, elicitRecord, startElicitHttp, type ElicitHttpServer } from '#test/support/mcp-elicit-servers.js';
import { McpConnection, type ElicitationAnswerer } from './mcp-connection.js';

const text = (result: { content?: Array<{ type: string; text?: string }> }) => result.content?.map((c) => c.text).join('') ?? '';
const book = (connection: McpConnection, restaurant: string, onElicitation?: ElicitationAnswerer, timeoutMs = 20_000) =>
  connection.callTool('book_table', { restaurant }, { signal: new AbortController().signal, timeoutMs, ...(onElicitation ? { onElicitation } : {}) });

/** Answers with `content` once `ready` resolves, noting each request it got. */
function answerer(content: Record<string, unknown>, ready: Promise<unknown> = Promise.resolve(), asked: Array<ElicitRequest['params']> = []): ElicitationAnswerer {
  return async (params) => {
    asked.push(params);
    await ready;
    return { action: 'accept', content } as ElicitResult;
  };
}

/**
 * An elicitation reaches the person of the call it is about: the call whose response stream
 * carried it (streamable HTTP), else the only call in flight; with several in flight and nothing
 * to tell them apart, nobody. The time the person takes does not count against the call.
 */
describe('McpConnection elicitation', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'da-mcp-elicit-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  describe('over streamable HTTP', () => {
    let server: ElicitHttpServer;
    let connection: McpConnection;
    beforeAll(async () => {
      server = await startElicitHttp(join(dir, 'http.jsonl'));
      connection = new McpConnection({ name: 'booking', transport: 'streamable-http', url: server.url }, { connectTimeoutMs: 15_000, elicitation: true });
      await connection.connect();
    });
    afterAll(async () => {
      await connection.close();
      await server.stop();
    });

    it('routes each of two concurrent calls’ elicitations to that call’s own answerer', async () => {
      // Neither answers until both questions are out: both calls are in flight, both asking.
      let arrived = 0;
      let release!: () => void;
      const both = new Promise<void>((resolve) => (release = resolve));
      const counted = (content: Record<string, unknown>, asked: Array<ElicitRequest['params']>): ElicitationAnswerer => {
        const answer = answerer(content, both, asked);
        return (params, signal) => {
          if (++arrived === 2) release();
          return answer(params, signal);
        };
      };
      const alice: Array<ElicitRequest['params']> = [];
      const bob: Array<ElicitRequest['params']> = [];
      const [a, b] = await Promise.all([book(connection, 'Chez Alice', counted({ name: 'Alice' }, alice)), book(connection, 'Bob’s Diner', counted({ name: 'Bob', guests: 5 }, bob))]);
      expect(text(a)).toBe('Booked Chez Alice for Alice: 2 guests, inside');
      expect(text(b)).toBe('Booked Bob’s Diner for Bob: 5 guests, inside');
      expect(alice.map((p) => p.message)).toEqual(['Booking a table at Chez Alice: who is coming?']);
      expect(bob.map((p) => p.message)).toEqual(['Booking a table at Bob’s Diner: who is coming?']);
    });

    it('holds the call’s timeout while the person answers', async () => {
      const slow: ElicitationAnswerer = async () => {
        await new Promise((r) => setTimeout(r, 1_200));
        return { action: 'accept', content: { name: 'Slow' } };
      };
      const result = await book(connection, 'Le Lent', slow, 300);
      expect(text(result)).toBe('Booked Le Lent for Slow: 2 guests, inside');
    });
  });

  describe('over stdio', () => {
    let connection: McpConnection;
    const record = () => elicitRecord(join(dir, 'stdio.jsonl'));
    beforeAll(async () => {
      const config: McpServerConfig = { name: 'booking', transport: 'stdio', command: process.execPath, args: [ELICIT_SERVER, 'stdio', '--record', join(dir, 'stdio.jsonl')] };
      connection = new McpConnection(config, { connectTimeoutMs: 15_000, elicitation: true });
      await connection.connect();
    });
    afterAll(() => connection.close());

    it('routes an elicitation to the only call in flight', async () => {
      const result = await book(connection, 'Solo', answerer({ name: 'Sol', seating: 'terrace' }));
      expect(text(result)).toBe('Booked Solo for Sol: 2 guests, terrace');
    });

    it('asks nobody when two calls are in flight and the request names neither', async () => {
      const asked: Array<ElicitRequest['params']> = [];
      const [a, b] = await Promise.all([book(connection, 'One', answerer({ name: 'x' }, undefined, asked)), book(connection, 'Two', answerer({ name: 'y' }, undefined, asked))]);
      expect(asked).toEqual([]);
      for (const result of [a, b]) expect(text(result)).toMatch(/cannot tell whose person to ask/);
      expect(record().elicitations().filter((e) => e.event === 'elicitation_failed')).toHaveLength(2);
    });

    it('refuses an elicitation for a call that brought nobody to ask', async () => {
      const result = await book(connection, 'Nobody');
      expect(text(result)).toMatch(/nobody can be asked in the run that made this call/);
    });
  });
});
