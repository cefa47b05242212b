import type { RedisClient } from './redis-connection.js';
import { redisKeys } from './redis-keys.js';

/**
 * Which model each assistant runs on, as the workers of one queue announced it when they started.
 * Only workers read the LLM settings (and hold the keys); the gateway shows what they announced.
 * Model ids are `provider:model` or `offline`, never a key or an endpoint.
 */
export class AssistantModels {
  private readonly key: string;

  constructor(
    private readonly redis: RedisClient,
    queueName: string,
  ) {
    this.key = redisKeys.assistantModels(queueName);
  }

  /** Replaces the whole announcement, so an assistant that is gone is gone from it too. */
  async announce(models: ReadonlyMap<string, string>): Promise<void> {
    const tx = this.redis.multi().del(this.key);
    if (models.size > 0) tx.hset(this.key, Object.fromEntries(models));
    await tx.exec();
  }

  /** Model id by assistant id; empty until a worker has started. */
  async read(): Promise<Map<string, string>> {
    return new Map(Object.entries(await this.redis.hgetall(this.key)));
  }
}
