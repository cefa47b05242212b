import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));

describe('DATAAGENT_API_KEYS at gateway start', () => {
  it('refuses bad entries with exit code 2, naming the entries and never printing a key', () => {
    const keys = 'good-key-00001:acme:alice,secret-k3y-zz9:acme:bob:superuser,q7zK,good-key-00001:acme:carol';
    const run = spawnSync(process.execPath, [`${root}dist/gateway.js`], {
      env: { ...process.env, DATAAGENT_API_KEYS: keys, DATAAGENT_PORT: '0', DATAAGENT_HOST: '127.0.0.1' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/DATAAGENT_API_KEYS: .*entry 2: the role "superuser" is not one of user, admin, operator/);
    expect(run.stderr).toMatch(/entry 3: the key is shorter than 12 characters/);
    expect(run.stderr).toMatch(/entry 4: repeats the key of entry 1/);
    for (const key of ['good-key-00001', 'secret-k3y-zz9', 'q7zK']) expect(run.stdout + run.stderr).not.toContain(key);
  });
});
