import { randomUUID } from 'node:crypto';
import { waitUntil } from '#test/support/event-waits.js';
import { harnessRedisUrl } from '#test/support/harness-redis.js';
import { ControlBus, type ControlMessage } from './control-bus.js';
import { announceMcpRelease, listenMcpReleases, type McpReleaseMessage } from './mcp-release.js';
import { createRedis, type RedisClient } from './redis-connection.js';
import { redisKeys } from './redis-keys.js';
import { UserEventBus, type UserEventMessage } from './user-event-bus.js';

/** The pub/sub listeners built on RedisChannelListener, against the harness Redis, on one shared subscriber connection. */

let commands: RedisClient;
let subscriber: RedisClient;
let subscriberId: number;

beforeAll(async () => {
  const url = harnessRedisUrl();
  commands = createRedis(url, 'spec-channel-commands');
  subscriber = createRedis(url, 'spec-channel-subscriber');
  subscriberId = Number(await subscriber.client('ID'));
});

afterAll(async () => {
  await Promise.all([commands, subscriber].map((c) => c?.quit()));
});

describe('pub/sub listeners (Redis)', () => {
  it('each hears its own messages on a shared connection, and drops what is not one', async () => {
    const control: ControlMessage[] = [];
    const user: UserEventMessage[] = [];
    const releases: McpReleaseMessage[] = [];
    const controlBus = new ControlBus(commands, subscriber);
    const userBus = new UserEventBus(commands, subscriber);
    const stopControl = await controlBus.listen((m) => control.push(m));
    const stopUser = await userBus.listen((m) => user.push(m));
    await listenMcpReleases(subscriber, (m) => releases.push(m));
    try {
      const runId = `spec-run-${randomUUID()}`;
      for (const channel of [redisKeys.controlChannel, redisKeys.userEventsChannel, redisKeys.mcpReleaseChannel]) {
        await commands.publish(channel, 'not json');
        await commands.publish(channel, '{"type":"cancel"}');
      }
      await controlBus.publish({ type: 'cancel', run_id: runId });
      const userMessage: UserEventMessage = { tenant_id: 't', user_id: 'u', event: { event_type: 'mcp_config_changed', server_name: 'github', change: 'created', timestamp: '' } };
      await userBus.publish(userMessage);
      await announceMcpRelease(commands, [{ tenant_id: 't', user_id: 'u', reason: 'sessions_ended' }]);
      await waitUntil(() => control.length + user.length + releases.length >= 3);
      expect(control).toEqual([{ type: 'cancel', run_id: runId }]);
      expect(user).toEqual([userMessage]);
      expect(releases).toEqual([{ tenant_id: 't', user_id: 'u', reason: 'sessions_ended' }]);
    } finally {
      stopControl();
      stopUser();
    }
  });

  it('is subscribed when listen resolves, on a connection still connecting (40 new connections)', async () => {
    const url = harnessRedisUrl();
    const missed: string[] = [];
    for (let i = 0; i < 40; i++) {
      // Listened on while the connection still connects, a few milliseconds in, as a process does at start.
      const fresh = createRedis(url, `spec-channel-fresh-${i}`);
      try {
        await new Promise((resolve) => setTimeout(resolve, i % 5)); // where in the handshake the listen comes
        const heard: string[] = [];
        await listenMcpReleases(fresh, (m) => heard.push(m.user_id));
        const user = `spec-user-${randomUUID()}`;
        await announceMcpRelease(commands, [{ tenant_id: 't', user_id: user, reason: 'sessions_ended' }]);
        // A release published after it is heard; one not heard within 2 s never will be.
        await waitUntil(() => heard.includes(user), 2_000).catch(() => missed.push(`connection ${i}`));
      } finally {
        fresh.disconnect();
      }
    }
    expect(missed).toEqual([]);
  });

  it('hears messages again after Redis dropped the subscriber connection', async () => {
    const heard: string[] = [];
    const stop = await new ControlBus(commands, subscriber).listen((m) => heard.push(m.type === 'cancel' ? m.run_id : ''));
    try {
      await commands.client('KILL', 'ID', String(subscriberId));
      const runId = `spec-run-${randomUUID()}`;
      // At most once: what is published while the connection is away is lost, so publish until one arrives.
      await waitUntil(async () => {
        await commands.publish(redisKeys.controlChannel, JSON.stringify({ type: 'cancel', run_id: runId }));
        return heard.includes(runId);
      });
    } finally {
      stop();
    }
  });
});
