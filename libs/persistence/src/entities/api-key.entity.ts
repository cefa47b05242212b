import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { idColumn, primaryIdColumn, timestampColumn } from './column-types.js';

/** An API key issued through the API: its hash, never the key. Index names match the migration. */
@Entity({ name: 'api_keys' })
@Index('uq_api_keys_hash', ['keyHash'], { unique: true })
@Index('idx_api_keys_tenant', ['tenantId', 'createdAt'])
export class ApiKeyEntity {
  @PrimaryColumn(primaryIdColumn('key_id', 36))
  keyId: string;

  @Column(idColumn('tenant_id', 128))
  tenantId: string;

  @Column(idColumn('user_id', 128))
  userId: string;

  @Column({ type: 'varchar', length: 16 })
  role: string;

  @Column(idColumn('prefix', 16))
  prefix: string;

  @Column({ name: 'key_hash', type: 'char', length: 64 })
  keyHash: string;

  @Column(idColumn('created_by', 260))
  createdBy: string;

  @Column(timestampColumn('created_at'))
  createdAt: Date;

  @Column(timestampColumn('last_used_at', true))
  lastUsedAt: Date | null;

  @Column(timestampColumn('expires_at', true))
  expiresAt: Date | null;

  @Column(timestampColumn('revoked_at', true))
  revokedAt: Date | null;
}
