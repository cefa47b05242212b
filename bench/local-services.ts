import type { ChildProcess } from 'node:child_process';
import type { Redis } from 'ioredis';
import { pathToFileURL } from 'node:url';
import { repoRoot } from './repo-paths.js';

/** A server started by scripts/local-services.mjs. */
export interface LocalServerHandle {
  process: ChildProcess;
  startedInMs: number;
  stop(): Promise<void>;
}

export interface RedisHandle extends LocalServerHandle {
  url: string;
  port: number;
}

export interface MariadbHandle extends LocalServerHandle {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  socketPath: string;
}

/** The part of scripts/local-services.mjs the bench uses, typed (the script ships no declarations). */
export interface LocalServices {
  ensureServerPackages(options?: { log?: (line: string) => void }): Promise<void>;
  startRedis(options: { dir: string; persist?: boolean }): Promise<RedisHandle>;
  startMariadb(options: { dir: string; database: string; user: string; password: string; durable?: boolean }): Promise<MariadbHandle>;
}

/** Loads scripts/local-services.mjs from the repository (it is not compiled into dist/). */
export async function loadLocalServices(): Promise<LocalServices> {
  const url = pathToFileURL(`${repoRoot}scripts/local-services.mjs`).href;
  return (await import(url)) as LocalServices;
}

/** What scripts/redis-cluster.mjs's startRedisCluster hands back, typed (the part the bench uses). */
export interface RedisClusterHandle {
  /** `127.0.0.1:p1,127.0.0.1:p2,...`: every node, masters and replicas. */
  seeds: string;
  /** Every node as started. */
  nodes: Array<{ port: number; pid: number }>;
  startedInMs: number;
  /** The masters owning slots, ordered by their first slot. */
  masters(): Promise<Array<{ port: number; slots: Array<[number, number]> }>>;
  stop(): Promise<void>;
}

/** Loads scripts/redis-cluster.mjs from the repository (it is not compiled into dist/). */
export async function loadRedisCluster(): Promise<{
  startRedisCluster(options: { dir: string; masters?: number; replicasPerMaster?: number; nodeTimeoutMs?: number }): Promise<RedisClusterHandle>;
  /** A probe connection to one node on loopback (no retries, no offline queue); the caller closes it. */
  connectNode(port: number, timeoutMs?: number, commandTimeoutMs?: number): Promise<Redis>;
}> {
  const url = pathToFileURL(`${repoRoot}scripts/redis-cluster.mjs`).href;
  return (await import(url)) as Awaited<ReturnType<typeof loadRedisCluster>>;
}
