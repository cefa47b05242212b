import type { Worker } from 'node:cluster';
import { AggregatorRegistry, Counter, Gauge, Registry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import type { Metrics } from '#telemetry/metrics.js';

/**
 * With DATAAGENT_WORKERS > 1 a scrape of `/metrics` lands on one gateway process, picked round
 * robin. Prometheus expects one target to tell one consistent story, so that process asks the
 * primary, the primary collects every process's registry over IPC and sums them with
 * prom-client's cluster aggregator (counters and histograms add up, the event-loop lag is
 * averaged), and the answer covers the whole host.
 */

/** A gateway process asks the primary for the whole cluster's metrics. */
const SCRAPE = 'dataagent:metrics:scrape';
/** The primary asks each gateway process for its registry. */
const COLLECT = 'dataagent:metrics:collect';
/** A gateway process's registry, as prom-client's JSON. */
const COLLECTED = 'dataagent:metrics:collected';
/** The primary's answer to {@link SCRAPE}: the aggregated text, or why there is none. */
const SCRAPED = 'dataagent:metrics:scraped';

type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

interface MetricsMessage {
  type: typeof SCRAPE | typeof COLLECT | typeof COLLECTED | typeof SCRAPED;
  id: number;
  metrics?: MetricsJson;
  text?: string;
  error?: string;
}

function isMetricsMessage(message: unknown): message is MetricsMessage {
  const m = message as Partial<MetricsMessage> | null;
  return typeof m === 'object' && m !== null && typeof m.id === 'number' && [SCRAPE, COLLECT, COLLECTED, SCRAPED].includes(m.type as string);
}

/** One collection in flight: the processes still to answer, and what the others sent. */
interface Collection {
  waiting: Set<number>;
  answers: MetricsJson[];
  settle: () => void;
}

/** The primary's side: its own figures about the processes, and the aggregation of every process's registry. */
export class ClusterMetricsAggregator {
  readonly registry = new Registry();
  readonly processes = new Gauge({ name: 'dataagent_gateway_processes', help: 'Gateway processes of this host serving now (DATAAGENT_WORKERS)', registers: [this.registry] });
  readonly restarts = new Counter({ name: 'dataagent_gateway_process_restarts_total', help: 'Gateway processes of this host the primary started again after one exited', registers: [this.registry] });
  private readonly collections = new Map<number, Collection>();
  private nextId = 0;

  /**
   * @param members The gateway processes to collect from: those serving now.
   * @param timeoutMs How long a process may take to answer before the scrape fails.
   */
  constructor(private readonly members: () => Worker[], private readonly timeoutMs = 5_000) {}

  /** Handles a gateway process's metrics message; false for any other message. */
  handle(worker: Worker, message: unknown): boolean {
    if (!isMetricsMessage(message)) return false;
    if (message.type === SCRAPE) {
      this.aggregate().then(
        (text) => send(worker, { type: SCRAPED, id: message.id, text }),
        (err: unknown) => send(worker, { type: SCRAPED, id: message.id, error: err instanceof Error ? err.message : String(err) }),
      );
    } else if (message.type === COLLECTED) {
      const collection = this.collections.get(message.id);
      if (collection?.waiting.delete(worker.id)) {
        collection.answers.push(message.metrics ?? []);
        if (collection.waiting.size === 0) collection.settle();
      }
    }
    return true;
  }

  /** A process that exited answers nothing more: collections stop waiting for it (its counters went with it). */
  forget(worker: Worker): void {
    for (const collection of this.collections.values()) {
      if (collection.waiting.delete(worker.id) && collection.waiting.size === 0) collection.settle();
    }
  }

  /**
   * Every serving process's registry and the primary's own, summed.
   * @throws Error when a process does not answer within the timeout: a partial sum would look like counters resetting.
   */
  async aggregate(): Promise<string> {
    const id = this.nextId++;
    const members = this.members();
    const answers = await new Promise<MetricsJson[]>((resolve, reject) => {
      const collection: Collection = { waiting: new Set(members.map((w) => w.id)), answers: [], settle: () => undefined };
      const timer = setTimeout(() => {
        this.collections.delete(id);
        const late = members.filter((w) => collection.waiting.has(w.id)).map((w) => w.process.pid);
        reject(new Error(`gateway process(es) ${late.join(', ')} did not report their metrics within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      collection.settle = () => {
        clearTimeout(timer);
        this.collections.delete(id);
        resolve(collection.answers);
      };
      this.collections.set(id, collection);
      if (collection.waiting.size === 0) return collection.settle();
      for (const worker of members) send(worker, { type: COLLECT, id });
    });
    const own = (await this.registry.getMetricsAsJSON()) as MetricsJson;
    return AggregatorRegistry.aggregate([own, ...answers]).metrics();
  }
}

function send(worker: Worker, message: MetricsMessage): void {
  // A process that just exited cannot be written to; its collection settles through forget().
  if (worker.isConnected()) worker.send(message, undefined, () => undefined);
}

/** A gateway process's side: answers the primary's collections and scrapes the whole cluster through it. */
export class ClusterMetricsClient {
  private readonly scrapes = new Map<number, { resolve: (text: string) => void; reject: (err: Error) => void; timer: NodeJS.Timeout }>();
  private nextId = 0;

  /**
   * @param metrics This process's metrics.
   * @param appendix Text added once to the cluster's (figures every process would report the same: BullMQ's queue counts).
   * @param timeoutMs How long a scrape waits for the primary.
   */
  constructor(private readonly metrics: Metrics, private readonly appendix: () => Promise<string>, private readonly timeoutMs = 10_000) {
    process.on('message', (message) => {
      if (!isMetricsMessage(message)) return;
      if (message.type === COLLECT) void this.collect(message.id);
      else if (message.type === SCRAPED) this.answered(message);
    });
  }

  /** The Prometheus text of every gateway process of this host, summed, then the appendix. */
  async scrape(): Promise<string> {
    const id = this.nextId++;
    const cluster = new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.scrapes.delete(id);
        reject(new Error(`the gateway primary did not answer a metrics scrape within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.scrapes.set(id, { resolve, reject, timer });
      process.send!({ type: SCRAPE, id } satisfies MetricsMessage);
    });
    const [text, appendix] = await Promise.all([cluster, this.appendix().catch(() => '')]);
    return [text.trimEnd(), appendix.trimEnd()].filter(Boolean).join('\n') + '\n';
  }

  private async collect(id: number): Promise<void> {
    // Metrics.scrape() runs the samplers (pool gauges) before reading; its text is not needed here.
    await this.metrics.scrape().catch(() => undefined);
    const metrics = (await this.metrics.registry.getMetricsAsJSON()) as MetricsJson;
    process.send?.({ type: COLLECTED, id, metrics } satisfies MetricsMessage);
  }

  private answered(message: MetricsMessage): void {
    const scrape = this.scrapes.get(message.id);
    if (!scrape) return;
    this.scrapes.delete(message.id);
    clearTimeout(scrape.timer);
    if (message.text !== undefined) scrape.resolve(message.text);
    else scrape.reject(new Error(message.error ?? 'no metrics'));
  }
}
