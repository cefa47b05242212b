/**
 * Preloaded with `--import` (which, unlike `--cpu-prof`, NODE_OPTIONS accepts) into a process
 * the bench starts: records a V8 CPU profile from startup until the process is told to stop
 * (SIGTERM) or exits, and writes it to BENCH_CPU_PROFILE_OUT (open it in Chrome DevTools or
 * speedscope).
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const out = process.env.BENCH_CPU_PROFILE_OUT;
if (out) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.start');
  let written = false;
  // Posts on an in-process session answer synchronously, so this also works in an exit handler.
  const write = () => {
    if (written) return;
    written = true;
    session.post('Profiler.stop', (err, result) => {
      if (!err) writeFileSync(out, JSON.stringify(result.profile));
    });
  };
  process.once('exit', write);
  // NestJS ends its SIGTERM shutdown by re-raising the signal, so no 'exit' event follows: write
  // at the signal (the load is over by then), then leave the signal to the process's own handlers.
  const onSigterm = () => {
    write();
    if (process.listenerCount('SIGTERM') === 0) process.kill(process.pid, 'SIGTERM');
  };
  process.once('SIGTERM', onSigterm);
}
