import { emptyForm, formToServer, FormInputError, parseExample, pasteOutcome, readPastedConfig } from './mcp-form.js';

describe('the MCP form', () => {
  it('fills in a stdio server from a Claude Desktop configuration, and names the others', () => {
    const { form, names } = parseExample(
      JSON.stringify({
        mcpServers: {
          git: { command: 'mcp-server-git', args: ['--repository', '/srv/repo'], env: { GIT_TOKEN: 't=1' } },
          web: { url: 'https://mcp.example.com/mcp' },
        },
      }),
    );
    expect(names).toEqual(['git', 'web']);
    expect(form).toEqual({ ...emptyForm(), name: 'git', kind: 'stdio', command: 'mcp-server-git', args: '--repository\n/srv/repo', env: 'GIT_TOKEN=t=1' });
    expect(formToServer(form)).toEqual({ name: 'git', command: 'mcp-server-git', args: ['--repository', '/srv/repo'], env: { GIT_TOKEN: 't=1' } });
  });

  it('fills in a remote server with its headers, and sends only the remote fields', () => {
    const { form } = parseExample('{"mcpServers": {"github": {"url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer x:y"}}}}');
    expect(form).toMatchObject({ name: 'github', kind: 'remote', url: 'https://api.githubcopilot.com/mcp/', headers: 'Authorization: Bearer x:y' });
    const body = formToServer({ ...form, command: 'ignored', description: ' Code search ', keywords: 'issue, pull request,' });
    expect(body).toEqual({ name: 'github', url: 'https://api.githubcopilot.com/mcp/', headers: { Authorization: 'Bearer x:y' }, description: 'Code search', trigger_keywords: ['issue', 'pull request'] });
  });

  it('explains an example it cannot read', () => {
    expect(() => parseExample('{not json')).toThrow(/not valid JSON/);
    expect(() => parseExample('{"servers": []}')).toThrow(/mcpServers/);
    expect(() => parseExample('{"mcpServers": {"x": {"cwd": "/"}}}')).toThrow(/"command".*"url"/);
  });

  it('names the field of an env or header line without a separator', () => {
    const bad = () => formToServer({ ...emptyForm(), name: 'x', command: 'y', env: 'GOOD=1\nBAD' });
    expect(bad).toThrow(FormInputError);
    expect(bad).toThrow('env line 2 should read KEY=value');
  });

  it('sends a pasted configuration as it is, and explains text that is not JSON', () => {
    const cursor = { linear: { type: 'sse', url: 'https://mcp.linear.app/sse' } };
    expect(readPastedConfig(JSON.stringify(cursor))).toEqual(cursor);
    expect(() => readPastedConfig('{"mcpServers": {')).toThrow(FormInputError);
  });

  it("turns the gateway's answer to a paste into what was added and why each other server was refused", () => {
    const answer = {
      added: [{ name: 'git' }, { name: 'github' }],
      refused: [
        { name: 'shell', error_code: 'mcp_server_not_allowed', message: '"bash" is not on the operator\'s allowlist', details: { field: 'command' } },
        { name: 'files', error_code: 'validation_failed', message: 'Invalid request: url: …', details: { fields: { url: ['must be an absolute http:// or https:// URL'] } } },
      ],
    };
    expect(pasteOutcome(answer)).toEqual({
      note: 'Added git, github.',
      errors: ['shell: "bash" is not on the operator\'s allowlist', 'files: Invalid request: url: … (url: must be an absolute http:// or https:// URL)'],
    });
    expect(pasteOutcome({ added: [], refused: [{ name: 'git', message: 'exists already' }] })).toEqual({ note: null, errors: ['git: exists already'] });
    expect(pasteOutcome({ name: 'one', transport: 'sse' })).toEqual({ note: 'Added one.', errors: [] });
  });
});
