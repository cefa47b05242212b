import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * The official MCP conformance suite (client mode) against the workers' own MCP client and
 * sign-in code: `npm run conformance:mcp`, as a person runs it. Every client scenario passes
 * but those test/conformance/mcp-client-expected-failures.yml names, with the reason.
 */
describe('MCP conformance, client mode', () => {
  it('passes every client scenario of @modelcontextprotocol/conformance but the listed ones', async () => {
    const lines: string[] = [];
    const status = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(process.execPath, ['scripts/mcp-conformance.mjs'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => lines.push(...chunk.split('\n').filter(Boolean)));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => lines.push(...chunk.split('\n').filter(Boolean)));
      child.once('error', reject);
      child.once('exit', resolve);
    });
    console.log(lines.filter((line) => /^[✓~✗]|scenarios pass|unexpected|stale/.test(line)).join('\n'));
    expect({ status, output: lines.join('\n') }).toEqual({ status: 0, output: expect.stringMatching(/\d+ of \d+ scenarios pass/) });
    // Sign-in, scopes, step-up, token endpoint authentication and client credentials are among the passes.
    for (const scenario of ['elicitation-sep1034-client-defaults', 'auth/metadata-default', 'auth/basic-cimd', 'auth/scope-step-up', 'auth/token-endpoint-auth-basic', 'auth/pre-registration', 'auth/client-credentials-jwt']) {
      expect(lines.some((line) => line.startsWith(`✓ ${scenario}:`))).toBe(true);
    }
  }, 900_000);
});
