/** What clients see of an assistant (GET /agents) and what workers build it from. */
export interface AssistantInfo {
  id: string;
  name: string;
  description: string;
  systemPrompt: string;
  /** Its model (`provider:model` or a name) when not DATAAGENT_MODEL; DATAAGENT_ASSISTANT_MODELS overrides it. */
  model?: string;
}

export const DEFAULT_ASSISTANT_ID = 'default';

export const BUILTIN_ASSISTANTS: readonly AssistantInfo[] = [
  {
    id: DEFAULT_ASSISTANT_ID,
    name: 'DataAgent',
    description: 'General-purpose assistant that answers, plans and uses the tools it is given.',
    systemPrompt:
      'You are DataAgent, a helpful assistant. Answer clearly and concisely. ' +
      'Use a tool only when it helps answer the request, and explain what you did.',
  },
];

export function findAssistant(id: string): AssistantInfo | undefined {
  return BUILTIN_ASSISTANTS.find((a) => a.id === id);
}
