import { AGENT_DEFAULTS } from '../engine/agent-config.js';
import { AgentExecutor } from '../engine/agent-executor.js';
import type { EventDict } from '../events/execution-event.js';
import type { ChatModel, ModelChunk, ModelRequest } from '../llm/chat-model.js';
import type { Tool } from './tool.js';
import { capToolOutput, DEFAULT_TOOL_RESULT_MAX_BYTES } from './tool-output-cap.js';

const MARKER = /\n\[… cut: ([\d.]+ (?:bytes|KB|MB)) of ([\d.]+ (?:bytes|KB|MB)) not shown; tool results are limited to ([\d.]+ KB)\. Ask for a smaller part: read files in pages with offset and limit, narrow the pattern or the query\.\]$/;

describe('capToolOutput', () => {
  it('leaves a result within the cap as it is', () => {
    const output = { rows: [1, 2, 3] };
    expect(capToolOutput(output, 1024)).toEqual({ result: output, content: '{"rows":[1,2,3]}' });
    expect(capToolOutput('short', 1024)).toEqual({ result: 'short', content: 'short' });
  });

  it('cuts a larger one to the cap, with a marker saying how much is not shown', () => {
    const { result, content } = capToolOutput('x'.repeat(10_000_000), DEFAULT_TOOL_RESULT_MAX_BYTES);
    expect(result).toBe(content);
    expect(Buffer.byteLength(content)).toBeLessThanOrEqual(DEFAULT_TOOL_RESULT_MAX_BYTES);
    expect(Buffer.byteLength(content)).toBeGreaterThan(DEFAULT_TOOL_RESULT_MAX_BYTES - 256);
    expect(content.match(MARKER)?.slice(1)).toEqual(['9.5 MB', '9.5 MB', '64.0 KB']);
  });

  it('cuts on a character boundary and cuts structured results as their JSON text', () => {
    const { content } = capToolOutput({ text: '€'.repeat(5_000) }, 4096);
    expect(content.startsWith('{"text":"€€€')).toBe(true);
    expect(content).not.toContain('\uFFFD');
    expect(Buffer.byteLength(content)).toBeLessThanOrEqual(4096);
    expect(content).toMatch(MARKER);
  });
});

describe('tool results in the agent loop', () => {
  /** Calls `huge` once, then answers; records what it was sent. */
  class OneCallModel implements ChatModel {
    readonly id = 'one-call';
    readonly requests: ModelRequest[] = [];
    async *stream(req: ModelRequest): AsyncIterable<ModelChunk> {
      this.requests.push({ ...req, messages: [...req.messages] });
      if (this.requests.length === 1) yield { type: 'tool_calls', calls: [{ id: 'c1', name: 'huge', arguments: {} }] };
      else yield { type: 'text', text: 'ok' };
    }
  }
  const huge: Tool = { name: 'huge', description: 'Returns 3 MB.', parameters: { type: 'object' }, execute: async () => ({ success: true, output: 'y'.repeat(3_000_000) }) };

  it('are capped the same in the tool_result event and in the message to the model', async () => {
    const model = new OneCallModel();
    const executor = new AgentExecutor({ id: 'a', name: 'a', description: '', systemPrompt: 'sys', model, tools: [huge], middleware: [], ...AGENT_DEFAULTS, toolResultMaxBytes: 16 * 1024 });
    const events: EventDict[] = [];
    for await (const e of executor.execute('go', 's1', { runId: 'r1', caller: { tenantId: 't', userId: 'u', role: 'user' }, history: [], signal: new AbortController().signal })) {
      events.push(e.toDict());
    }
    const result = events.find((e) => e.event_type === 'tool_result')!;
    expect(result.status).toBe('success');
    expect(String(result.result).match(MARKER)?.slice(1)).toEqual(['2.8 MB', '2.9 MB', '16.0 KB']);
    expect(Buffer.byteLength(String(result.result))).toBeLessThanOrEqual(16 * 1024);
    expect(model.requests[1]!.messages.at(-1)).toEqual({ role: 'tool', name: 'huge', toolCallId: 'c1', content: result.result });
    expect(events.filter((e) => e.event_type === 'done')).toHaveLength(1);
  });
});
