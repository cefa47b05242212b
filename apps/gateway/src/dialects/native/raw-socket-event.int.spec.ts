import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from 'socket.io';
import { io as connect } from 'socket.io-client';
import { rawEventSender } from './raw-socket-event.js';

/** rawEventSender against a real Socket.IO server and client on loopback (the web UI's long-polling start is covered by its browser test). */

let http: HttpServer;
let server: Server;
let url: string;
/** Resolves once the server has seen a client go (a polling client's close is a request of its own). */
let serverSawDisconnect: () => Promise<void>;

beforeAll(async () => {
  http = createServer();
  server = new Server(http);
  for (const nsp of ['/', '/chat']) {
    server.of(nsp).on('connection', (socket) => {
      const gone = new Promise<void>((resolve) => socket.on('disconnect', () => resolve()));
      serverSawDisconnect = () => gone;
      const send = rawEventSender(socket, 'event');
      socket.on('relay', (json: string) => send(json));
    });
  }
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const published = [
  '{"seq":1,"event_type":"text","content":"héllo \\"quoted\\" \\u2028 line\\nbreak","nested":{"a":[1,2,null]}}',
  '{"seq":2,"event_type":"done","cancelled":false}',
];

describe.each([
  ['/', ['websocket']],
  ['/chat', ['websocket']],
] as const)('rawEventSender on %s over %s', (nsp, transports) => {
  it('delivers each JSON text as the event argument a client decodes, in order', async () => {
    const client = connect(`${url}${nsp}`, { transports: [...transports], forceNew: true, reconnection: false });
    const received: unknown[] = [];
    const all = new Promise<void>((resolve) =>
      client.on('event', (value: unknown) => {
        received.push(value);
        if (received.length === published.length) resolve();
      }),
    );
    await new Promise<void>((resolve) => client.on('connect', resolve));
    for (const json of published) client.emit('relay', json);
    await all;
    client.disconnect();
    await serverSawDisconnect();
    expect(received).toEqual(published.map((json) => JSON.parse(json)));
  });
});
