import { LlmRequestError, retryAfterSeconds } from './llm-request-error.js';

describe('LlmRequestError', () => {
  it('is recoverable only when the provider is rate limiting or overloaded', () => {
    expect([429, 503, 529].map((s) => new LlmRequestError('busy', s).recoverable)).toEqual([true, true, true]);
    expect([400, 401, 404, 500, undefined].map((s) => new LlmRequestError('no', s).recoverable)).toEqual([false, false, false, false, false]);
  });
});

describe('retryAfterSeconds', () => {
  const headers = (values: Record<string, string>) => new Headers(values);

  it('reads retry-after-ms first, then retry-after in seconds or as an HTTP date', () => {
    expect(retryAfterSeconds(headers({ 'retry-after-ms': '1500', 'retry-after': '9' }))).toBe(1.5);
    expect(retryAfterSeconds(headers({ 'retry-after': '7' }))).toBe(7);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterSeconds(headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' }), now)).toBe(30);
  });

  it('asks nothing when the headers say nothing usable', () => {
    expect(retryAfterSeconds(undefined)).toBeUndefined();
    expect(retryAfterSeconds(headers({}))).toBeUndefined();
    expect(retryAfterSeconds(headers({ 'retry-after': 'soon' }))).toBeUndefined();
  });
});
