import { countTokens, estimateInputTokens, estimateOutputTokens, tokenizerFor } from './token-estimate.js';

describe('token estimates', () => {
  it("picks the model family's tokenizer", () => {
    expect(tokenizerFor('openai:gpt-4o')).toBe('o200k_base');
    expect(tokenizerFor('openai:gpt-4.1-mini')).toBe('o200k_base');
    expect(tokenizerFor('openai:gpt-4-turbo')).toBe('cl100k_base');
    expect(tokenizerFor('gpt-3.5-turbo')).toBe('cl100k_base');
    expect(tokenizerFor('anthropic:claude-sonnet-4')).toBe('o200k_base');
    expect(tokenizerFor('offline')).toBe('o200k_base');
  });

  it('counts with the real tokenizer, not characters', async () => {
    // Known o200k_base and cl100k_base counts.
    expect(await countTokens('openai:gpt-4o', 'hello world')).toBe(2);
    expect(await countTokens('openai:gpt-4o', '数据智能助手')).toBeLessThan('数据智能助手'.length + 1);
    expect(await countTokens('openai:gpt-4', 'tiktoken is great!')).toBe(6);
    expect(await countTokens('openai:gpt-4o', '')).toBe(0);
  });

  it("counts a chat's framing, tool calls and tools, as OpenAI does", async () => {
    const one = await estimateInputTokens('openai:gpt-4o', [{ role: 'user', content: 'hello world' }], []);
    expect(one).toBe(3 + 3 + 2);
    const withTools = await estimateInputTokens('openai:gpt-4o', [{ role: 'user', content: 'hello world' }], [{ name: 'read_file', description: 'Reads a file', parameters: { type: 'object' } }]);
    expect(withTools).toBeGreaterThan(one + 5);
    const calls = [{ id: 'c1', name: 'read_file', arguments: { path: 'a.txt' } }];
    expect(await estimateOutputTokens('openai:gpt-4o', 'hello world', calls)).toBeGreaterThan(2 + 5);
    expect(await estimateOutputTokens('openai:gpt-4o', '', [])).toBe(0);
  });
});

describe('token estimates, counted again', () => {
  it('gives the same count for a text it has counted before, whatever came between', async () => {
    const tools = [{ name: 'read_file', description: 'Reads a file from the workspace', parameters: { type: 'object', properties: { path: { type: 'string' } } } }];
    const messages = [{ role: 'system' as const, content: 'You are a data assistant.' }, { role: 'user' as const, content: 'Count the rows of orders.' }];
    const first = await estimateInputTokens('openai:gpt-4o', messages, tools);
    for (let i = 0; i < 5000; i++) await countTokens('openai:gpt-4o', `filler ${i}`);
    expect(await estimateInputTokens('openai:gpt-4o', messages, tools)).toBe(first);
    expect(await estimateInputTokens('openai:gpt-4', messages, tools)).not.toBe(0);
  });
});

describe('token estimates of hostile text', () => {
  it('counts a message of one 200,000-letter word in linear time, at least what it would encode to', async () => {
    // Byte-pair encoding is quadratic in a run of letters: encoded whole, this takes hours.
    const word = Array.from({ length: 200_000 }, (_, i) => String.fromCharCode(97 + ((i * 7919) % 26))).join('');
    const tokens = await estimateInputTokens('openai:gpt-4o', [{ role: 'user', content: `summarise ${word} please` }], []);
    expect(tokens).toBeGreaterThanOrEqual(200_000);
    expect(await countTokens('openai:gpt-4o', `${word.slice(0, 255)} and more`)).toBeLessThan(255);
    // A line of 100,000 dots is one run for the tokenizer too.
    expect(await countTokens('openai:gpt-4o', `tok1 ${'.'.repeat(100_000)}`)).toBeGreaterThanOrEqual(100_000);
  });
});
