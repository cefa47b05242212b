import { createHash } from 'node:crypto';
import { ServerConfig } from '#core/config/settings.js';
import type { GatewaySettings } from '../infra/gateway-config.js';
import { ApiKeyService } from './api-key.service.js';

function service(apiKeys: string[]): ApiKeyService {
  const server = Object.assign(new ServerConfig(), { apiKeys });
  return new ApiKeyService({ server } as GatewaySettings);
}

describe('ApiKeyService', () => {
  it('resolves each key to the caller its entry names', () => {
    const keys = service(['test-key-alice:acme:alice', 'test-key-bob:acme:bob:admin', 'an-operator-key:ops:carol:operator', 'bare-key-0123']);
    // The key's id is a digest prefix anyone holding the key can compute: printf %s KEY | sha256sum | cut -c1-12
    const id = (key: string) => `env-${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
    expect(keys.resolve('test-key-alice')).toEqual({ tenantId: 'acme', userId: 'alice', role: 'user', keyId: id('test-key-alice') });
    expect(keys.resolve('test-key-bob')).toEqual({ tenantId: 'acme', userId: 'bob', role: 'admin', keyId: id('test-key-bob') });
    expect(keys.resolve('an-operator-key')).toMatchObject({ tenantId: 'ops', userId: 'carol', role: 'operator' });
    expect(keys.resolve('bare-key-0123')).toMatchObject({ tenantId: 'default', role: 'user' });
    expect(() => keys.resolve('test-key-carol')).toThrow(/not valid/);
  });

  it('refuses to start on a bad entry rather than guess (an unknown role was once read as user)', () => {
    expect(() => service(['test-key-alice:acme:alice:root'])).toThrow(/entry 1: the role "root"/);
  });
});
