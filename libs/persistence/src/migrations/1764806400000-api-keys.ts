import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Identifiers compare byte for byte (see entities/column-types.ts). */
const ID = 'CHARACTER SET utf8mb4 COLLATE utf8mb4_bin';

/** api_keys: keys issued through the API, stored as SHA-256 hashes with a visible prefix. */
export class ApiKeys1764806400000 implements MigrationInterface {
  name = 'ApiKeys1764806400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE \`api_keys\` (
        \`key_id\` varchar(36) ${ID} NOT NULL,
        \`tenant_id\` varchar(128) ${ID} NOT NULL,
        \`user_id\` varchar(128) ${ID} NOT NULL,
        \`role\` varchar(16) NOT NULL,
        \`prefix\` varchar(16) ${ID} NOT NULL,
        \`key_hash\` char(64) NOT NULL,
        \`created_by\` varchar(260) ${ID} NOT NULL,
        \`created_at\` datetime(3) NOT NULL,
        \`last_used_at\` datetime(3) NULL,
        \`expires_at\` datetime(3) NULL,
        \`revoked_at\` datetime(3) NULL,
        PRIMARY KEY (\`key_id\`),
        UNIQUE KEY \`uq_api_keys_hash\` (\`key_hash\`),
        KEY \`idx_api_keys_tenant\` (\`tenant_id\`, \`created_at\`)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE IF EXISTS `api_keys`');
  }
}
