import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fakeToolContext } from '#test/support/fake-tool-context.js';
import { createWebSearchTool } from './web-search.tool.js';

const ctx = fakeToolContext();

describe('web_search tool (against a fake Tavily on 127.0.0.1)', () => {
  let server: Server;
  let endpoint: string;
  const received: { headers: IncomingHttpHeaders; body: Record<string, unknown> }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        const body = JSON.parse(raw) as Record<string, unknown>;
        received.push({ headers: req.headers, body });
        if (req.headers.authorization !== 'Bearer tvly-test-key') return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"detail":{"error":"Unauthorized: missing or invalid API key."}}');
        if (body.query === 'boom') return void res.writeHead(500).end('internal error for key tvly-test-key');
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            query: body.query,
            answer: 'Paris.',
            results: [{ title: 'Paris - Wikipedia', url: 'https://en.wikipedia.org/wiki/Paris', content: 'Paris is the capital of France.', score: 0.98, raw_content: null }],
            response_time: 0.5,
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/search`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('does not exist without an API key', () => {
    expect(createWebSearchTool(undefined)).toBeNull();
    expect(createWebSearchTool('')).toBeNull();
  });

  it('sends the query with the key as a bearer token and returns the results', async () => {
    const tool = createWebSearchTool('tvly-test-key', { endpoint })!;
    const result = await tool.execute({ query: 'capital of France', max_results: 3, topic: 'general' }, ctx);
    expect(received.at(-1)).toMatchObject({ headers: { authorization: 'Bearer tvly-test-key' }, body: { query: 'capital of France', max_results: 3, topic: 'general' } });
    expect(result).toEqual({
      success: true,
      output: {
        query: 'capital of France',
        answer: 'Paris.',
        results: [{ title: 'Paris - Wikipedia', url: 'https://en.wikipedia.org/wiki/Paris', content: 'Paris is the capital of France.', score: 0.98 }],
      },
    });
  });

  it('fails cleanly without leaking the key', async () => {
    const rejected = await createWebSearchTool('tvly-wrong', { endpoint })!.execute({ query: 'x' }, ctx);
    expect(rejected).toMatchObject({ success: false, output: { status_code: 401 } });
    expect(JSON.stringify(rejected)).not.toContain('tvly-wrong');
    const failed = await createWebSearchTool('tvly-test-key', { endpoint })!.execute({ query: 'boom' }, ctx);
    expect(failed).toMatchObject({ success: false, error: expect.stringContaining('HTTP 500') });
    expect(JSON.stringify(failed)).not.toContain('tvly-test-key');
  });
});
