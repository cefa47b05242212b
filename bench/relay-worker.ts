/**
 * The worker half of the bare relay (bare-relay.ts): the same hops as a DataAgent worker with
 * nothing else. It takes start requests from a Redis channel (where DataAgent has its queue),
 * streams the scripted LLM's answer over SSE with undici's `request` (what the worker's
 * leanFetch uses), and PUBLISHes each text chunk as a text-event-shaped JSON message on the
 * stream's channel: `run_started`, one `text` per chunk, `done`. No queue, log, ledger, auth,
 * storage, logging or metrics.
 *
 * `node dist/bench/relay-worker.js <redis url> <LLM base url>` prints `{"ready":true}` once
 * subscribed and runs until SIGTERM or its parent's IPC channel closes.
 */
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { Agent, request } from 'undici';
import { RELAY_START_CHANNEL, relayStreamChannel, type RelayStartRequest } from './relay-channels.js';

const dispatcher = new Agent();

/** Streams one answer, publishing every event of the stream on its channel. */
async function relay(publisher: Redis, llmBaseUrl: string, { id, message }: RelayStartRequest): Promise<void> {
  const channel = relayStreamChannel(id);
  let seq = 0;
  const publish = (eventType: string, fields: Record<string, unknown>) =>
    publisher.publish(channel, JSON.stringify({ event_type: eventType, timestamp: new Date().toISOString(), session_id: id, run_id: id, seq: ++seq, ...fields }));
  void publish('run_started', {});
  try {
    const answer = await request(`${llmBaseUrl}/chat/completions`, {
      dispatcher,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench-relay' },
      body: JSON.stringify({ model: 'scripted', messages: [{ role: 'user', content: message }], stream: true }),
    });
    let buffered = '';
    answer.body.setEncoding('utf8');
    for await (const read of answer.body as AsyncIterable<string>) {
      buffered += read;
      let end: number;
      while ((end = buffered.indexOf('\n\n')) !== -1) {
        const frame = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (!frame.startsWith('data: ') || frame === 'data: [DONE]') continue;
        const content = (JSON.parse(frame.slice(6)) as { choices?: Array<{ delta?: { content?: string } }> }).choices?.[0]?.delta?.content;
        if (content) void publish('text', { content, is_final: false });
      }
    }
    void publish('done', { status: 'completed' });
  } catch (err) {
    void publish('error', { error_code: 'relay_failed', message: String(err) });
    void publish('done', { status: 'failed' });
  }
}

async function main(): Promise<void> {
  const [redisUrl, llmBaseUrl] = process.argv.slice(2);
  if (!redisUrl || !llmBaseUrl) throw new Error('usage: relay-worker.js <redis url> <LLM base url>');
  const publisher = new Redis(redisUrl);
  const subscriber = new Redis(redisUrl);
  subscriber.on('message', (_channel: string, raw: string) => void relay(publisher, llmBaseUrl, JSON.parse(raw) as RelayStartRequest));
  await subscriber.subscribe(RELAY_START_CHANNEL);
  process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
  const shutdown = () => {
    subscriber.disconnect();
    publisher.disconnect();
    void dispatcher.close().finally(() => process.exit(0));
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
  process.once('disconnect', shutdown);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    process.stderr.write(`relay-worker: ${String(err)}\n`);
    process.exit(1);
  });
}
