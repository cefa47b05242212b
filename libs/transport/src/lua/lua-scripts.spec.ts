import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { luaScript } from './lua-scripts.js';

const LUA_DIR = import.meta.dirname;
const TRANSPORT = join(LUA_DIR, '..');

/** The scripts the library's TypeScript loads, by the name it gives luaScript. */
function namedInCode(): string[] {
  const sources = readdirSync(TRANSPORT).filter((file) => file.endsWith('.ts') && !file.endsWith('.spec.ts'));
  return sources.flatMap((file) => [...readFileSync(join(TRANSPORT, file), 'utf8').matchAll(/\bluaScript\('([^']+)'/g)].map((m) => m[1]!));
}

const files = readdirSync(LUA_DIR).filter((file) => file.endsWith('.lua')).map((file) => file.slice(0, -'.lua'.length));

describe('the Lua scripts', () => {
  it('are named in the code, each by a file that exists and loads, and no file is left unused', () => {
    const named = namedInCode();
    // The fourteen scripts of run-ledger, run-event-log, hitl-requests, elicitation-requests,
    // parked-run-deadlines, redis-lease, stream-slots, tenant-run-slots and run-budgets.
    expect(new Set(named).size).toBe(14);
    expect([...new Set(named)].sort()).toEqual([...files].sort());
    for (const name of named.filter((n) => n !== 'run-event-append')) {
      const text = luaScript(name);
      expect(text).toContain('redis.call(');
      expect(text).toBe(readFileSync(join(LUA_DIR, `${name}.lua`), 'utf8'));
    }
  });

  it('each start with a header comment saying what they take (KEYS, ARGV) and return', () => {
    for (const name of files) {
      const text = readFileSync(join(LUA_DIR, `${name}.lua`), 'utf8');
      const header = text.slice(0, text.search(/^(?!--)/m));
      expect({ name, keys: /KEYS/.test(header), argv: /ARGV/.test(header), returns: /Returns/.test(header) }).toEqual({ name, keys: true, argv: true, returns: true });
    }
  });

  it('fails clearly on a name that has no file', () => {
    expect(() => luaScript('no-such-script')).toThrow('no Lua script named "no-such-script" (libs/transport/src/lua/no-such-script.lua)');
    // Not a file name of this folder: never read.
    expect(() => luaScript('../redis-keys')).toThrow('no Lua script named "../redis-keys"');
    expect(() => luaScript('Run-Ledger-Take')).toThrow('no Lua script named');
  });

  it('fills in the placeholders of the append script, and refuses a placeholder without a value or a value without one', () => {
    const values = {
      ARGS_PER_EVENT: '5',
      SEQ_KEY: "'s' .. run",
      LOG_KEY: "'l' .. run",
      DONE_KEY: "'d' .. run",
      OWNER_KEY: "'o' .. run",
      APPENDS_KEY: "'a' .. run",
      CANCEL_KEY: "'c' .. run",
      STEPS_KEY: "'t' .. run",
      CALLS_KEY: "'k' .. run",
      PARKED_KEY: "'p' .. run",
      CHANNEL_KEY: "'e' .. run",
      PUBLISH: 'SPUBLISH',
    };
    const text = luaScript('run-event-append', values);
    expect(text).not.toMatch(/\{\{[A-Z]/);
    expect(text).toContain("redis.call('SPUBLISH', 'e' .. run, event)");
    expect(text).toContain('for i = 0, (#ARGV - 2) / 5 - 1 do');

    const { PUBLISH: _publish, ...withoutPublish } = values;
    expect(() => luaScript('run-event-append', withoutPublish)).toThrow('Lua script "run-event-append": no value for {{PUBLISH}}');
    expect(() => luaScript('run-event-append', { ...values, EXTRA: 'x' })).toThrow('Lua script "run-event-append" has no placeholder {{EXTRA}}');
    expect(() => luaScript('tenant-run-take', { PUBLISH: 'PUBLISH' })).toThrow('Lua script "tenant-run-take" has no placeholder {{PUBLISH}}');
  });
});
