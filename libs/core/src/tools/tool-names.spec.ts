import { wireToolName } from './tool-names.js';

describe('wireToolName', () => {
  it('keeps safe names, turns server.tool into server__tool, and hashes what is too long', () => {
    expect(wireToolName('read_file')).toBe('read_file');
    expect(wireToolName('github.create-issue')).toBe('github__create-issue');
    expect(wireToolName('srv.tool/with spaces')).toBe('srv__tool_with_spaces');
    const long = `${'s'.repeat(40)}.${'t'.repeat(40)}`;
    const other = `${'s'.repeat(40)}.${'t'.repeat(39)}u`;
    expect(wireToolName(long)).toMatch(/^[a-zA-Z0-9_-]{64}$/);
    expect(wireToolName(long)).not.toBe(wireToolName(other));
  });
});
