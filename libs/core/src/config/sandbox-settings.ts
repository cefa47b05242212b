import { IsIn, IsInt, IsNumber, IsOptional, Max, Min } from 'class-validator';
import { Env } from './env.js';

/** Worker: how shell commands, skill scripts and stdio MCP servers are confined (see the README's Security section). */
export class SandboxConfig {
  /** `bwrap` (bubblewrap; the start fails when it does not work), `none`, or unset: bwrap where it works, else none with a warning. */
  @Env('DATAAGENT_SANDBOX') @IsOptional() @IsIn(['bwrap', 'none'], { message: 'must be bwrap or none' })
  mode?: 'bwrap' | 'none';

  /** Memory of each sandboxed process and, with control groups, of one sandbox's processes together. */
  @Env('DATAAGENT_SANDBOX_MEMORY', 'bytes') @IsInt({ message: 'must be a size: bytes, or with a unit (256MB, 1GiB)' }) @Min(16 * 1024 ** 2)
  memoryBytes = 512 * 1024 ** 2;

  /** Processes and threads of one sandbox (per user without control groups on a root worker). */
  @Env('DATAAGENT_SANDBOX_PROCESSES', 'int') @IsInt() @Min(4) @Max(100_000)
  processes = 64;

  /** CPU seconds of each sandboxed process. */
  @Env('DATAAGENT_SANDBOX_CPU_SECONDS', 'int') @IsInt() @Min(1)
  cpuSeconds = 120;

  /** CPUs one sandbox's processes may use together, where control groups bound it (cgroup `cpu`: a CFS quota). */
  @Env('DATAAGENT_SANDBOX_CPUS', 'number') @IsNumber({}, { message: 'must be a number of CPUs (1, 0.5, 2)' }) @Min(0.01) @Max(4096)
  cpus = 1;

  /** CPUs all of one tenant's sandboxes on a worker's host may use together; unset: half the host's CPUs, at least 1. */
  @Env('DATAAGENT_SANDBOX_TENANT_CPUS', 'number') @IsOptional() @IsNumber({}, { message: 'must be a number of CPUs (1, 0.5, 2)' }) @Min(0.01) @Max(4096)
  tenantCpus?: number;

  /** The largest file a sandboxed process may write. */
  @Env('DATAAGENT_SANDBOX_FILE_SIZE', 'bytes') @IsInt({ message: 'must be a size: bytes, or with a unit (256MB, 1GiB)' }) @Min(1024)
  fileBytes = 256 * 1024 ** 2;

  /** Open files of each sandboxed process. */
  @Env('DATAAGENT_SANDBOX_OPEN_FILES', 'int') @IsInt() @Min(16)
  openFiles = 256;

  /** When the worker runs as root: the first of the 65,536 OS user ids sandboxes run as, one per user by a hash (200000-265535 by default). */
  @Env('DATAAGENT_SANDBOX_UID_BASE', 'int') @IsInt() @Min(1000) @Max(2 ** 32 - 65_538)
  uidBase = 200_000;
}
