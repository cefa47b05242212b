import { renderResult } from './mcp-tools.js';

describe('renderResult', () => {
  it('gives the model text as it is, with structured content beside it, and no event content', () => {
    expect(renderResult({ content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] })).toEqual({ success: true, output: 'a\nb' });
    expect(renderResult({ content: [{ type: 'text', text: '{"n":1}' }], structuredContent: { n: 1 } })).toEqual({
      success: true,
      output: { text: '{"n":1}', structured_content: { n: 1 } },
    });
  });

  it('describes images, audio and resources to the model and keeps them whole for the event', () => {
    const content = [
      { type: 'text' as const, text: 'Here:' },
      { type: 'image' as const, data: 'iVBORw0KGgo=', mimeType: 'image/png' },
      { type: 'audio' as const, data: 'AAAA', mimeType: 'audio/wav' },
      { type: 'resource_link' as const, uri: 'file:///r/1', name: 'one', mimeType: 'text/plain' },
      { type: 'resource' as const, resource: { uri: 'file:///r/2', text: 'inline text' } },
      { type: 'resource' as const, resource: { uri: 'file:///r/3', blob: 'AAAAAAAA', mimeType: 'application/octet-stream' } },
    ];
    const result = renderResult({ content });
    expect(result.output).toBe(
      'Here:\n[image image/png, 9 bytes]\n[audio audio/wav, 3 bytes]\n[resource one file:///r/1 (text/plain)]\ninline text\n[resource file:///r/3 (application/octet-stream), 6 bytes]',
    );
    expect(String(result.output)).not.toContain('iVBORw0KGgo=');
    expect(result.content).toEqual(content);
  });

  it('reports a tool error with its text', () => {
    expect(renderResult({ content: [{ type: 'text', text: 'no such row' }], isError: true })).toEqual({ success: false, output: null, error: 'no such row' });
    expect(renderResult({ content: [], isError: true })).toMatchObject({ success: false, error: 'The tool reported an error' });
  });
});
