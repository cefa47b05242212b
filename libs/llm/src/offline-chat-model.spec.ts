import type { ChatMessage, ModelChunk, ToolSpec } from '#core/llm/chat-model.js';
import { OfflineChatModel } from './offline-chat-model.js';

const echo: ToolSpec = { name: 'echo', description: 'Echoes text', parameters: { type: 'object', properties: { text: { type: 'string' } } } };

async function collect(stream: AsyncIterable<ModelChunk>): Promise<ModelChunk[]> {
  const chunks: ModelChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

const textOf = (chunks: ModelChunk[]) => chunks.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join('');
const run = (messages: ChatMessage[], tools: ToolSpec[] = [], signal = new AbortController().signal) =>
  collect(new OfflineChatModel({ chunkDelayMs: 0 }).stream({ messages, tools, signal }));

describe('OfflineChatModel', () => {
  it('says it is the offline model, acknowledges the message and explains how to configure a real one', async () => {
    const chunks = await run([{ role: 'user', content: 'What were sales in March?' }]);
    const text = textOf(chunks);

    expect(chunks.filter((c) => c.type === 'text').length).toBeGreaterThan(3);
    expect(text).toMatch(/DataAgent's offline model/);
    expect(text).toContain('What were sales in March?');
    for (const variable of ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'ANTHROPIC_API_KEY', 'DATAAGENT_MODEL']) expect(text).toContain(variable);
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
  });

  it('answers the same conversation with the same words', async () => {
    const messages: ChatMessage[] = [{ role: 'user', content: 'hello' }];
    expect(await run(messages)).toEqual(await run(messages));
  });

  it('calls an offered tool when asked to, then summarises its result', async () => {
    const first = await run([{ role: 'user', content: 'please use tool echo {"text":"hi"}' }], [echo]);
    const calls = first.find((c) => c.type === 'tool_calls');
    expect(calls).toMatchObject({ calls: [{ name: 'echo', arguments: { text: 'hi' } }] });
    expect(first.at(-1)).toEqual({ type: 'finish', reason: 'tool_calls' });

    const call = (calls as { calls: Array<{ id: string; name: string; arguments: Record<string, unknown> }> }).calls[0];
    const second = await run(
      [
        { role: 'user', content: 'please use tool echo {"text":"hi"}' },
        { role: 'assistant', content: '', toolCalls: [call] },
        { role: 'tool', toolCallId: call.id, content: '{"echoed":"hi"}' },
      ],
      [echo],
    );
    expect(second.some((c) => c.type === 'tool_calls')).toBe(false);
    expect(textOf(second)).toContain('`echo` returned');
    expect(textOf(second)).toContain('{"echoed":"hi"}');
  });

  it('does not call a tool that is not offered, and mentions the offered ones', async () => {
    const chunks = await run([{ role: 'user', content: 'use tool rm_rf' }], [echo]);
    expect(chunks.some((c) => c.type === 'tool_calls')).toBe(false);
    expect(textOf(chunks)).toContain('use tool echo');
  });

  it('stops with AbortError when the signal fires mid-stream', async () => {
    const controller = new AbortController();
    const model = new OfflineChatModel({ chunkDelayMs: 5 });
    const seen: ModelChunk[] = [];
    const consume = async () => {
      for await (const chunk of model.stream({ messages: [{ role: 'user', content: 'hi' }], tools: [], signal: controller.signal })) {
        seen.push(chunk);
        controller.abort();
      }
    };
    await expect(consume()).rejects.toMatchObject({ name: 'AbortError' });
    expect(seen).toHaveLength(1);
  });

  it('yields nothing when the signal has already fired', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(run([{ role: 'user', content: 'hi' }], [], controller.signal)).rejects.toMatchObject({ name: 'AbortError' });
  });
});
