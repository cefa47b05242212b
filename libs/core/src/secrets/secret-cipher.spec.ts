import { randomBytes } from 'node:crypto';
import { SecretCipher, SecretUnreadableError } from './secret-cipher.js';

const reasonOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    if (err instanceof SecretUnreadableError) return err.reason;
    throw err;
  }
  throw new Error('expected SecretUnreadableError');
};

/** The sealed value with one bit of its payload byte `at` flipped. */
function flip(sealed: string, at: number): string {
  const [version, keyId, payload] = sealed.split('.') as [string, string, string];
  const raw = Buffer.from(payload, 'base64url');
  raw[at] ^= 0x01;
  return `${version}.${keyId}.${raw.toString('base64url')}`;
}

describe('SecretCipher', () => {
  const cipher = new SecretCipher(randomBytes(32));

  it.each(['Bearer s3cr3t', '', 'ünïcode 🔑 漢字', 'x'.repeat(10_000)])('opens what it sealed: %#', (plain) => {
    const sealed = cipher.seal(plain, 'ctx');
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]{8}\.[A-Za-z0-9_-]+$/);
    if (plain.length > 0) expect(sealed).not.toContain(plain);
    expect(cipher.open(sealed, 'ctx')).toBe(plain);
  });

  it('seals the same value differently each time (a random IV per value)', () => {
    const sealed = new Set(Array.from({ length: 50 }, () => cipher.seal('same', 'ctx')));
    expect(sealed.size).toBe(50);
    for (const s of sealed) expect(cipher.open(s, 'ctx')).toBe('same');
  });

  it('detects any altered byte of the IV, the tag or the ciphertext', () => {
    const sealed = cipher.seal('Bearer s3cr3t', 'ctx');
    const length = Buffer.from(sealed.split('.')[2]!, 'base64url').length;
    for (let at = 0; at < length; at++) expect(reasonOf(() => cipher.open(flip(sealed, at), 'ctx'))).toBe('altered');
    const [version, keyId, payload] = sealed.split('.') as [string, string, string];
    expect(reasonOf(() => cipher.open(`${version}.${keyId}.${payload.slice(0, -4)}`, 'ctx'))).toBe('altered');
  });

  it('refuses a value bound to another context', () => {
    expect(reasonOf(() => cipher.open(cipher.seal('Bearer s3cr3t', 'alice/github/headers.Authorization'), 'bob/github/headers.Authorization'))).toBe('altered');
  });

  it('refuses a value sealed with another key, and says so', () => {
    const other = new SecretCipher(randomBytes(32));
    expect(reasonOf(() => other.open(cipher.seal('Bearer s3cr3t', 'ctx'), 'ctx'))).toBe('other_key');
    // The key id is only a hint: a forged one still fails authentication.
    const sealed = cipher.seal('Bearer s3cr3t', 'ctx');
    const [, otherId] = other.seal('x', 'ctx').split('.');
    const [version, , payload] = sealed.split('.');
    expect(reasonOf(() => other.open(`${version}.${otherId}.${payload}`, 'ctx'))).toBe('altered');
  });

  it.each(['plain text', 'v2.abc.def', 'v1.only-two', 'v1.a.b.c', 'v1.AAAAAAAA.AAAA'])('refuses the malformed %s', (text) => {
    const reason = reasonOf(() => cipher.open(text, 'ctx'));
    expect(['malformed', 'other_key']).toContain(reason);
  });

  it('takes a key of 32 bytes only, and none from an empty setting', () => {
    expect(() => new SecretCipher(randomBytes(16))).toThrow(/32 bytes/);
    expect(SecretCipher.fromSetting(undefined)).toBeUndefined();
    expect(SecretCipher.fromSetting(' ')).toBeUndefined();
    const hex = randomBytes(32).toString('hex');
    const a = SecretCipher.fromSetting(hex)!;
    const b = SecretCipher.fromSetting(Buffer.from(hex, 'hex').toString('base64'))!;
    expect(b.open(a.seal('same key', 'ctx'), 'ctx')).toBe('same key');
    expect(() => SecretCipher.fromSetting('too short')).toThrow(/DATAAGENT_SECRET_KEY/);
  });
});
