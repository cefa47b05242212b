import { approvalRequestId, runOfRequest, toolCallOfRequest } from './approval-request-id.js';

describe('approval request ids', () => {
  it('give back the run and the tool call they were made of, a call id with colons included', () => {
    for (const call of ['call_1', 'fc:abc:1', 'toolu_01A']) {
      const id = approvalRequestId('3f1c2a9e-run', call, 'e3b0c44298fc1c149afbf4c8996fb924');
      expect(id).toBe(`3f1c2a9e-run:${call}:e3b0c44298fc1c14`);
      expect(toolCallOfRequest(id)).toBe(call);
      expect(runOfRequest(id)).toBe('3f1c2a9e-run');
    }
  });

  it('take an id of another shape as its own call, of no run', () => {
    expect(toolCallOfRequest('req-42')).toBe('req-42');
    expect(runOfRequest('req-42')).toBeUndefined();
  });
});
