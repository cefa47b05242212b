import type { MysqlConfig } from '#core/config/settings.js';
import { MemoryConversationStore } from '#core/session/memory-conversation-store.js';
import type { ConversationStore } from '#core/session/session-store.js';
import { MysqlConversationStore, type ConversationStoreOptions } from './mysql-conversation-store.js';

/**
 * The store DATAAGENT_SESSION_STORE selects: `memory` for one process, `mysql` otherwise
 * (connected and migrated before it is returned). `options.cipher` encrypts MCP servers' secrets.
 * @throws DatabaseUnavailableError when `mysql` is chosen and the database cannot be reached.
 */
export async function createConversationStore(
  kind: 'mysql' | 'memory',
  mysql: MysqlConfig,
  options: ConversationStoreOptions = {},
): Promise<ConversationStore> {
  if (kind === 'memory') return new MemoryConversationStore(undefined, options.cipher, options.memory);
  return MysqlConversationStore.open(mysql, options);
}
