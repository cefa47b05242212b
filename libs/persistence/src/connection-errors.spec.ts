import { isDatabaseUnavailable } from './connection-errors.js';

describe('isDatabaseUnavailable', () => {
  it('recognises a refused or lost connection, also wrapped by TypeORM', () => {
    expect(isDatabaseUnavailable(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isDatabaseUnavailable({ message: 'Query failed', driverError: { code: 'PROTOCOL_CONNECTION_LOST', fatal: true } })).toBe(true);
    expect(isDatabaseUnavailable({ driverError: { code: 'ER_SOMETHING', fatal: true } })).toBe(true);
  });

  it('does not mistake a refused statement for an outage', () => {
    expect(isDatabaseUnavailable({ driverError: { code: 'ER_DUP_ENTRY', errno: 1062 } })).toBe(false);
    expect(isDatabaseUnavailable({ code: 'ER_PARSE_ERROR' })).toBe(false);
    expect(isDatabaseUnavailable(new Error('plain'))).toBe(false);
    expect(isDatabaseUnavailable(undefined)).toBe(false);
  });
});
