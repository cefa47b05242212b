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
    expect(keys.resolve('test-key-alice')).toEqual({ tenantId: 'acme', userId: 'alice', role: 'user' });
    expect(keys.resolve('test-key-bob')).toEqual({ tenantId: 'acme', userId: 'bob', role: 'admin' });
    expect(keys.resolve('an-operator-key')).toMatchObject({ tenantId: 'ops', userId: 'carol', role: 'operator' });
    expect(keys.resolve('bare-key-0123')).toMatchObject({ tenantId: 'default', role: 'user' });
    expect(() => keys.resolve('test-key-carol')).toThrow(/not valid/);
  });

  it('refuses to start on a bad entry rather than guess (an unknown role was once read as user)', () => {
    expect(() => service(['test-key-alice:acme:alice:root'])).toThrow(/entry 1: the role "root"/);
  });
});
