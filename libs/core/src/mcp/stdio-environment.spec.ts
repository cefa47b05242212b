import { stdioEnvironment, stdioPath } from './stdio-environment.js';

/** A worker's environment as it really is: secrets, settings and variables that change what runs. */
const worker: NodeJS.ProcessEnv = {
  PATH: '/usr/local/bin:.::/usr/bin:bin',
  HOME: '/home/worker',
  LANG: 'C.UTF-8',
  TZ: 'UTC',
  TMPDIR: '/tmp/worker',
  LOGNAME: 'worker',
  USER: 'worker',
  SHELL: '/bin/bash',
  TERM: 'xterm',
  OPENAI_API_KEY: 'sk-worker',
  DATAAGENT_SECRET_KEY: 'ab'.repeat(32),
  DATAAGENT_MYSQL_PASSWORD: 'pw',
  NODE_OPTIONS: '--require /srv/hook.js',
  LD_PRELOAD: '/srv/hook.so',
  PYTHONWARNINGS: 'ignore',
  BROWSER: 'firefox',
  'BASH_FUNC_x%%': '() { id; }',
  GIT_SSH_COMMAND: 'ssh -i key',
};

describe('stdioEnvironment', () => {
  it('gives a server PATH and the base names of the worker, its own env, and nothing else', () => {
    expect(stdioEnvironment({ env: { API_KEY: 'k' } }, worker)).toEqual({ PATH: '/usr/local/bin:/usr/bin', HOME: '/home/worker', LANG: 'C.UTF-8', TZ: 'UTC', TMPDIR: '/tmp/worker', API_KEY: 'k' });
    expect(stdioEnvironment({}, { PATH: '/usr/bin', HOME: '/h' })).toEqual({ PATH: '/usr/bin', HOME: '/h' });
  });

  it('lets the operator\'s own server declare any name, PATH included', () => {
    expect(stdioEnvironment({ env: { PATH: '/opt/tools/bin', LANG: 'de_DE.UTF-8' } }, worker)).toMatchObject({ PATH: '/opt/tools/bin', LANG: 'de_DE.UTF-8', HOME: '/home/worker' });
  });

  it('looks commands up on absolute folders only, with a standard PATH when the worker has none', () => {
    expect(stdioPath(worker)).toBe('/usr/local/bin:/usr/bin');
    expect(stdioPath({})).toBe('/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin');
    expect(stdioPath({ PATH: '.:relative' })).toBe('/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin');
  });
});
