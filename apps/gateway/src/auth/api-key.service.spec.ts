import { createHash } from 'node:crypto';
import { ServerConfig } from '../infra/server-config.js';
import type { GatewaySettings } from '../infra/gateway-config.js';
import { issueApiKey, MemoryApiKeyStore } from '#core/auth/managed-api-keys.js';
import { ApiKeyService } from './api-key.service.js';

function service(apiKeys: string[], store = new MemoryApiKeyStore(), apiKeyCacheSeconds = 2): ApiKeyService {
  const server = Object.assign(new ServerConfig(), { apiKeys, apiKeyCacheSeconds });
  return new ApiKeyService({ server } as GatewaySettings, { apiKeys: store });
}

describe('ApiKeyService', () => {
  it('resolves each key to the caller its entry names', async () => {
    const keys = service(['test-key-alice:acme:alice', 'test-key-bob:acme:bob:admin', 'an-operator-key:ops:carol:operator', 'bare-key-0123']);
    // The key's id is a digest prefix anyone holding the key can compute: printf %s KEY | sha256sum | cut -c1-12
    const id = (key: string) => `env-${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
    expect(await keys.resolve('test-key-alice')).toEqual({ tenantId: 'acme', userId: 'alice', role: 'user', keyId: id('test-key-alice') });
    expect(await keys.resolve('test-key-bob')).toEqual({ tenantId: 'acme', userId: 'bob', role: 'admin', keyId: id('test-key-bob') });
    expect(await keys.resolve('an-operator-key')).toMatchObject({ tenantId: 'ops', userId: 'carol', role: 'operator' });
    expect(await keys.resolve('bare-key-0123')).toMatchObject({ tenantId: 'default', role: 'user' });
    await expect(keys.resolve('test-key-carol')).rejects.toThrow(/not valid/);
  });

  it('says whether the key a caller came from still holds: what was issued on a key (a stream ticket) ends with it', async () => {
    const store = new MemoryApiKeyStore();
    const keys = service(['test-key-alice:acme:alice'], store, 60);
    const alice = await keys.resolve('test-key-alice');
    expect(await keys.isStillValid(alice)).toBe(true);
    // An environment key taken out of the configuration, or named for someone else.
    expect(await service(['test-key-bob0:acme:bob'], store).isStillValid(alice)).toBe(false);
    expect(await keys.isStillValid({ ...alice, userId: 'mallory' })).toBe(false);
    const issued = issueApiKey();
    await store.create({ tenantId: 'acme', userId: 'dave', role: 'user', createdBy: 'acme/carol', createdAt: new Date(), keyId: issued.keyId, keyHash: issued.keyHash, prefix: issued.prefix });
    const dave = await keys.resolve(issued.key);
    expect(await keys.isStillValid(dave)).toBe(true);
    await store.revoke(issued.keyId, new Date());
    // At once, although the resolve cache still trusts the key for a minute.
    expect(await keys.isStillValid(dave)).toBe(false);
    expect(await keys.resolve(issued.key)).toMatchObject({ userId: 'dave' });
    expect(await keys.isStillValid({ tenantId: 'acme', userId: 'nobody', role: 'user' })).toBe(false);
  });

  it('refuses to start on a bad entry rather than guess (an unknown role was once read as user)', () => {
    expect(() => service(['test-key-alice:acme:alice:root'])).toThrow(/entry 1: the role "root"/);
  });

  it('resolves an issued key by its hash until it is revoked or expires, within the cache time', async () => {
    const store = new MemoryApiKeyStore();
    let reads = 0;
    const counting = Object.assign(Object.create(store) as MemoryApiKeyStore, { findByHash: (h: string) => (reads++, store.findByHash(h)) });
    const keys = service([], counting, 0.05);
    const issued = issueApiKey();
    const expired = issueApiKey();
    const base = { tenantId: 'acme', userId: 'dave', role: 'admin' as const, createdBy: 'acme/carol', createdAt: new Date() };
    await store.create({ ...base, keyId: issued.keyId, keyHash: issued.keyHash, prefix: issued.prefix });
    await store.create({ ...base, keyId: expired.keyId, keyHash: expired.keyHash, prefix: expired.prefix, expiresAt: new Date(Date.now() - 1) });
    expect(await keys.resolve(issued.key)).toEqual({ tenantId: 'acme', userId: 'dave', role: 'admin', keyId: issued.keyId });
    await keys.resolve(issued.key);
    expect(reads).toBe(1);
    await expect(keys.resolve(expired.key)).rejects.toThrow(/not valid/);
    await expect(keys.resolve(`${issued.key}x`)).rejects.toThrow(/not valid/);
    // Not an issued key's shape: no store read at all.
    await expect(keys.resolve('some-other-key-value')).rejects.toThrow(/not valid/);
    expect(reads).toBe(3);
    await store.revoke(issued.keyId, new Date());
    expect(await keys.resolve(issued.key)).toMatchObject({ userId: 'dave' });
    await new Promise((r) => setTimeout(r, 60));
    await expect(keys.resolve(issued.key)).rejects.toThrow(/not valid/);
  });
});
