import type { Tool } from '../tools/tool.js';
import { provideRunTools, type RunToolProvider, type RunToolsRequest } from './run-tools.js';

const request: RunToolsRequest = { caller: { tenantId: 't', userId: 'u', role: 'user' }, runId: 'r', sessionId: 's', assistantId: 'a', signal: new AbortController().signal };
const tool = (name: string): Tool => ({ name, description: name, parameters: { type: 'object' }, execute: async () => ({ success: true, output: null }) });

describe('provideRunTools', () => {
  it('joins what every provider gives and releases each once, even when one release throws', async () => {
    const released: string[] = [];
    const provider = (name: string, failRelease = false): RunToolProvider => async () => ({
      tools: [tool(name)],
      middleware: [],
      release: async () => {
        released.push(name);
        if (failRelease) throw new Error(`${name} release failed`);
      },
    });
    const tools = await provideRunTools([provider('a'), provider('b', true), provider('c')], request);
    expect(tools.tools.map((t) => t.name)).toEqual(['a', 'b', 'c']);
    await expect(tools.release()).rejects.toThrow('b release failed');
    expect(released).toEqual(['c', 'b', 'a']);
    await tools.release();
    expect(released).toEqual(['c', 'b', 'a']);
  });

  it('releases what earlier providers gave when a later one fails', async () => {
    const released: string[] = [];
    const ok: RunToolProvider = async () => ({ tools: [], middleware: [], release: async () => void released.push('ok') });
    const broken: RunToolProvider = async () => Promise.reject(new Error('cannot connect'));
    await expect(provideRunTools([ok, broken], request)).rejects.toThrow('cannot connect');
    expect(released).toEqual(['ok']);
  });
});
