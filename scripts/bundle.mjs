// Bundles the gateway and the worker, as tsc built them in dist/apps/, into one ES module each:
// dist/gateway.js and dist/worker.js, what `npm start`, the image and the tests run.
//
// Why: a process that loads ~3,000 files from node_modules (NestJS, TypeORM, BullMQ, the MCP
// SDK, Swagger's helpers) spends about 2 s of CPU resolving and compiling them before it serves
// anything, and Node 20 has no compile cache. One file loads in about a quarter of that: pods
// and `npm start` come up sooner, and the test suite starts ~100 systems.
//
// A package keeps finding its own files (socket.io its browser client, msgpackr its native
// addon): a CommonJS file that names __dirname or __filename gets its own, relative to the bundle
// (dist/ and node_modules/ are siblings in the checkout and in the image), and require() resolves
// from there too. Only optional parts of NestJS this project does not install stay outside.
import { build } from 'esbuild';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Loaded from node_modules at run time, as without a bundle. */
const EXTERNAL = [
  // Optional NestJS parts, imported only when installed (they are not).
  '@nestjs/microservices',
  '@nestjs/microservices/*',
  '@fastify/static',
];

const DIST = path.join(root, 'dist');

/** Gives each file of a package that names __dirname or __filename its own, found from the bundle's place at run time. */
const ownPaths = {
  name: 'own-paths',
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/].*\.[cm]?js$/ }, async (args) => {
      const contents = await readFile(args.path, 'utf8');
      if (!/\b__(dirname|filename)\b/.test(contents)) return undefined;
      const file = JSON.stringify(path.relative(DIST, args.path));
      const dir = JSON.stringify(path.relative(DIST, path.dirname(args.path)));
      return { contents: `var __filename = __bundled(${file}), __dirname = __bundled(${dir});\n${contents}`, loader: 'js', resolveDir: path.dirname(args.path) };
    });
  },
};

/** Defined once at the top of each bundle: require() for CommonJS packages, and __bundled for ownPaths. */
const BANNER = [
  "import { createRequire as __createRequire } from 'node:module';",
  "import { dirname as __pathDirname, join as __pathJoin } from 'node:path';",
  "import { fileURLToPath as __fileURLToPath } from 'node:url';",
  'const require = __createRequire(import.meta.url);',
  'const __bundleDir = __pathDirname(__fileURLToPath(import.meta.url));',
  'const __bundled = (relative) => __pathJoin(__bundleDir, relative);',
].join('\n');

const apps = [
  { name: 'gateway', entry: 'dist/apps/gateway/src/main.js' },
  { name: 'worker', entry: 'dist/apps/worker/src/main.js' },
];

await Promise.all(
  apps.map(({ name, entry }) =>
    build({
      entryPoints: [path.join(root, entry)],
      outfile: path.join(DIST, `${name}.js`),
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      // NestJS and class-validator read class names (providers, DTOs in error messages).
      keepNames: true,
      sourcemap: 'linked',
      external: EXTERNAL,
      banner: { js: BANNER },
      plugins: [ownPaths],
      logLevel: 'warning',
      // Direct eval and a CommonJS require of an ES module's namespace are known and harmless in these packages.
      logOverride: { 'direct-eval': 'silent', 'commonjs-variable-in-esm': 'silent' },
    }),
  ),
);
