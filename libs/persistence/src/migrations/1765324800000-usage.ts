import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Identifiers compare byte for byte (see entities/column-types.ts). */
const ID = 'CHARACTER SET utf8mb4 COLLATE utf8mb4_bin';

/**
 * What model calls cost. `usage_facts`: one row per call (a run's `usage` event), keyed by
 * (run_id, seq) so a batch archived twice counts once, with the run's owner for the reports'
 * filters; `day` is the call's date in UTC. A run's totals on its row, once it has ended.
 * `model_prices`: the price table operators set (one row), and `model_price_changes` who
 * changed it, when, from what to what.
 */
export class Usage1765324800000 implements MigrationInterface {
  name = 'Usage1765324800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE \`usage_facts\` (
        \`run_id\` varchar(64) ${ID} NOT NULL,
        \`seq\` int unsigned NOT NULL,
        \`tenant_id\` varchar(128) ${ID} NOT NULL,
        \`user_id\` varchar(128) ${ID} NOT NULL,
        \`assistant_id\` varchar(128) ${ID} NOT NULL,
        \`session_id\` varchar(64) ${ID} NOT NULL,
        \`model\` varchar(200) ${ID} NOT NULL,
        \`day\` date NOT NULL,
        \`occurred_at\` datetime(3) NOT NULL,
        \`input_tokens\` int unsigned NOT NULL,
        \`output_tokens\` int unsigned NOT NULL,
        \`cached_input_tokens\` int unsigned NOT NULL,
        \`estimated\` tinyint NOT NULL,
        \`cost\` decimal(30,12) NOT NULL,
        \`currency\` varchar(10) ${ID} NOT NULL,
        PRIMARY KEY (\`run_id\`, \`seq\`),
        KEY \`idx_usage_facts_tenant_day\` (\`tenant_id\`, \`day\`),
        KEY \`idx_usage_facts_tenant_user_day\` (\`tenant_id\`, \`user_id\`, \`day\`)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
    await queryRunner.query('ALTER TABLE `runs` ADD `input_tokens` bigint unsigned NULL, ADD `output_tokens` bigint unsigned NULL, ADD `cost` decimal(30,12) NULL');
    await queryRunner.query(`
      CREATE TABLE \`model_prices\` (
        \`id\` tinyint unsigned NOT NULL,
        \`prices\` longtext NOT NULL,
        \`currency\` varchar(10) ${ID} NOT NULL,
        \`updated_at\` datetime(3) NOT NULL,
        \`updated_by\` varchar(300) ${ID} NOT NULL,
        PRIMARY KEY (\`id\`)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
    await queryRunner.query(`
      CREATE TABLE \`model_price_changes\` (
        \`id\` bigint unsigned NOT NULL AUTO_INCREMENT,
        \`changed_at\` datetime(3) NOT NULL,
        \`changed_by\` varchar(300) ${ID} NOT NULL,
        \`before_prices\` longtext NULL,
        \`after_prices\` longtext NOT NULL,
        PRIMARY KEY (\`id\`)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE IF EXISTS `model_price_changes`');
    await queryRunner.query('DROP TABLE IF EXISTS `model_prices`');
    await queryRunner.query('ALTER TABLE `runs` DROP COLUMN `cost`, DROP COLUMN `output_tokens`, DROP COLUMN `input_tokens`');
    await queryRunner.query('DROP TABLE IF EXISTS `usage_facts`');
  }
}
