import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Identifiers compare byte for byte (see entities/column-types.ts). */
const ID = 'CHARACTER SET utf8mb4 COLLATE utf8mb4_bin';

/**
 * budgets: each tenant's token and cost budgets, per tenant or per person (`*`: each person),
 * per day or month; and the tenant's time zone, where those days and months start.
 */
export class Budgets1765411200000 implements MigrationInterface {
  name = 'Budgets1765411200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE \`budgets\` (
        \`tenant_id\` varchar(128) ${ID} NOT NULL,
        \`scope\` varchar(16) NOT NULL,
        \`user_id\` varchar(128) ${ID} NOT NULL DEFAULT '',
        \`metric\` varchar(16) NOT NULL,
        \`period\` varchar(16) NOT NULL,
        \`limit_tokens\` bigint NULL,
        \`limit_amount\` decimal(30,12) NULL,
        \`created_at\` datetime(3) NOT NULL,
        \`updated_at\` datetime(3) NOT NULL,
        PRIMARY KEY (\`tenant_id\`, \`scope\`, \`user_id\`, \`metric\`, \`period\`)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
    await queryRunner.query("ALTER TABLE `tenants` ADD `timezone` varchar(64) NOT NULL DEFAULT 'UTC'");
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE `tenants` DROP COLUMN `timezone`');
    await queryRunner.query('DROP TABLE IF EXISTS `budgets`');
  }
}
