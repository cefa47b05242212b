import type { DataSource } from 'typeorm';
import type { MysqlConfig } from '#core/config/settings.js';
import type { ConversationStore } from '#core/session/session-store.js';
import { openDatabase, type OpenDatabaseOptions } from './data-source.js';
import { MysqlMessageStore } from './mysql-message-store.js';
import { MysqlRunEventArchive } from './mysql-run-event-archive.js';
import { MysqlRunStore } from './mysql-run-store.js';
import { MysqlSessionStore } from './mysql-session-store.js';

/** Sessions, messages, runs and run events in MySQL/MariaDB through TypeORM. */
export class MysqlConversationStore implements ConversationStore {
  readonly sessions: MysqlSessionStore;
  readonly messages: MysqlMessageStore;
  readonly runs: MysqlRunStore;
  readonly events: MysqlRunEventArchive;

  /**
   * @param dataSource An initialized data source at the latest schema (see openDatabase).
   * @param now The clock for created/updated/finished times and session expiry.
   */
  constructor(
    private readonly dataSource: DataSource,
    now: () => Date = () => new Date(),
  ) {
    this.sessions = new MysqlSessionStore(dataSource, now);
    this.messages = new MysqlMessageStore(dataSource, now);
    this.runs = new MysqlRunStore(dataSource, now);
    this.events = new MysqlRunEventArchive(dataSource, now);
  }

  /**
   * Connects (tolerating a database that is still starting), migrates, and returns the store.
   * @throws DatabaseUnavailableError when the database cannot be reached.
   */
  static async open(config: MysqlConfig, options?: OpenDatabaseOptions): Promise<MysqlConversationStore> {
    return new MysqlConversationStore(await openDatabase(config, options));
  }

  /** True when the database answers `SELECT 1` within `timeoutMs`. */
  async ping(timeoutMs = 2_000): Promise<boolean> {
    if (!this.dataSource.isInitialized) return false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    const query = this.dataSource.query('SELECT 1').then(
      () => true,
      () => false,
    );
    try {
      return await Promise.race([query, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }
}
