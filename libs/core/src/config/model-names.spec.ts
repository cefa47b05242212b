import { loadConfig } from './env.js';
import { parseAssistantModels, parseModelName } from './model-names.js';
import { LlmConfig } from './settings.js';

describe('parseModelName', () => {
  it('splits a known provider prefix off, and leaves other colons in the name', () => {
    expect(parseModelName('anthropic:claude-sonnet-4-5')).toEqual({ provider: 'anthropic', model: 'claude-sonnet-4-5' });
    expect(parseModelName('openai:gpt-4o')).toEqual({ provider: 'openai', model: 'gpt-4o' });
    expect(parseModelName('offline')).toEqual({ provider: 'offline', model: 'offline' });
    expect(parseModelName('qwen2.5:7b')).toEqual({ model: 'qwen2.5:7b' });
    expect(parseModelName('claude-x')).toEqual({ model: 'claude-x' });
  });
});

describe('parseAssistantModels', () => {
  it('reads assistant_id=model entries and names each bad one', () => {
    expect(parseAssistantModels(['default = anthropic:claude-x']).models).toEqual(new Map([['default', 'anthropic:claude-x']]));
    expect(parseAssistantModels(['default', 'ghost=gpt-4o', 'default=anthropic:', 'default=gpt-4o', 'default=offline']).problems).toEqual([
      'entry 1 "default" is not assistant_id=model',
      'entry 2: there is no assistant "ghost"',
      'entry 3: the model "anthropic:" names the provider anthropic but no model',
      'entry 5: the assistant "default" is listed twice',
    ]);
  });
});

describe('LlmConfig model settings', () => {
  it('refuses a bad DATAAGENT_MODEL and bad DATAAGENT_ASSISTANT_MODELS entries at load', () => {
    expect(() => loadConfig(LlmConfig, { DATAAGENT_MODEL: 'anthropic:' }, [])).toThrow(/DATAAGENT_MODEL: must be a model name.*names the provider anthropic but no model/);
    expect(() => loadConfig(LlmConfig, { DATAAGENT_ASSISTANT_MODELS: 'ghost=gpt-4o' }, [])).toThrow(/DATAAGENT_ASSISTANT_MODELS: .*there is no assistant "ghost"/);
    expect(loadConfig(LlmConfig, { DATAAGENT_MODEL: 'anthropic:claude-x', DATAAGENT_ASSISTANT_MODELS: 'default=offline' }, [])).toMatchObject({ model: 'anthropic:claude-x', assistantModels: ['default=offline'] });
  });
});
