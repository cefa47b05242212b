import { jest } from '@jest/globals';
import type { ModelCallState } from '../engine/agent-middleware.js';
import type { Caller } from '../auth/caller.js';
import type { ToolContext } from '../tools/tool.js';
import { memoryForCaller } from './agent-memory-middleware.js';
import { MapMemoryStore } from './map-memory-store.js';

const alice: Caller = { tenantId: 't', userId: 'alice', role: 'user' };
const bob: Caller = { tenantId: 't', userId: 'bob', role: 'user' };
const ctx = (caller: Caller): ToolContext => ({ caller, sessionId: 's', runId: 'r', toolCallId: 'c', signal: new AbortController().signal, emit: () => undefined });
const state = (iteration: number): ModelCallState => ({
  sessionId: 's',
  runId: 'r',
  iteration,
  messages: [
    { role: 'system', content: 'Base prompt.' },
    { role: 'user', content: 'hi' },
  ],
  tools: [],
});

describe('AgentMemoryMiddleware', () => {
  let store: MapMemoryStore;

  beforeEach(() => {
    let clock = Date.parse('2025-03-01T00:00:00Z');
    store = new MapMemoryStore(() => new Date((clock += 1000)));
  });

  it('puts only the caller\'s notes for the assistant into the system message, newest first', async () => {
    const { tool: aliceRemember } = memoryForCaller(store, alice, 'analyst');
    expect(await aliceRemember.execute({ note: 'Prefers metric units' }, ctx(alice))).toMatchObject({ success: true });
    expect(await aliceRemember.execute({ note: 'Works on\nsales data' }, ctx(alice))).toMatchObject({ success: true });
    await memoryForCaller(store, bob, 'analyst').tool.execute({ note: 'Bob likes charts' }, ctx(bob));
    await memoryForCaller(store, alice, 'writer').tool.execute({ note: 'Writer-only note' }, ctx(alice));

    const s = state(1);
    await memoryForCaller(store, alice, 'analyst').middleware.beforeModel(s);
    const prompt = s.messages[0]!.content;
    expect(prompt.startsWith('Base prompt.\n\n## Memory\n')).toBe(true);
    expect(prompt).toMatch(/- \[2025-03-01\] Works on sales data\n- \[2025-03-01\] Prefers metric units$/);
    expect(prompt).not.toContain('Bob likes charts');
    expect(prompt).not.toContain('Writer-only note');
    expect(s.messages[1]).toEqual({ role: 'user', content: 'hi' });
  });

  it('recalls once per run and injects the same notes on every iteration', async () => {
    await store.add(alice, 'analyst', 'before the run');
    const recall = jest.spyOn(store, 'recall');
    const { middleware } = memoryForCaller(store, alice, 'analyst', { recallLimit: 5 });
    const first = state(1);
    await middleware.beforeModel(first);
    await store.add(alice, 'analyst', 'during the run');
    const second = state(2);
    await middleware.beforeModel(second);
    expect(recall).toHaveBeenCalledTimes(1);
    expect(recall).toHaveBeenCalledWith(alice, 'analyst', 5);
    expect(second.messages[0]!.content).toBe(first.messages[0]!.content);
    expect(second.messages[0]!.content).toContain('before the run');
  });

  it('tells the model how to remember when there are no notes yet', async () => {
    const s = state(1);
    await memoryForCaller(store, alice, 'analyst').middleware.beforeModel(s);
    expect(s.messages[0]!.content).toContain('no saved notes');
    expect(s.messages[0]!.content).toContain('`remember`');
  });

  it('the remember tool refuses an empty note with a clear error', async () => {
    const { tool } = memoryForCaller(store, alice, 'analyst');
    expect(await tool.execute({ note: '  ' }, ctx(alice))).toEqual({ success: false, output: null, error: 'The note is empty' });
  });
});
