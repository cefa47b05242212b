import { bindingMatcher, TOOL_PATTERN, type ToolBinding } from './tool-bindings.js';

const binding = (over: Partial<ToolBinding>): ToolBinding => ({ bindingId: 'b', tenantId: 't', tools: [], createdAt: new Date(0), ...over });

describe('tool bindings', () => {
  it('allows every tool when no binding applies to the run', () => {
    expect(bindingMatcher([], { agentId: 'a' })).toBeNull();
    expect(bindingMatcher([binding({ agentId: 'other', tools: ['x.y'] }), binding({ apiKeyId: 'k2', tools: ['x.y'] })], { agentId: 'a', apiKeyId: 'k1' })).toBeNull();
  });

  it("allows only the tools of the bindings of the run's agent and key: exact, server.* and *", () => {
    const allowed = bindingMatcher(
      [binding({ agentId: 'a', tools: ['mall4j.order.get_detail'] }), binding({ apiKeyId: 'k1', tools: ['files.*'] }), binding({ agentId: 'b', tools: ['*'] })],
      { agentId: 'a', apiKeyId: 'k1' },
    )!;
    expect(allowed('mall4j.order.get_detail')).toBe(true);
    expect(allowed('mall4j.product.search')).toBe(false);
    expect(allowed('files.read')).toBe(true);
    expect(allowed('filesx.read')).toBe(false);
    expect(bindingMatcher([binding({ agentId: 'b', tools: ['*'] })], { agentId: 'b' })!('anything.at_all')).toBe(true);
  });

  it('accepts only tool patterns', () => {
    for (const ok of ['*', 'files.*', 'mall4j.order.get_detail', 'ev-http.get-sum']) expect(TOOL_PATTERN.test(ok)).toBe(true);
    for (const bad of ['', 'files', '.x', 'a b.c', 'files.', '*.read', 'a.b c']) expect(TOOL_PATTERN.test(bad)).toBe(false);
  });
});
