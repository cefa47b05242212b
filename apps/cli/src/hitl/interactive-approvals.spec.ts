import type { ActionRequest } from '#core/events/execution-event.js';
import type { ApprovalAnswer, ApprovalQuestion } from './approver.js';
import { InteractiveApprovals } from './interactive-approvals.js';

const action: ActionRequest = { name: 'write_file', args: { path: 'a' } };
const request = (sessionId: string) => ({ requestId: 'q', runId: 'r', sessionId, action });

describe('InteractiveApprovals', () => {
  function answering(...answers: ApprovalAnswer[]) {
    const asked: ApprovalQuestion[] = [];
    const handler = new InteractiveApprovals(async (question) => {
      asked.push(question);
      return answers.shift()!;
    });
    return { handler, asked };
  }

  it('asks the person and turns their answer into a decision; a rejection ends the run', async () => {
    const { handler, asked } = answering('approve', 'reject');
    const signal = new AbortController().signal;
    expect(await handler.open(request('s'))).toBe('ask');
    expect(await handler.requestApproval(action, 's', signal, 'q1')).toEqual({ type: 'approve' });
    const rejected = await handler.requestApproval(action, 's', signal, 'q2');
    expect(rejected.type).toBe('reject');
    expect(rejected.tellModel).toBeUndefined();
    expect(asked.map((q) => q.requestId)).toEqual(['q1', 'q2']);
  });

  it('approve_all stops asking in that session only', async () => {
    const { handler } = answering('approve_all');
    expect(await handler.requestApproval(action, 's', new AbortController().signal)).toEqual({ type: 'approve' });
    expect(await handler.open(request('s'))).toBe('approved');
    expect(await handler.open(request('other'))).toBe('ask');
  });
});
