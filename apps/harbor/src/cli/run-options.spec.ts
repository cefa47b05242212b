import { HarborUsageError } from './harbor-errors.js';
import { parseRunOptions } from './run-options.js';

const required = { server: 'http://127.0.0.1:8000', questions: 'set.json' };

describe('parseRunOptions', () => {
  it('fills the defaults and converts seconds to milliseconds', () => {
    expect(parseRunOptions({ ...required, rampUp: '2.5', timeout: '30' })).toEqual({
      server: 'http://127.0.0.1:8000',
      questions: 'set.json',
      concurrency: 10,
      mode: 'rest',
      out: 'harbor-report',
      minPassRate: 0,
      rampUpMs: 2500,
      repeat: 1,
      timeoutMs: 30_000,
      assistant: 'default',
    });
  });

  it('takes the server with a trailing slash or /api/v1 as the same base URL', () => {
    expect(parseRunOptions({ ...required, server: 'http://host:8000/' }).server).toBe('http://host:8000');
    expect(parseRunOptions({ ...required, server: 'https://host/dataagent/api/v1/' }).server).toBe('https://host/dataagent');
  });

  it('takes the key from HARBOR_API_KEY unless --api-key is given', () => {
    expect(parseRunOptions(required, { HARBOR_API_KEY: 'from-env-key' }).apiKey).toBe('from-env-key');
    expect(parseRunOptions({ ...required, apiKey: 'flag-key' }, { HARBOR_API_KEY: 'from-env-key' }).apiKey).toBe('flag-key');
    expect(parseRunOptions(required, {})).not.toHaveProperty('apiKey');
  });

  it('runs for a duration instead of a number of passes', () => {
    expect(parseRunOptions({ ...required, duration: '60' })).toMatchObject({ durationMs: 60_000, repeat: 1 });
  });

  it('names every bad option in one error', () => {
    let error: unknown;
    try {
      parseRunOptions({ server: 'ftp://x', concurrency: '0', mode: 'grpc', minPassRate: '95', timeout: '0', repeat: '2', duration: '10' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(HarborUsageError);
    const message = (error as Error).message;
    for (const part of ['--server must be an http', '--questions is required', '--concurrency must be', '--mode must be one of rest, socketio, ws', '--min-pass-rate must be a fraction', '--timeout must be', '--duration and --repeat exclude each other']) {
      expect(message).toContain(part);
    }
  });

  it('refuses a missing server and non-numbers', () => {
    expect(() => parseRunOptions({ questions: 'q.json' })).toThrow('--server is required');
    expect(() => parseRunOptions({ ...required, concurrency: 'ten' })).toThrow('--concurrency must be a whole number from 1 to 10000 (got "ten")');
    expect(() => parseRunOptions({ ...required, concurrency: '2.5' })).toThrow('--concurrency');
    expect(() => parseRunOptions({ ...required, rampUp: '' })).toThrow('--ramp-up');
  });
});
