import { LlmConfig } from '#core/config/settings.js';
import { AnthropicChatModel } from './anthropic-chat-model.js';
import { assistantModelName, createChatModel, createModel, describeChatModel, missingModelSettings } from './create-chat-model.js';
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

describe('createModel', () => {
  const keys = config({ openaiApiKey: SECRET, anthropicApiKey: SECRET });

  it('picks the provider from a provider: prefix, or from the name', () => {
    expect(createModel('anthropic:claude-sonnet-4-5', keys)).toBeInstanceOf(AnthropicChatModel);
    expect(createModel('anthropic:claude-sonnet-4-5', keys).id).toBe('anthropic:claude-sonnet-4-5');
    expect(createModel('claude-3-5-haiku-latest', keys).id).toBe('anthropic:claude-3-5-haiku-latest');
    expect(createModel('openai:gpt-4o', keys)).toBeInstanceOf(OpenAIChatModel);
    expect(createModel('gpt-4o', keys).id).toBe('openai:gpt-4o');
    expect(createModel('offline', keys)).toBeInstanceOf(OfflineChatModel);
    // Colons of OpenAI-compatible servers' own names are not providers.
    expect(createModel('llama3.1:8b', config({ openaiBaseUrl: 'http://127.0.0.1:11434/v1' })).id).toBe('openai:llama3.1:8b');
    expect(createModel('openai:llama3.1:8b', config({ openaiBaseUrl: 'http://127.0.0.1:11434/v1' })).id).toBe('openai:llama3.1:8b');
  });

  it('takes DATAAGENT_LLM_PROVIDER for names without a prefix', () => {
    expect(createModel('my-model', config({ provider: 'anthropic', anthropicApiKey: SECRET })).id).toBe('anthropic:my-model');
    expect(createModel('claude-x', config({ provider: 'offline', anthropicApiKey: SECRET }))).toBeInstanceOf(OfflineChatModel);
    expect(createModel('anthropic:claude-x', config({ provider: 'offline', anthropicApiKey: SECRET }))).toBeInstanceOf(AnthropicChatModel);
  });

  it('refuses a model whose provider has no key, naming the variable', () => {
    expect(() => createModel('claude-x', config({ openaiApiKey: SECRET }))).toThrow('The model claude-x needs ANTHROPIC_API_KEY.');
    expect(() => createModel('openai:gpt-4o', config({ anthropicApiKey: SECRET }))).toThrow(/needs OPENAI_API_KEY/);
  });
});

describe('assistantModelName and missingModelSettings', () => {
  const assistants = [
    { id: 'default', name: 'D', description: '', systemPrompt: '' },
    { id: 'analyst', name: 'A', description: '', systemPrompt: '', model: 'claude-opus-4' },
  ];

  it('takes an assistant\'s DATAAGENT_ASSISTANT_MODELS entry, else its own, else DATAAGENT_MODEL', () => {
    const c = config({ model: 'gpt-4o', assistantModels: ['default=anthropic:claude-haiku'] });
    expect(assistantModelName(assistants[0]!, c)).toBe('anthropic:claude-haiku');
    expect(assistantModelName(assistants[1]!, c)).toBe('claude-opus-4');
    expect(assistantModelName({ ...assistants[0]!, model: 'claude-opus-4' }, config({ assistantModels: ['default=offline'] }))).toBe('offline');
    expect(assistantModelName(assistants[0]!, config({ model: 'gpt-4o' }))).toBe('gpt-4o');
  });

  it('lists each model in use whose key is missing, and nothing when all are set', () => {
    expect(missingModelSettings(config({ model: 'openai:gpt-4o' }), assistants)).toEqual([
      'DATAAGENT_MODEL openai:gpt-4o needs OPENAI_API_KEY (or OPENAI_BASE_URL for an OpenAI-compatible server)',
      'the assistant catalog: the assistant "analyst" uses claude-opus-4, which needs ANTHROPIC_API_KEY',
    ]);
    expect(missingModelSettings(config({ anthropicApiKey: SECRET }), assistants)).toEqual([]);
  });
});

describe('describeChatModel', () => {
  it('names provider, model and endpoint but never the key or URL credentials', () => {
    const line = describeChatModel(config({ openaiApiKey: SECRET, openaiBaseUrl: 'https://user:pw@llm.example.test/v1?api_key=abc', model: 'm1' }));
    expect(line).toBe('openai-compatible model m1 at https://llm.example.test/v1 (API key set)');
    expect(describeChatModel(config({}))).toMatch(/^offline model/);
    expect(describeChatModel(config({ openaiApiKey: SECRET }))).not.toContain(SECRET);
    expect(describeChatModel(config({ model: 'claude-sonnet-4-5', anthropicApiKey: SECRET }))).toBe('anthropic model claude-sonnet-4-5 at https://api.anthropic.com (API key set)');
  });
});
