/**
 * Programs that run whatever their arguments say: package runners, interpreters, shells, and
 * wrappers that start another command. Allowing one with any arguments allows everything
 * (`npx -c 'sh …'`, `node -e …`, `python -c …`, `bash -c …`, `env sh`, `timeout 9 sh`), so the
 * stdio allowlist takes them only with the exact arguments the operator pinned.
 *
 * The list cannot name every such program: it names the common ones so that an operator's slip
 * (`npx` alone, a folder holding a `python3` link) is refused rather than trusted.
 */
const LAUNCHERS = new Set([
  // package runners and managers
  'npx', 'npm', 'pnpm', 'pnpx', 'yarn', 'yarnpkg', 'corepack', 'bun', 'bunx', 'deno', 'uv', 'uvx', 'pipx', 'pip', 'poetry', 'pdm',
  'hatch', 'conda', 'mamba', 'micromamba', 'pixi', 'gem', 'bundle', 'bundler', 'rake', 'cargo', 'go', 'dotnet', 'jbang', 'mvn', 'gradle',
  // interpreters (versioned names are matched by VERSIONED below)
  'node', 'nodejs', 'tsx', 'ts-node', 'ruby', 'irb', 'perl', 'php', 'lua', 'luajit', 'java', 'jshell', 'groovy', 'scala', 'kotlin',
  'rscript', 'r', 'julia', 'tclsh', 'wish', 'expect', 'osascript', 'pwsh', 'powershell', 'ipython',
  // shells
  'sh', 'bash', 'rbash', 'dash', 'ash', 'zsh', 'ksh', 'mksh', 'csh', 'tcsh', 'fish', 'busybox', 'toybox',
  // wrappers that run another command, and tools with a "run this" option
  'env', 'sudo', 'doas', 'su', 'pkexec', 'runuser', 'chroot', 'xargs', 'timeout', 'nice', 'ionice', 'nohup', 'setsid', 'stdbuf',
  'taskset', 'chrt', 'unshare', 'nsenter', 'flock', 'strace', 'ltrace', 'gdb', 'script', 'watch', 'time', 'find', 'awk', 'gawk',
  'mawk', 'nawk', 'sed', 'vi', 'vim', 'nvim', 'ex', 'emacs', 'git', 'ssh', 'make', 'tar', 'rsync', 'socat', 'docker', 'podman',
  'nerdctl', 'kubectl', 'systemd-run',
]);

/** `python3.11`, `pypy3`, `perl5.36`, `php8.2`, `ruby3.1`, `node18`, `pip3`, `lua5.4`, `java17`, `python3.12-dbg`. */
const VERSIONED = /^(python|pypy|pip|perl|php|ruby|jruby|lua|node|java|jython)[\d.]*(-[a-z]+)?$/;

/** Where a launcher's real file is a script of its package (`npx-cli.js`, `pnpm.cjs`, `yarn.js`). */
const SCRIPT_SUFFIX = /(-cli)?\.(js|cjs|mjs|ts|py|pl|rb|sh)$/;

/**
 * Whether a file name is a launcher or interpreter, judged by its name alone (so `/usr/bin/python3.11`,
 * the `npx-cli.js` that `npx` links to, and `sh` all count).
 * @param name a base name, not a path.
 */
export function isLauncherName(name: string): boolean {
  const plain = name.toLowerCase().replace(SCRIPT_SUFFIX, '');
  return LAUNCHERS.has(plain) || VERSIONED.test(plain);
}
