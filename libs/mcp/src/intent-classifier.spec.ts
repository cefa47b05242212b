import type { ChatModel, ModelRequest } from '#core/llm/chat-model.js';
import { llmIntentClassifier } from './intent-classifier.js';

/** A model that answers every request with `answer`, in two chunks, and records what it was asked. */
function model(answer: string | (() => never)): ChatModel & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    id: 'fake',
    requests,
    async *stream(request: ModelRequest) {
      requests.push(request);
      if (typeof answer === 'function') answer();
      const text = answer as string;
      yield { type: 'text', text: text.slice(0, 3) };
      yield { type: 'text', text: text.slice(3) };
      yield { type: 'finish', reason: 'stop' };
    },
  };
}

const servers = [
  { name: 'jira', description: 'issue tracker', triggerKeywords: ['ticket'] },
  { name: 'weather', description: 'weather service' },
];
const signal = new AbortController().signal;

describe('llmIntentClassifier', () => {
  it('asks the model once, without tools, naming each server, and keeps only known names', async () => {
    const m = model('Sure: ["jira", "nope", "jira"]');
    expect(await llmIntentClassifier(m)('帮我看一下 PROJ-7 的进展', servers, signal)).toEqual(['jira']);
    expect(m.requests).toHaveLength(1);
    expect(m.requests[0]!.tools).toEqual([]);
    expect(m.requests[0]!.messages[0]!.content).toContain('- jira: issue tracker (ticket)');
    expect(m.requests[0]!.messages[1]).toEqual({ role: 'user', content: '帮我看一下 PROJ-7 的进展' });
  });

  it('counts an empty, unreadable or failed answer as no server', async () => {
    expect(await llmIntentClassifier(model('[]'))('x', servers, signal)).toEqual([]);
    expect(await llmIntentClassifier(model('I think jira'))('x', servers, signal)).toEqual([]);
    expect(await llmIntentClassifier(model('[jira'))('x', servers, signal)).toEqual([]);
    expect(
      await llmIntentClassifier(
        model(() => {
          throw new Error('rate limited');
        }),
      )('x', servers, signal),
    ).toEqual([]);
  });

  it('gives up at its timeout', async () => {
    const slow: ChatModel = {
      id: 'slow',
      async *stream(request) {
        await new Promise((resolve) => request.signal.addEventListener('abort', resolve, { once: true }));
        throw new Error('aborted');
      },
    };
    expect(await llmIntentClassifier(slow, 50)('x', servers, signal)).toEqual([]);
  });
});
