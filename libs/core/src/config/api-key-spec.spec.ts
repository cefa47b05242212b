import { parseApiKeys } from './api-key-spec.js';

const problemsOf = (entries: string[]) => {
  const parsed = parseApiKeys(entries);
  return parsed.ok ? [] : parsed.problems;
};

describe('parseApiKeys', () => {
  it('reads a bare key and key:tenant:user[:role], with defaults', () => {
    const parsed = parseApiKeys(['test-key-alice:acme:alice', 'test-key-bob:acme:bob:admin', 'an-operator-key:ops:carol:operator', 'bare-key-0123']);
    expect(parsed).toEqual({
      ok: true,
      keys: [
        { key: 'test-key-alice', tenantId: 'acme', userId: 'alice', role: 'user' },
        { key: 'test-key-bob', tenantId: 'acme', userId: 'bob', role: 'admin' },
        { key: 'an-operator-key', tenantId: 'ops', userId: 'carol', role: 'operator' },
        { key: 'bare-key-0123', tenantId: 'default', userId: expect.stringMatching(/^key-[0-9a-f]{12}$/), role: 'user' },
      ],
    });
    expect(parseApiKeys([])).toEqual({ ok: true, keys: [] });
  });

  it.each([
    [['short:acme:alice'], /entry 1: the key is shorter than 12 characters/],
    [['x'], /entry 1: the key is shorter than 12 characters/],
    [['long-enough-key:acme'], /entry 1: has 2 colon-separated parts/],
    [['long-enough-key:acme:alice:admin:extra'], /entry 1: has 5 colon-separated parts/],
    [['long-enough-key::alice'], /entry 1: the tenant is empty/],
    [['long-enough-key:acme:'], /entry 1: the user is empty/],
    [['long-enough-key:acme: '], /entry 1: the user is empty/],
    [['long-enough-key:acme:alice:root'], /entry 1: the role "root" is not one of user, admin, operator/],
    [['long-enough-key:acme:alice:'], /entry 1: the role "" is not one of/],
    [['long-enough-key:acme:alice:Admin'], /entry 1: the role "Admin" is not one of/],
    [['long enough key'], /entry 1: the key contains white space/],
  ])('refuses %j', (entries, problem) => {
    expect(problemsOf(entries).join('\n')).toMatch(problem);
  });

  it('names each bad entry by position, every problem at once, never the key', () => {
    const problems = problemsOf(['good-key-00001:acme:alice', 'tiny', 'second-secret:acme:bob:boss', 'good-key-00001:acme:carol']);
    expect(problems).toEqual([
      expect.stringMatching(/^entry 2: the key is shorter/),
      expect.stringMatching(/^entry 3: the role "boss"/),
      'entry 4: repeats the key of entry 1',
    ]);
    for (const secret of ['good-key-00001', 'tiny', 'second-secret']) expect(problems.join('\n')).not.toContain(secret);
  });

  it('reads a key that contains ":" as fields, so the mistake shows up instead of passing silently', () => {
    // "abc:defghijklmnop" was once taken as key "abc" of tenant "defghijklmnop" with no user.
    expect(problemsOf(['abc:defghijklmnop'])).toEqual([expect.stringContaining('2 colon-separated parts')]);
  });
});
