import { LlmConfig } from '#core/config/settings.js';
import { createChatModel, describeChatModel } from './create-chat-model.js';
import { OfflineChatModel } from './offline-chat-model.js';
import { OpenAIChatModel } from './openai-chat-model.js';

const SECRET = 'sk-live-DO-NOT-LOG-1234567890';
const config = (fields: Partial<LlmConfig>) => Object.assign(new LlmConfig(), fields);

describe('createChatModel', () => {
  it('uses the offline model in auto mode when neither key nor base URL is set', () => {
    expect(createChatModel(config({}))).toBeInstanceOf(OfflineChatModel);
    expect(createChatModel(config({ openaiApiKey: '  ' }))).toBeInstanceOf(OfflineChatModel);
  });

  it('uses OpenAI in auto mode when a key or a base URL is set', () => {
    expect(createChatModel(config({ openaiApiKey: SECRET }))).toBeInstanceOf(OpenAIChatModel);
    const local = createChatModel(config({ openaiBaseUrl: 'http://127.0.0.1:11434/v1', model: 'llama3' }));
    expect(local).toBeInstanceOf(OpenAIChatModel);
    expect(local.id).toBe('openai:llama3');
  });

  it('honours an explicit provider', () => {
    expect(createChatModel(config({ provider: 'offline', openaiApiKey: SECRET }))).toBeInstanceOf(OfflineChatModel);
    expect(() => createChatModel(config({ provider: 'openai' }))).toThrow(/OPENAI_API_KEY.*OPENAI_BASE_URL/);
  });
});

describe('describeChatModel', () => {
  it('names provider, model and endpoint but never the key or URL credentials', () => {
    const line = describeChatModel(config({ openaiApiKey: SECRET, openaiBaseUrl: 'https://user:pw@llm.example.test/v1?api_key=abc', model: 'm1' }));
    expect(line).toBe('openai-compatible model m1 at https://llm.example.test/v1 (API key set)');
    expect(describeChatModel(config({}))).toMatch(/^offline model/);
    expect(describeChatModel(config({ openaiApiKey: SECRET }))).not.toContain(SECRET);
  });
});
