import { withoutUrlSecrets } from './stream-tickets.service.js';

describe('withoutUrlSecrets', () => {
  it('masks a stream ticket or an api_key in a logged URL, and nothing else', () => {
    expect(withoutUrlSecrets('/api/v1/runs/r1/events?ticket=dast_abc&after_seq=3')).toBe('/api/v1/runs/r1/events?ticket=***&after_seq=3');
    expect(withoutUrlSecrets('/ws/chat/s1?transport=x&API_KEY=secret#frag')).toBe('/ws/chat/s1?transport=x&API_KEY=***#frag');
    expect(withoutUrlSecrets('/api/v1/sessions?my_ticket=1&limit=5')).toBe('/api/v1/sessions?my_ticket=1&limit=5');
    expect(withoutUrlSecrets(undefined)).toBeUndefined();
  });
});
