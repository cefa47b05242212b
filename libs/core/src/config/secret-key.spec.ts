import { randomBytes } from 'node:crypto';
import { ConfigError, loadConfig } from './env.js';
import { parseSecretKey } from './secret-key.js';
import { SecretsConfig } from './settings.js';

describe('parseSecretKey', () => {
  const key = randomBytes(32);

  it.each([
    ['hex', key.toString('hex')],
    ['upper-case hex', key.toString('hex').toUpperCase()],
    ['base64', key.toString('base64')],
    ['base64 without padding', key.toString('base64').replace(/=$/, '')],
    ['base64url', key.toString('base64url')],
    ['text with a newline', `${key.toString('hex')}\n`],
  ])('reads %s', (_, text) => {
    expect(parseSecretKey(text)).toEqual(key);
  });

  it.each([
    ['31 bytes of hex', randomBytes(31).toString('hex')],
    ['33 bytes of hex', randomBytes(33).toString('hex')],
    ['16 bytes of base64', randomBytes(16).toString('base64')],
    ['48 bytes of base64', randomBytes(48).toString('base64')],
    ['a passphrase', 'correct horse battery staple'],
    ['hex with a stray letter', `${key.toString('hex').slice(0, 63)}g`],
    ['empty', ''],
  ])('refuses %s', (_, text) => {
    expect(parseSecretKey(text)).toBeNull();
  });
});

describe('SecretsConfig', () => {
  it('is optional, and a bad DATAAGENT_SECRET_KEY is named without showing it', () => {
    expect(loadConfig(SecretsConfig, {}, []).secretKey).toBeUndefined();
    const hex = randomBytes(32).toString('hex');
    expect(loadConfig(SecretsConfig, { DATAAGENT_SECRET_KEY: hex }, []).secretKey).toBe(hex);
    let error: unknown;
    try {
      loadConfig(SecretsConfig, { DATAAGENT_SECRET_KEY: 'hunter2-is-not-a-key' }, []);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toMatch(/DATAAGENT_SECRET_KEY: must be 32 bytes written as 64 hex characters or in base64.*\(got \(hidden\)\)/);
    expect((error as ConfigError).message).not.toContain('hunter2');
  });
});
