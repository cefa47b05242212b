import { routeLabel } from './http-metrics.js';

describe('routeLabel', () => {
  it('is the matched route template, never the path with its ids', () => {
    expect(routeLabel({ baseUrl: '', route: { path: '/api/v1/sessions/:sessionId' } })).toBe('/api/v1/sessions/:sessionId');
    expect(routeLabel({ baseUrl: '/admin', route: { path: '/queues/:name' } })).toBe('/admin/queues/:name');
  });

  it('is `unmatched` when no route took the request', () => {
    expect(routeLabel({ baseUrl: '' })).toBe('unmatched');
    expect(routeLabel({ baseUrl: '', route: { path: /^\/x/ } })).toBe('unmatched');
  });
});
