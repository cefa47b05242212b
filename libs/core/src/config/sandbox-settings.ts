import { IsIn, IsInt, IsNumber, IsOptional, Max, Min } from 'class-validator';
import { Env } from './env.js';

/** Worker: how shell commands, skill scripts and stdio MCP servers are confined (see docs/security.md). */
export class SandboxConfig {
  /**
   * Where shell commands, skill scripts and stdio MCP servers run: `bwrap` (bubblewrap; the worker
   * does not start when it does not work) or `none` (see the security guide). Unset: `bwrap` where
   * a trial command works, else `none` with a warning.
   * @defaultValue unset: `bwrap` where a trial command works, else `none`
   */
  @Env('DATAAGENT_SANDBOX') @IsOptional() @IsIn(['bwrap', 'none'], { message: 'must be bwrap or none' })
  mode?: 'bwrap' | 'none';

  /**
   * Memory of each sandboxed process (RLIMIT_DATA) and, where the worker may make control groups
   * (root with cgroup v1 or v2), of all of one sandbox's processes together.
   */
  @Env('DATAAGENT_SANDBOX_MEMORY', 'bytes') @IsInt({ message: 'must be a size: bytes, or with a unit (256MB, 1GiB)' }) @Min(16 * 1024 ** 2)
  memoryBytes = 512 * 1024 ** 2;

  /** Processes and threads of one sandbox (cgroup `pids.max`; without control groups RLIMIT_NPROC, which a root worker counts per user). */
  @Env('DATAAGENT_SANDBOX_PROCESSES', 'int') @IsInt() @Min(4) @Max(100_000)
  processes = 64;

  /** CPU seconds of each sandboxed process. */
  @Env('DATAAGENT_SANDBOX_CPU_SECONDS', 'int') @IsInt() @Min(1)
  cpuSeconds = 120;

  /**
   * CPUs all of one sandbox's processes may use at once, where the worker may make control groups
   * (cgroup `cpu`: `cpu.cfs_quota_us` on v1, `cpu.max` on v2); a number, `0.5` for half a CPU.
   */
  @Env('DATAAGENT_SANDBOX_CPUS', 'number') @IsNumber({}, { message: 'must be a number of CPUs (1, 0.5, 2)' }) @Min(0.01) @Max(4096)
  cpus = 1;

  /**
   * CPUs all of one tenant's sandboxes on a worker's host may use at once (a control group per
   * tenant, holding its sandboxes' groups); the worker itself is outside these groups and the
   * sandboxes together weigh a quarter of one of its processes.
   * @defaultValue half the host's CPUs, at least `1`
   */
  @Env('DATAAGENT_SANDBOX_TENANT_CPUS', 'number') @IsOptional() @IsNumber({}, { message: 'must be a number of CPUs (1, 0.5, 2)' }) @Min(0.01) @Max(4096)
  tenantCpus?: number;

  /** The largest file a sandboxed process may write; a shell command or skill script gets at most the room its workspace quota has left. */
  @Env('DATAAGENT_SANDBOX_FILE_SIZE', 'bytes') @IsInt({ message: 'must be a size: bytes, or with a unit (256MB, 1GiB)' }) @Min(1024)
  fileBytes = 256 * 1024 ** 2;

  /** Open files of each sandboxed process. */
  @Env('DATAAGENT_SANDBOX_OPEN_FILES', 'int') @IsInt() @Min(16)
  openFiles = 256;

  /**
   * When the worker runs as root, it runs each user's sandboxes as this base + (hash of tenant and
   * user mod 65,536), one of 65,536 OS user ids (200000-265535 by default), and gives that user's
   * workspace to it.
   */
  @Env('DATAAGENT_SANDBOX_UID_BASE', 'int') @IsInt() @Min(1000) @Max(2 ** 32 - 65_538)
  uidBase = 200_000;
}
