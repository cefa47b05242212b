import { ApiProperty } from '@nestjs/swagger';
import type { Role } from '#core/auth/caller.js';

/** An issued key as the API lists it: never the key or its hash. */
export class ApiKeyView {
  @ApiProperty({ description: 'Revoke it with DELETE /api/v1/admin/api-keys/{key_id}' })
  key_id: string;

  @ApiProperty({ description: "The key's first characters, to tell keys apart" })
  prefix: string;

  @ApiProperty()
  tenant_id: string;

  @ApiProperty()
  user_id: string;

  @ApiProperty({ enum: ['user', 'admin', 'operator'] })
  role: Role;

  @ApiProperty({ description: '`<tenant_id>/<user_id>` of the admin who issued it' })
  created_by: string;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  last_used_at: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'null: it does not expire' })
  expires_at: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  revoked_at: string | null;
}

/** A key just issued: the only answer that shows the key itself. */
export class IssuedApiKey extends ApiKeyView {
  @ApiProperty({ description: 'Send it as X-API-Key (or Authorization: Bearer); it is not shown again' })
  key: string;
}

export class ApiKeyList {
  @ApiProperty({ type: [ApiKeyView] })
  api_keys: ApiKeyView[];

  @ApiProperty({ type: 'integer' })
  limit: number;

  @ApiProperty({ type: 'integer' })
  offset: number;
}

export class ApiKeyRevoked {
  @ApiProperty()
  key_id: string;

  @ApiProperty({ enum: [true] })
  revoked: true;
}
