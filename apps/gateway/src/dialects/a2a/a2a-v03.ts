import type { A2aArtifact, A2aMessage, A2aPart, A2aStreamResponse, A2aTask, A2aTaskState, A2aTaskStatus } from './a2a-task-projection.js';

/**
 * A2A 0.3's JSON-RPC method names and the 1.0 methods they are: 0.3 clients (and the issue's
 * `message/send` ... `tasks/resubscribe`) reach the same calls, answered in 0.3's shapes.
 */
export const V03_METHODS: Readonly<Record<string, string>> = {
  'message/send': 'SendMessage',
  'message/stream': 'SendStreamingMessage',
  'tasks/get': 'GetTask',
  'tasks/cancel': 'CancelTask',
  'tasks/resubscribe': 'SubscribeToTask',
  'tasks/pushNotificationConfig/set': 'CreateTaskPushNotificationConfig',
  'tasks/pushNotificationConfig/get': 'GetTaskPushNotificationConfig',
  'tasks/pushNotificationConfig/list': 'ListTaskPushNotificationConfigs',
  'tasks/pushNotificationConfig/delete': 'DeleteTaskPushNotificationConfig',
  'agent/getAuthenticatedExtendedCard': 'GetExtendedAgentCard',
};

const STATES: Record<A2aTaskState, string> = {
  TASK_STATE_SUBMITTED: 'submitted',
  TASK_STATE_WORKING: 'working',
  TASK_STATE_INPUT_REQUIRED: 'input-required',
  TASK_STATE_COMPLETED: 'completed',
  TASK_STATE_CANCELED: 'canceled',
  TASK_STATE_FAILED: 'failed',
};

/** 0.3 marks the update after which nothing more comes on a stream: an end, or a wait for input. */
const LAST_ON_STREAM: ReadonlySet<A2aTaskState> = new Set(['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_COMPLETED', 'TASK_STATE_CANCELED', 'TASK_STATE_FAILED']);

/** A 1.0 task in 0.3's shape (`kind: "task"`, lower-case states, parts with `kind`). */
export function v03Task(task: A2aTask): Record<string, unknown> {
  return { kind: 'task', id: task.id, contextId: task.contextId, status: v03Status(task.status), artifacts: task.artifacts.map(v03Artifact), metadata: task.metadata };
}

/** A 1.0 stream item in 0.3's shape: a task, a `status-update` (with `final`) or an `artifact-update`. */
export function v03StreamResponse(response: A2aStreamResponse): Record<string, unknown> {
  if ('task' in response) return v03Task(response.task);
  if ('statusUpdate' in response) {
    const { status, ...rest } = response.statusUpdate;
    return { kind: 'status-update', ...rest, status: v03Status(status), final: LAST_ON_STREAM.has(status.state) };
  }
  const { artifact, ...rest } = response.artifactUpdate;
  return { kind: 'artifact-update', ...rest, artifact: v03Artifact(artifact) };
}

function v03Status(status: A2aTaskStatus): Record<string, unknown> {
  return { state: STATES[status.state], ...(status.message ? { message: v03Message(status.message) } : {}), ...(status.timestamp ? { timestamp: status.timestamp } : {}) };
}

function v03Message(message: A2aMessage): Record<string, unknown> {
  return { kind: 'message', messageId: message.messageId, contextId: message.contextId, taskId: message.taskId, role: message.role === 'ROLE_USER' ? 'user' : 'agent', parts: message.parts.map(v03Part) };
}

function v03Artifact(artifact: A2aArtifact): Record<string, unknown> {
  return { artifactId: artifact.artifactId, name: artifact.name, parts: artifact.parts.map(v03Part) };
}

function v03Part(part: A2aPart): Record<string, unknown> {
  return 'text' in part ? { kind: 'text', text: part.text } : { kind: 'data', data: part.data };
}
