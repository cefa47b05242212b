import { ApiProperty } from '@nestjs/swagger';
import type { Role } from '#core/auth/caller.js';

/** Who an API key belongs to. */
export class WhoAmI {
  @ApiProperty()
  tenant_id: string;

  @ApiProperty({ description: 'The id the per-user routes take (`/users/{userId}/...`)' })
  user_id: string;

  @ApiProperty({ enum: ['user', 'admin', 'operator'] })
  role: Role;

  @ApiProperty({ description: 'The gateway runs without keys (DATAAGENT_AUTH_DISABLED): everyone is the same anonymous user' })
  auth_disabled: boolean;
}

export class MemoryCleared {
  @ApiProperty()
  user_id: string;

  @ApiProperty({ enum: [true] })
  cleared: true;
}
