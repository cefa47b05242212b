import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fakeToolContext } from '#test/support/fake-tool-context.js';
import { createFetchUrlTool, htmlToMarkdown } from './fetch-url.tool.js';

const ctx = fakeToolContext();

const PAGE = `<!doctype html><html><head><title>Quarterly &amp; more</title><style>body{color:red}</style>
<script>alert('x')</script></head><body><h1>Report</h1><p>Revenue grew <strong>12%</strong>.</p>
<ul><li>North</li><li>South</li></ul><p><a href="https://example.com/more">More</a></p><pre><code>SELECT 1;</code></pre></body></html>`;

describe('fetch_url tool', () => {
  let server: Server;
  let port: number;

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/page') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
      else if (req.url === '/plain') res.writeHead(200, { 'content-type': 'text/plain' }).end('just text');
      else res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(10));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('turns HTML into Markdown without scripts or styles', () => {
    const { title, markdown } = htmlToMarkdown(PAGE);
    expect(title).toBe('Quarterly & more');
    expect(markdown).toContain('# Report');
    expect(markdown).toContain('Revenue grew **12%**.');
    expect(markdown).toMatch(/-\s+North/);
    expect(markdown).toContain('[More](https://example.com/more)');
    expect(markdown).toContain('```\nSELECT 1;\n```');
    expect(markdown).not.toContain('alert');
    expect(markdown).not.toContain('color:red');
  });

  it('fetches an allowlisted local page as Markdown, cut at max_chars', async () => {
    const tool = createFetchUrlTool({ allowlist: [`127.0.0.1:${port}`] });
    const result = await tool.execute({ url: `http://127.0.0.1:${port}/page` }, ctx);
    expect(result).toMatchObject({ success: true, output: { status_code: 200, title: 'Quarterly & more', content: expect.stringContaining('# Report') } });
    const cut = await tool.execute({ url: `http://127.0.0.1:${port}/page`, max_chars: 100 }, ctx);
    expect(cut.output).toMatchObject({ truncated: true });
    expect(await tool.execute({ url: `http://127.0.0.1:${port}/plain` }, ctx)).toMatchObject({ success: true, output: { content: 'just text' } });
    expect(await tool.execute({ url: `http://127.0.0.1:${port}/image` }, ctx)).toMatchObject({ success: false, error: expect.stringContaining('image/png') });
  });

  it('refuses internal addresses that are not allowlisted', async () => {
    const result = await createFetchUrlTool().execute({ url: `http://127.0.0.1:${port}/page` }, ctx);
    expect(result).toMatchObject({ success: false, output: { error_code: 'refused' } });
  });
});
