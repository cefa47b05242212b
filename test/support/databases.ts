import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import type { MysqlConfig } from '#core/config/settings.js';

/** Connection settings of one test file's own database (a MysqlConfig, pool size included). */
export type TestDatabase = Pick<MysqlConfig, 'host' | 'port' | 'user' | 'password' | 'database' | 'poolSize'>;

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests through jest, whose global setup starts MariaDB.`);
  return value;
}

async function asRoot<T>(work: (conn: mysql.Connection) => Promise<T>): Promise<T> {
  const conn = await mysql.createConnection({ socketPath: required('DATAAGENT_TEST_MYSQL_ROOT_SOCKET'), user: 'root' });
  try {
    return await work(conn);
  } finally {
    await conn.end();
  }
}

/**
 * Creates an empty, uniquely named database that the harness's test user may use, so each
 * test file (or system under test) has tables of its own.
 *
 * @param prefix Readable part of the name (letters, digits, _), e.g. the test file's topic.
 */
export async function createTestDatabase(prefix: string): Promise<TestDatabase> {
  const user = required('DATAAGENT_MYSQL_USER');
  const safePrefix = prefix.toLowerCase().replace(/[^a-z0-9_]/g, '_').slice(0, 30);
  const database = `t_${safePrefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  await asRoot(async (conn) => {
    await conn.query(`CREATE DATABASE ${conn.escapeId(database)} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
    for (const host of ['127.0.0.1', 'localhost']) {
      await conn.query(`GRANT ALL PRIVILEGES ON ${conn.escapeId(database)}.* TO ?@?`, [user, host]);
    }
  });
  return {
    host: required('DATAAGENT_MYSQL_HOST'),
    port: Number(required('DATAAGENT_MYSQL_PORT')),
    user,
    password: process.env.DATAAGENT_MYSQL_PASSWORD ?? '',
    database,
    poolSize: 10,
  };
}

/** Drops a database made by createTestDatabase (no error when it is already gone). */
export async function dropTestDatabase(name: string): Promise<void> {
  await asRoot(async (conn) => {
    await conn.query(`DROP DATABASE IF EXISTS ${conn.escapeId(name)}`);
  });
}

/** The DATAAGENT_MYSQL_* variables that point an app at a test database. */
export function mysqlEnv(db: TestDatabase): NodeJS.ProcessEnv {
  return {
    DATAAGENT_MYSQL_HOST: db.host,
    DATAAGENT_MYSQL_PORT: String(db.port),
    DATAAGENT_MYSQL_USER: db.user,
    DATAAGENT_MYSQL_PASSWORD: db.password,
    DATAAGENT_MYSQL_DATABASE: db.database,
  };
}

/** The MySQL settings a test's own store connects with, from a system's environment. */
export function mysqlSettings(env: NodeJS.ProcessEnv) {
  return {
    host: env.DATAAGENT_MYSQL_HOST!,
    port: Number(env.DATAAGENT_MYSQL_PORT),
    user: env.DATAAGENT_MYSQL_USER!,
    password: env.DATAAGENT_MYSQL_PASSWORD!,
    database: env.DATAAGENT_MYSQL_DATABASE!,
  };
}
