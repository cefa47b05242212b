// Bundles the gateway and the worker, as tsc built them in dist/apps/, into one CommonJS file each
// (dist/gateway.cjs, dist/worker.cjs), and writes their launchers, dist/gateway.js and
// dist/worker.js: what `npm start`, the image and the tests run.
//
// Why: a process that loads ~3,000 files from node_modules (NestJS, TypeORM, BullMQ, the MCP
// SDK, Swagger's helpers) spends about 2 s of CPU resolving and compiling them before it serves
// anything. One file loads in a quarter of that, and being CommonJS it runs through V8's code
// cache (libs/core/src/util/compiled-bundle.ts), which Node 20 offers for no ES module: a start
// after the first skips most of the compiling too.
//
// A package keeps finding its own files (socket.io its browser client, msgpackr its native
// addon): a CommonJS file that names __dirname or __filename gets its own, relative to the bundle
// (dist/ and node_modules/ are siblings in the checkout and in the image). import.meta.url is the
// bundle's. Only optional parts of NestJS this project does not install stay outside.
//
// The Redis Lua scripts (libs/transport/src/lua/*.lua, see lua-scripts.ts there) are not
// JavaScript, so tsc leaves them out of dist/: this copies them beside their compiled reader,
// for what runs tsc's output unbundled (bench, the maintenance commands), and puts their texts
// inside each bundle, which then reads no script file when it runs.
import { build } from 'esbuild';
import { copyFile, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const DIST = path.join(root, 'dist');

/** Loaded from node_modules at run time, as without a bundle. */
const EXTERNAL = [
  // Optional NestJS parts, imported only when installed (they are not).
  '@nestjs/microservices',
  '@nestjs/microservices/*',
  '@fastify/static',
];

/** An ES module's own syntax: such a file has no __dirname to keep. */
const ESM_SYNTAX = /^\s*(import\s*[\w{*'"]|export\s)/m;

/** Gives each CommonJS file of a package that names __dirname or __filename its own, found from the bundle's place at run time. */
const ownPaths = {
  name: 'own-paths',
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/].*\.c?js$/ }, async (args) => {
      const contents = await readFile(args.path, 'utf8');
      if (!/\b__(dirname|filename)\b/.test(contents) || ESM_SYNTAX.test(contents)) return undefined;
      const file = JSON.stringify(path.relative(DIST, args.path));
      const dir = JSON.stringify(path.relative(DIST, path.dirname(args.path)));
      return { contents: `var __filename = __bundled(${file}), __dirname = __bundled(${dir});\n${contents}`, loader: 'js', resolveDir: path.dirname(args.path) };
    });
  },
};

/** The Lua scripts' folder in the sources, and beside their compiled reader in dist/. */
const LUA_SOURCES = path.join(root, 'libs/transport/src/lua');
const LUA_DIST = path.join(DIST, 'libs/transport/src/lua');

const luaFiles = (await readdir(LUA_SOURCES)).filter((file) => file.endsWith('.lua')).sort();
await mkdir(LUA_DIST, { recursive: true });
// A script deleted from the sources goes from dist/ too.
await Promise.all((await readdir(LUA_DIST)).filter((file) => file.endsWith('.lua') && !luaFiles.includes(file)).map((file) => rm(path.join(LUA_DIST, file))));
await Promise.all(luaFiles.map((file) => copyFile(path.join(LUA_SOURCES, file), path.join(LUA_DIST, file))));

/**
 * Inlines the Lua scripts: the module that reads a script's file at run time (lua-files.ts, or
 * tsc's lua-files.js: esbuild takes the libraries' sources, through tsconfig.json's paths)
 * becomes a table of their texts, each imported with esbuild's text loader. `seen.inlined`
 * tells the build it happened: left out, the bundle would look for the files beside itself.
 */
const luaScripts = (seen) => ({
  name: 'lua-scripts',
  setup(build) {
    build.onLoad({ filter: /[\\/]libs[\\/]transport[\\/]src[\\/]lua[\\/]lua-files\.[jt]s$/ }, () => {
      seen.inlined = true;
      return {
        contents: [
          ...luaFiles.map((file, i) => `import text${i} from ${JSON.stringify(`./${file}`)};`),
          `const texts = { ${luaFiles.map((file, i) => `${JSON.stringify(file.slice(0, -'.lua'.length))}: text${i}`).join(', ')} };`,
          'export function readLuaFile(name) { return Object.hasOwn(texts, name) ? texts[name] : undefined; }',
        ].join('\n'),
        loader: 'js',
        resolveDir: LUA_SOURCES,
      };
    });
  },
});

/** At the top of each bundle, where __dirname and __filename are the bundle's own. */
const BANNER = [
  "const __bundled = ((dir) => (relative) => require('node:path').join(dir, relative))(__dirname);",
  "const __bundleUrl = require('node:url').pathToFileURL(__filename).href;",
].join('\n');

const launcher = (name) => `// Written by scripts/bundle.mjs: runs the ${name}'s bundle through V8's code cache.
import { runBundle } from './libs/core/src/util/compiled-bundle.js';

runBundle(new URL('./${name}.cjs', import.meta.url));
`;

const apps = [
  { name: 'gateway', entry: 'dist/apps/gateway/src/main.js' },
  { name: 'worker', entry: 'dist/apps/worker/src/main.js' },
];

await Promise.all(
  apps.map(async ({ name, entry }) => {
    const lua = { inlined: false };
    await build({
      entryPoints: [path.join(root, entry)],
      outfile: path.join(DIST, `${name}.cjs`),
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      // NestJS and class-validator read class names (providers, DTOs in error messages).
      keepNames: true,
      sourcemap: 'linked',
      external: EXTERNAL,
      banner: { js: BANNER },
      define: { 'import.meta.url': '__bundleUrl' },
      // import() of a package outside the bundle (or of node:http) becomes require(): a script
      // run through the code cache has no ES module loader of its own.
      supported: { 'dynamic-import': false },
      plugins: [ownPaths, luaScripts(lua)],
      loader: { '.lua': 'text' },
      logLevel: 'warning',
      logOverride: {
        // Anything else of import.meta would be empty in CommonJS: refuse to build rather than run without it.
        'empty-import-meta': 'error',
        // Direct eval and a CommonJS require of an ES module's namespace are known and harmless in these packages.
        'direct-eval': 'silent',
        'commonjs-variable-in-esm': 'silent',
      },
    });
    if (!lua.inlined) throw new Error(`${name}: its bundle has no Lua script inlined (is libs/transport/src/lua/lua-files.ts still what reads them?)`);
    await writeFile(path.join(DIST, `${name}.js`), launcher(name));
  }),
);
