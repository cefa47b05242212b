import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sessions that go soon after their last activity (a stateless OpenAI-compatible call's), found
 * by the sweep from an index rather than a scan.
 */
export class EphemeralSessions1765238400000 implements MigrationInterface {
  name = 'EphemeralSessions1765238400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE `sessions` ADD `ephemeral` tinyint NOT NULL DEFAULT 0');
    await queryRunner.query('CREATE INDEX `idx_sessions_ephemeral_activity` ON `sessions` (`ephemeral`, `last_active_at`)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX `idx_sessions_ephemeral_activity` ON `sessions`');
    await queryRunner.query('ALTER TABLE `sessions` DROP COLUMN `ephemeral`');
  }
}
