import { registerDecorator, type ValidationArguments } from 'class-validator';
import { findAssistant } from './assistant-catalog.js';

export const MODEL_PROVIDERS = ['openai', 'anthropic', 'offline'] as const;
export type ModelProvider = (typeof MODEL_PROVIDERS)[number];

/** A configured model name split: the provider it names, if it names one, and the model. */
export interface ModelName {
  provider?: ModelProvider;
  model: string;
}

/**
 * `anthropic:claude-…`, `openai:gpt-…` and `offline` name their provider; anything else is a bare
 * model name whose provider is decided later. Only those prefixes count, because model names of
 * OpenAI-compatible servers have colons of their own (Ollama's `llama3.1:8b`).
 */
export function parseModelName(name: string): ModelName {
  const value = name.trim();
  if (value === 'offline') return { provider: 'offline', model: 'offline' };
  const colon = value.indexOf(':');
  const prefix = colon > 0 ? value.slice(0, colon) : '';
  if ((MODEL_PROVIDERS as readonly string[]).includes(prefix)) return { provider: prefix as ModelProvider, model: value.slice(colon + 1).trim() };
  return { model: value };
}

/** Why a model name is unusable, or null. */
function modelNameProblem(name: string): string | null {
  const { provider, model } = parseModelName(name);
  if (model === '') return provider ? `"${name}" names the provider ${provider} but no model` : 'is empty';
  return null;
}

/**
 * Reads DATAAGENT_ASSISTANT_MODELS: entries `assistant_id=model`, each naming an assistant of the
 * catalog once.
 * @returns the model name of each assistant listed, and a problem per bad entry.
 */
export function parseAssistantModels(entries: readonly string[]): { models: Map<string, string>; problems: string[] } {
  const models = new Map<string, string>();
  const problems: string[] = [];
  entries.forEach((entry, i) => {
    const eq = entry.indexOf('=');
    const id = eq > 0 ? entry.slice(0, eq).trim() : '';
    const model = eq > 0 ? entry.slice(eq + 1).trim() : '';
    const problem =
      eq <= 0 ? `entry ${i + 1} ${JSON.stringify(entry)} is not assistant_id=model`
      : !findAssistant(id) ? `entry ${i + 1}: there is no assistant "${id}"`
      : models.has(id) ? `entry ${i + 1}: the assistant "${id}" is listed twice`
      : modelNameProblem(model);
    if (problem) problems.push(problem.startsWith('entry') ? problem : `entry ${i + 1}: the model ${problem}`);
    else models.set(id, model);
  });
  return { models, problems };
}

/** Validates DATAAGENT_MODEL: a bare name, `provider:model` or `offline`. */
export function IsModelName(): PropertyDecorator {
  return (target, property) =>
    registerDecorator({
      name: 'isModelName',
      target: target.constructor,
      propertyName: String(property),
      validator: {
        validate: (value: unknown) => typeof value === 'string' && modelNameProblem(value) === null,
        defaultMessage: ({ value }: ValidationArguments) =>
          `must be a model name, provider:model (providers: ${MODEL_PROVIDERS.join(', ')}) or offline: it ${typeof value === 'string' ? modelNameProblem(value) : 'is not text'}`,
      },
    });
}

/** Validates DATAAGENT_ASSISTANT_MODELS with {@link parseAssistantModels}, naming every bad entry. */
export function IsAssistantModels(): PropertyDecorator {
  return (target, property) =>
    registerDecorator({
      name: 'isAssistantModels',
      target: target.constructor,
      propertyName: String(property),
      validator: {
        validate: (value: unknown) => Array.isArray(value) && parseAssistantModels(value.map(String)).problems.length === 0,
        defaultMessage: ({ value }: ValidationArguments) =>
          `must be assistant_id=model entries, comma-separated: ${Array.isArray(value) ? parseAssistantModels(value.map(String)).problems.join('; ') : 'not a list'}`,
      },
    });
}
