import { decisionOf, messageText, unsupported } from './a2a-requests.js';

describe('reading A2A requests', () => {
  it('reads an approval from text or from a data part, and refuses anything else with the way to answer', () => {
    expect(decisionOf([{ text: 'Approve. Go ahead' }])).toEqual({ decision: 'approve', message: 'Go ahead' });
    expect(decisionOf([{ text: 'no' }])).toEqual({ decision: 'reject', message: '' });
    expect(decisionOf([{ text: 'ignored' }, { data: { decision: 'approve_all', request_id: 'r:c:h', message: 'ok' } }])).toEqual({ decision: 'approve_all', requestId: 'r:c:h', message: 'ok' });
    expect(() => decisionOf([{ text: 'maybe later' }])).toThrow(/"approve" or "reject"/);
    expect(() => decisionOf([{ data: { decision: 'perhaps' } }])).toThrow(/approve, reject or approve_all/);
  });

  it('joins text parts, and names the A2A error of each method it does not offer', () => {
    expect(messageText([{ text: 'a' }, { data: {} }, { text: 'b' }])).toBe('ab');
    expect(unsupported('CreateTaskPushNotificationConfig').code).toBe(-32003);
    expect(unsupported('GetExtendedAgentCard').code).toBe(-32007);
    expect(unsupported('ListTasks').code).toBe(-32004);
    expect(unsupported('tasks/whatever')).toMatchObject({ code: -32601, message: expect.stringContaining('SendMessage') });
  });
});
