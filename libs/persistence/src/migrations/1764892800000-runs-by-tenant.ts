import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Counts a tenant's active runs (its concurrent-runs quota) from an index. */
export class RunsByTenant1764892800000 implements MigrationInterface {
  name = 'RunsByTenant1764892800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('CREATE INDEX `idx_runs_tenant_status` ON `runs` (`tenant_id`, `status`)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX `idx_runs_tenant_status` ON `runs`');
  }
}
