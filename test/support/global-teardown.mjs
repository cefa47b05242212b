/** Jest global teardown: stops the servers from global-setup.mjs and removes their folder. */
import { rm } from 'node:fs/promises';
import { HANDLES_KEY } from './global-setup.mjs';

export default async function globalTeardown() {
  const handles = globalThis[HANDLES_KEY];
  if (!handles) return;
  delete globalThis[HANDLES_KEY];
  const results = await Promise.allSettled([handles.redis.stop(), handles.mariadb.stop()]);
  await rm(handles.dir, { recursive: true, force: true });
  const failure = results.find((r) => r.status === 'rejected');
  if (failure) throw failure.reason;
}
