import type { HitlDecisionType } from '../../runs/run-control.service.js';
import { A2aRpcError, RPC_CODE } from './a2a-rpc.js';

/** What the message of a SendMessage request may carry (proto JSON; the rest is ignored). */
export interface IncomingMessage {
  messageId?: unknown;
  contextId?: unknown;
  taskId?: unknown;
  role?: unknown;
  parts?: unknown;
  metadata?: unknown;
}

export interface IncomingPart {
  text?: unknown;
  data?: unknown;
}

/** A message's text: its text parts, joined. */
export function messageText(parts: IncomingPart[]): string {
  return parts.flatMap((p) => (typeof p?.text === 'string' ? [p.text] : [])).join('');
}

/** The decision a message carries: a data part `{decision, request_id?, message?}`, or its text. */
export function decisionOf(parts: IncomingPart[]): { decision: HitlDecisionType; requestId?: string; message: string } {
  for (const part of parts) {
    const data = part?.data as { decision?: unknown; request_id?: unknown; message?: unknown } | undefined;
    if (data && typeof data === 'object' && data.decision !== undefined) {
      const decision = DECISIONS[String(data.decision).trim().toLowerCase()];
      if (!decision) throw invalidParams('message.parts', 'data.decision must be approve, reject or approve_all');
      return { decision, ...(typeof data.request_id === 'string' ? { requestId: data.request_id } : {}), message: typeof data.message === 'string' ? data.message : '' };
    }
  }
  const text = parts.flatMap((p) => (typeof p?.text === 'string' ? [p.text] : [])).join(' ').trim();
  const [word, ...rest] = text.split(/\s+/);
  const decision = DECISIONS[(word ?? '').toLowerCase().replace(/[.!,]+$/, '')];
  if (!decision) throw invalidParams('message.parts', 'must answer the approval: "approve" or "reject" as text, or a data part {"decision": "approve" | "reject" | "approve_all"}');
  return { decision, message: rest.join(' ') };
}

const DECISIONS: Record<string, HitlDecisionType> = {
  approve: 'approve',
  approved: 'approve',
  yes: 'approve',
  reject: 'reject',
  rejected: 'reject',
  no: 'reject',
  approve_all: 'approve_all',
};

export function taskIdOf(params: Record<string, unknown>): string {
  if (typeof params.id !== 'string' || params.id === '') throw invalidParams('id', 'must be the task id');
  return params.id;
}

export function assistantOf(metadata: unknown): string | undefined {
  const id = (metadata as { assistant_id?: unknown } | null | undefined)?.assistant_id;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

export function invalidParams(field: string, message: string): A2aRpcError {
  return new A2aRpcError(RPC_CODE.invalidParams, `${field} ${message}`, { error_code: 'validation_failed', details: { fields: { [field]: [message] } } });
}

/** What a method this endpoint does not offer answers. */
export function unsupported(method: string): A2aRpcError {
  if (/PushNotificationConfig/.test(method)) return new A2aRpcError(RPC_CODE.pushNotificationNotSupported, 'Push notifications are not supported: follow a task with SubscribeToTask', { error_code: 'push_notifications_not_supported' });
  if (method === 'GetExtendedAgentCard') return new A2aRpcError(RPC_CODE.extendedCardNotConfigured, 'There is no extended agent card', { error_code: 'extended_card_not_configured' });
  if (method === 'ListTasks') return new A2aRpcError(RPC_CODE.unsupportedOperation, 'ListTasks is not supported: GET /api/v1/sessions lists the conversations (contexts)', { error_code: 'unsupported_operation' });
  return new A2aRpcError(RPC_CODE.methodNotFound, `Method not found: ${method}. This endpoint speaks A2A 1.0: SendMessage, SendStreamingMessage, GetTask, CancelTask, SubscribeToTask`, { error_code: 'method_not_found' });
}

