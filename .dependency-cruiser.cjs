/**
 * The architecture check (`npm run lint:architecture`, run by `pretest`): which folder may import
 * which. It reads the TypeScript sources through tsconfig `paths`, so it needs no build.
 *
 * Specs (`*.spec.ts`), test/ and bench/ may import anything but apps from libs; every other rule
 * is about the code that ships.
 */

const SPEC = '\\.spec\\.ts$';

/**
 * The folders of libs/core, lowest first. A folder imports only folders of lower layers (not
 * its neighbours in the same layer), so no two folders can ever import each other.
 * config is at the bottom: it reads the environment and knows nothing of the engine; a
 * domain's own settings (tools, workspace, user MCP servers) live in the domain's folder.
 */
const CORE_LAYERS = [
  ['util', 'events', 'llm', 'config', 'auth'],
  ['secrets', 'sandbox', 'hitl', 'intent', 'workspace', 'usage'],
  ['tools'],
  ['engine', 'mcp'],
  ['memory', 'skills'],
  ['tenants'],
  ['session'],
  // The run domain: its states, its ports and the lifecycle, over the stores it names as interfaces.
  ['run'],
];

/**
 * The one file a lower folder may read from a higher one: the run's states are also the
 * vocabulary of the session store's run rows, and the state table imports nothing.
 */
const SHARED_UPWARDS = '^libs/core/src/run/run-state\\.ts$';

const coreLayerRules = CORE_LAYERS.map((layer, i) => ({
  name: 'core-folder-layers',
  comment: `libs/core/src/{${layer.join(',')}} may import only these lower folders: ${CORE_LAYERS.slice(0, i).flat().join(', ') || 'none'}`,
  severity: 'error',
  from: { path: `^libs/core/src/(${layer.join('|')})/`, pathNot: SPEC },
  to: { path: `^libs/core/src/(${CORE_LAYERS.slice(i).flat().join('|')})/`, pathNot: `^libs/core/src/$1/|${SHARED_UPWARDS}` },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No module of apps/ or libs/ may reach itself through its imports, type-only ones included.',
      severity: 'error',
      from: { path: '^(apps|libs)/' },
      to: { circular: true },
    },
    {
      name: 'no-runtime-circular',
      comment: 'test/ and bench/ may share types both ways, but no import cycle that runs.',
      severity: 'error',
      from: { path: '^(test|bench)/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'not-resolvable',
      comment:
        'An import of our own (#core/…, #llm/…, or a relative path) that resolves to no file: a typo, or a tool that ' +
        'cannot see the sources and would silently skip them. The browser UI loads its vendor files from the gateway.',
      severity: 'error',
      from: { pathNot: '^apps/gateway/web/' },
      to: { couldNotResolve: true, path: '^(#|\\.)' },
    },
    {
      name: 'core-imports-no-library',
      comment: 'libs/core is the framework-free bottom: it imports no other library.',
      severity: 'error',
      from: { path: '^libs/core/' },
      to: { path: '^libs/(?!core/)[^/]+/' },
    },
    {
      name: 'libs-import-only-core',
      comment: 'llm, mcp, transport and persistence each import only libs/core among the libraries.',
      severity: 'error',
      from: { path: '^libs/(llm|mcp|transport|persistence)/' },
      to: { path: '^libs/', pathNot: '^libs/(core|$1)/' },
    },
    {
      name: 'telemetry-imports-no-library',
      comment: 'libs/telemetry (traces and metrics plumbing) imports no other library, not even core.',
      severity: 'error',
      from: { path: '^libs/telemetry/' },
      to: { path: '^libs/', pathNot: '^libs/telemetry/' },
    },
    {
      name: 'libs-import-no-app',
      comment: 'Libraries never import an app (specs included): the apps wrap the libraries, not the other way round.',
      severity: 'error',
      from: { path: '^libs/' },
      to: { path: '^apps/' },
    },
    {
      name: 'no-test-code-in-shipped-code',
      comment: 'Only specs, test/ and bench/ import test/ (fakes, harness) or bench/.',
      severity: 'error',
      from: { path: '^(apps|libs)/', pathNot: SPEC },
      to: { path: '^(test|bench)/' },
    },
    {
      name: 'apps-import-no-other-app',
      comment:
        'gateway, worker, cli and harbor are separate processes: they share code through libs/ and talk over ' +
        'Redis or HTTP, never by importing each other.',
      severity: 'error',
      from: { path: '^apps/([^/]+)/' },
      to: { path: '^apps/', pathNot: '^apps/$1/' },
    },
    {
      name: 'harbor-imports-only-core',
      comment: 'harbor evaluates a running gateway over its API: of the libraries it needs only core.',
      severity: 'error',
      from: { path: '^apps/harbor/' },
      to: { path: '^libs/', pathNot: '^libs/core/' },
    },
    {
      name: 'cli-needs-no-servers',
      comment: 'The CLI runs agents in-process, without Redis or MySQL: no transport, persistence or telemetry.',
      severity: 'error',
      from: { path: '^apps/cli/' },
      to: { path: '^libs/(transport|persistence|telemetry)/' },
    },
    {
      name: 'run-domain-imports-no-package',
      comment: 'libs/core/src/run names its stores as ports: no Redis, MySQL, queue or Nest package reaches it (adapters live in transport and persistence).',
      severity: 'error',
      from: { path: '^libs/core/src/run/', pathNot: SPEC },
      to: { dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'dialects-import-no-other-dialect',
      comment: 'Each client dialect (apps/gateway/src/dialects/<name>) is a projection behind the runs seam: it imports runs/, the shared OpenAI wire helpers and common/, never another dialect.',
      severity: 'error',
      from: { path: '^apps/gateway/src/dialects/([^/]+)/', pathNot: SPEC },
      to: { path: '^apps/gateway/src/dialects/[^/]+/', pathNot: '^apps/gateway/src/dialects/$1/' },
    },
    {
      name: 'runs-seam-imports-no-dialect',
      comment: 'The runs seam (submit, follow, resolve, control, the one stream writer) serves every dialect and knows none of them; only the app module and main.ts wire dialects in.',
      severity: 'error',
      from: { path: '^apps/gateway/src/', pathNot: `^apps/gateway/src/(dialects/|app\\.module\\.ts$|main\\.ts$)|${SPEC}` },
      to: { path: '^apps/gateway/src/dialects/' },
    },
    ...coreLayerRules,
    {
      name: 'core-folder-unlayered',
      comment: 'Every folder of libs/core has a place in CORE_LAYERS (.dependency-cruiser.cjs).',
      severity: 'error',
      from: { path: '^libs/core/src/', pathNot: `^libs/core/src/(${CORE_LAYERS.flat().join('|')})/` },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^dist/' },
    // Resolves #core/… etc. to the sources through tsconfig paths: no dist/ needed.
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { conditionNames: ['import', 'require', 'node', 'default'], exportsFields: ['exports'] },
    cache: false,
  },
};
