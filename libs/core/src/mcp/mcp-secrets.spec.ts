import { randomBytes } from 'node:crypto';
import { SecretCipher } from '../secrets/secret-cipher.js';
import type { McpServerConfig } from './mcp-config.js';
import { openMcpSecrets, sealMcpSecrets, SecretKeyRequiredError, secretFields } from './mcp-secrets.js';

const alice = { tenantId: 'acme', userId: 'alice' };
const server: McpServerConfig = {
  name: 'github',
  transport: 'streamable-http',
  url: 'https://api.example/mcp',
  headers: { Authorization: 'Bearer s3cr3t', 'X-Org': 'acme-org' },
  description: 'not secret',
};

describe('MCP server secrets', () => {
  const cipher = new SecretCipher(randomBytes(32));

  it('seals every header and env value, nothing else, and opens them for the same owner', () => {
    const sealed = sealMcpSecrets(alice, server, cipher);
    expect(sealed).toEqual({ ...server, headers: { Authorization: expect.stringMatching(/^v1\./), 'X-Org': expect.stringMatching(/^v1\./) } });
    expect(JSON.stringify(sealed)).not.toMatch(/s3cr3t|acme-org/);
    expect(openMcpSecrets(alice, sealed, cipher)).toEqual({ config: server, unreadable: [] });
    expect(server.headers!.Authorization).toBe('Bearer s3cr3t');
  });

  it('opens nothing for another owner or under another server name', () => {
    const sealed = sealMcpSecrets(alice, server, cipher);
    expect(openMcpSecrets({ tenantId: 'acme', userId: 'bob' }, sealed, cipher).unreadable).toEqual(['headers.Authorization', 'headers.X-Org']);
    expect(openMcpSecrets({ tenantId: 'other', userId: 'alice' }, sealed, cipher).unreadable).toHaveLength(2);
    expect(openMcpSecrets(alice, { ...sealed, name: 'gitlab' }, cipher)).toEqual({
      config: { ...server, name: 'gitlab', headers: { Authorization: '', 'X-Org': '' } },
      unreadable: ['headers.Authorization', 'headers.X-Org'],
    });
  });

  it('without a key, refuses secret values by field and passes a server without any', () => {
    const stdio: McpServerConfig = { name: 'files', transport: 'stdio', command: 'mcp-files', env: { TOKEN: 't' } };
    expect(secretFields({ ...stdio, headers: { A: 'x' } })).toEqual(['env.TOKEN', 'headers.A']);
    expect(() => sealMcpSecrets(alice, stdio, undefined)).toThrow(SecretKeyRequiredError);
    expect(() => sealMcpSecrets(alice, stdio, undefined)).toThrow(/env\.TOKEN.*DATAAGENT_SECRET_KEY/);
    const plain: McpServerConfig = { name: 'files', transport: 'stdio', command: 'mcp-files', env: {} };
    expect(sealMcpSecrets(alice, plain, undefined)).toEqual(plain);
    expect(openMcpSecrets(alice, sealMcpSecrets(alice, stdio, cipher), undefined).unreadable).toEqual(['env.TOKEN']);
  });
});
