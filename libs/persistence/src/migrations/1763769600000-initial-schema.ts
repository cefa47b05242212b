import type { MigrationInterface, QueryRunner } from 'typeorm';

const TABLE_OPTIONS = 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci';

/** Identifiers compare byte for byte (see entities/column-types.ts). */
const ID = 'CHARACTER SET utf8mb4 COLLATE utf8mb4_bin';

/** sessions, messages, runs and run_events (batched), with the indexes their queries use. */
export class InitialSchema1763769600000 implements MigrationInterface {
  name = 'InitialSchema1763769600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE \`sessions\` (
        \`session_id\` varchar(64) ${ID} NOT NULL,
        \`tenant_id\` varchar(128) ${ID} NOT NULL,
        \`user_id\` varchar(128) ${ID} NOT NULL,
        \`assistant_id\` varchar(128) ${ID} NOT NULL,
        \`title\` varchar(512) NOT NULL DEFAULT '',
        \`metadata\` json NOT NULL,
        \`created_at\` datetime(3) NOT NULL,
        \`updated_at\` datetime(3) NOT NULL,
        \`last_active_at\` datetime(3) NOT NULL,
        PRIMARY KEY (\`session_id\`),
        KEY \`idx_sessions_user_activity\` (\`tenant_id\`, \`user_id\`, \`last_active_at\`),
        KEY \`idx_sessions_assistant_activity\` (\`tenant_id\`, \`assistant_id\`, \`last_active_at\`),
        KEY \`idx_sessions_last_active\` (\`last_active_at\`)
      ) ${TABLE_OPTIONS}`);

    await queryRunner.query(`
      CREATE TABLE \`messages\` (
        \`id\` bigint unsigned NOT NULL AUTO_INCREMENT,
        \`message_id\` varchar(64) ${ID} NOT NULL,
        \`session_id\` varchar(64) ${ID} NOT NULL,
        \`run_id\` varchar(64) ${ID} NULL,
        \`role\` varchar(16) NOT NULL,
        \`content\` longtext NOT NULL,
        \`metadata\` json NOT NULL,
        \`created_at\` datetime(3) NOT NULL,
        PRIMARY KEY (\`id\`),
        UNIQUE KEY \`uq_messages_message_id\` (\`message_id\`),
        KEY \`idx_messages_session_order\` (\`session_id\`, \`id\`)
      ) ${TABLE_OPTIONS}`);

    await queryRunner.query(`
      CREATE TABLE \`runs\` (
        \`id\` bigint unsigned NOT NULL AUTO_INCREMENT,
        \`run_id\` varchar(64) ${ID} NOT NULL,
        \`session_id\` varchar(64) ${ID} NOT NULL,
        \`tenant_id\` varchar(128) ${ID} NOT NULL,
        \`user_id\` varchar(128) ${ID} NOT NULL,
        \`assistant_id\` varchar(128) ${ID} NOT NULL,
        \`status\` varchar(16) NOT NULL,
        \`error\` text NULL,
        \`created_at\` datetime(3) NOT NULL,
        \`started_at\` datetime(3) NULL,
        \`finished_at\` datetime(3) NULL,
        PRIMARY KEY (\`id\`),
        UNIQUE KEY \`uq_runs_run_id\` (\`run_id\`),
        KEY \`idx_runs_session_status\` (\`session_id\`, \`status\`)
      ) ${TABLE_OPTIONS}`);

    await queryRunner.query(`
      CREATE TABLE \`run_events\` (
        \`id\` bigint unsigned NOT NULL AUTO_INCREMENT,
        \`run_id\` varchar(64) ${ID} NOT NULL,
        \`session_id\` varchar(64) ${ID} NOT NULL,
        \`seq_from\` int unsigned NOT NULL,
        \`seq_to\` int unsigned NOT NULL,
        \`events\` longtext NOT NULL,
        \`created_at\` datetime(3) NOT NULL,
        PRIMARY KEY (\`id\`),
        UNIQUE KEY \`uq_run_events_run_seq\` (\`run_id\`, \`seq_from\`),
        KEY \`idx_run_events_session\` (\`session_id\`)
      ) ${TABLE_OPTIONS}`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['run_events', 'runs', 'messages', 'sessions']) {
      await queryRunner.query(`DROP TABLE IF EXISTS \`${table}\``);
    }
  }
}
