import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { ScaledObject, type IScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { TriggerAuthentication, type ITriggerAuthentication } from '@kubernetes-models/keda/keda.sh/v1alpha1/TriggerAuthentication';
import { Deployment, type IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import { ConfigMap, type IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace, type INamespace } from 'kubernetes-models/v1/Namespace';
import { PersistentVolumeClaim, type IPersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Secret, type ISecret } from 'kubernetes-models/v1/Secret';
import { Service, type IService } from 'kubernetes-models/v1/Service';
import { loadGatewaySettings } from '../apps/gateway/src/infra/gateway-config.js';
import { loadWorkerSettings } from '../apps/worker/src/infra/worker-config.js';
// @ts-expect-error plain JS module shared with `npm start`
import { findExecutable } from '../scripts/local-services.mjs';
import type { AppProcess } from './support/app-processes.js';
import { findObject, K8S_DIR, kedaReplicas, loadManifests, manifestFiles, parseYamlDocuments, workerScaling, type KubeObject, type Manifest } from './support/k8s-manifests.js';
import { TestSystem } from './support/system.js';

const ROOT = join(K8S_DIR, '..');

/** The Kubernetes (and KEDA) JSON schemas, by `apiVersion/kind`: a kind without one fails the check. */
const SCHEMAS: Record<string, (object: KubeObject) => void> = {
  'v1/Namespace': (o) => new Namespace(o as unknown as INamespace).validate(),
  'v1/ConfigMap': (o) => new ConfigMap(o as unknown as IConfigMap).validate(),
  'v1/Secret': (o) => new Secret(o as unknown as ISecret).validate(),
  'v1/Service': (o) => new Service(o as unknown as IService).validate(),
  'v1/PersistentVolumeClaim': (o) => new PersistentVolumeClaim(o as unknown as IPersistentVolumeClaim).validate(),
  'apps/v1/Deployment': (o) => new Deployment(o as unknown as IDeployment).validate(),
  'keda.sh/v1alpha1/ScaledObject': (o) => new ScaledObject(o as unknown as IScaledObject).validate(),
  'keda.sh/v1alpha1/TriggerAuthentication': (o) => new TriggerAuthentication(o as unknown as ITriggerAuthentication).validate(),
};

interface Port {
  name?: string;
  containerPort: number;
}
interface Probe {
  httpGet?: { path: string; port: string | number };
}
interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string };
    configMapKeyRef?: { name: string; key: string };
    fieldRef?: { fieldPath: string };
  };
}
interface Container {
  name: string;
  args?: string[];
  ports?: Port[];
  envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>;
  env?: EnvVar[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
}

function podTemplate(deployment: KubeObject): { labels: Record<string, string>; containers: Container[] } {
  const spec = deployment.spec as { template: { metadata: { labels: Record<string, string> }; spec: { containers: Container[] } } };
  return { labels: spec.template.metadata.labels, containers: spec.template.spec.containers };
}

/** The Deployment whose container runs `entry` (the gateway's or the worker's main), and that container. */
function deploymentRunning(manifests: readonly Manifest[], entry: string): { deployment: KubeObject; container: Container } {
  const found = manifests
    .filter((m) => m.object.kind === 'Deployment')
    .flatMap((m) => podTemplate(m.object).containers.filter((c) => c.args?.includes(entry)).map((container) => ({ deployment: m.object, container })));
  if (found.length !== 1) throw new Error(`expected one Deployment running ${entry}, found ${found.length}`);
  return found[0]!;
}

/** A ConfigMap's data or a Secret's stringData, by name; undefined when k8s/ defines no such object. */
function keyValues(manifests: readonly Manifest[], kind: 'ConfigMap' | 'Secret', name: string): Record<string, string> | undefined {
  const object = manifests.find((m) => m.object.kind === kind && m.object.metadata.name === name)?.object;
  if (!object) return undefined;
  return (kind === 'ConfigMap' ? object.data : object.stringData) as Record<string, string>;
}

/**
 * The environment a container starts with: its ConfigMaps and Secrets (the example Secret's
 * values), then its own entries. Every reference must resolve to a key k8s/ defines.
 */
function containerEnvironment(manifests: readonly Manifest[], container: Container): Record<string, string> {
  const env: Record<string, string> = {};
  const lookup = (kind: 'ConfigMap' | 'Secret', name: string, key?: string): Record<string, string> | string => {
    const values = keyValues(manifests, kind, name);
    if (!values) throw new Error(`container ${container.name} refers to ${kind} ${name}, which k8s/ does not define`);
    if (key === undefined) return values;
    if (!(key in values)) throw new Error(`container ${container.name} refers to key ${key} of ${kind} ${name}, which it does not have`);
    return values[key]!;
  };
  for (const from of container.envFrom ?? []) {
    if (from.configMapRef) Object.assign(env, lookup('ConfigMap', from.configMapRef.name));
    if (from.secretRef) Object.assign(env, lookup('Secret', from.secretRef.name));
  }
  for (const variable of container.env ?? []) {
    const ref = variable.valueFrom;
    if (ref?.secretKeyRef) env[variable.name] = lookup('Secret', ref.secretKeyRef.name, ref.secretKeyRef.key) as string;
    else if (ref?.configMapKeyRef) env[variable.name] = lookup('ConfigMap', ref.configMapKeyRef.name, ref.configMapKeyRef.key) as string;
    else if (ref?.fieldRef) env[variable.name] = `field-${ref.fieldRef.fieldPath}`;
    else env[variable.name] = variable.value ?? '';
  }
  return env;
}

/** The container port a probe or Service names (by name or number). @throws when the container has none such. */
function portOf(container: Container, port: string | number): number {
  const found = container.ports?.find((p) => p.name === port || p.containerPort === port);
  if (!found) throw new Error(`container ${container.name} has no port ${port}`);
  return found.containerPort;
}

/** Every variable the gateway and workers read through their validated settings (`@Env('NAME')` in the sources). */
function settingNames(): Set<string> {
  const names = new Set<string>();
  for (const dir of ['apps', 'libs']) {
    for (const file of readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })) {
      if (!file.endsWith('.ts') || file.endsWith('.spec.ts')) continue;
      for (const match of readFileSync(join(ROOT, dir, file), 'utf8').matchAll(/@Env\('([A-Z0-9_]+)'/g)) names.add(match[1]!);
    }
  }
  return names;
}

/** Valid as every secret setting (an API key, a 64-hex-digit key, a token, a password), and found nowhere else. */
const SENTINEL = 'c0ffee'.repeat(10) + 'c0de';

/** Whether the gateway's or the worker's settings hold the value of `variable`: whether that process reads it. */
function processReads(app: 'gateway' | 'worker', variable: string): boolean {
  const env = { DATAAGENT_MODEL: 'offline', [variable]: SENTINEL };
  const settings = app === 'gateway' ? loadGatewaySettings('0.0.0', env, []) : loadWorkerSettings(env, []);
  return JSON.stringify(settings).includes(SENTINEL);
}

/** Secrets one kind of process must never be handed: the other one alone reads them. */
const NOT_FOR = {
  gateway: ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'TAVILY_API_KEY'],
  worker: ['DATAAGENT_API_KEYS'],
};

/**
 * The manifests in k8s/, checked without a cluster: `kubectl apply --dry-run=client` needs one
 * to reach (and would send traffic off this machine), and kubeconform downloads its schemas.
 * Instead each object is validated against the Kubernetes and KEDA JSON schemas
 * (kubernetes-models), then against the code: the settings it configures load, its ports and
 * probes are where the processes listen, and the ScaledObject scales the workers.
 */
describe('Kubernetes manifests', () => {
  const manifests = loadManifests();
  const kustomization = findObject(manifests, 'Kustomization') as KubeObject & { namespace: string; resources: string[] };
  const objects = manifests.filter((m) => m.object.kind !== 'Kustomization');
  const gateway = deploymentRunning(manifests, 'dist/gateway.js');
  const worker = deploymentRunning(manifests, 'dist/worker.js');

  it('parse, and every object has an apiVersion, a kind and a name, and passes its JSON schema', () => {
    expect(manifestFiles().length).toBeGreaterThan(0);
    for (const { file, object } of objects) {
      const where = `${file}: ${object.kind}/${object.metadata?.name}`;
      expect([where, typeof object.apiVersion, typeof object.kind, typeof object.metadata?.name]).toEqual([where, 'string', 'string', 'string']);
      const validate = SCHEMAS[`${object.apiVersion}/${object.kind}`];
      if (!validate) throw new Error(`${where}: no schema for ${object.apiVersion} ${object.kind}`);
      expect(() => validate(object)).not.toThrow();
    }
  });

  it('the schema check refuses a broken object', () => {
    const broken = structuredClone(findObject(manifests, 'ScaledObject')) as KubeObject & { spec: { scaleTargetRef: { name?: string } } };
    delete broken.spec.scaleTargetRef.name;
    expect(() => SCHEMAS['keda.sh/v1alpha1/ScaledObject']!(broken)).toThrow(/scaleTargetRef/);
    const port = structuredClone(worker.deployment) as KubeObject;
    (podTemplate(port).containers[0]!.ports![0] as unknown as { containerPort: string }).containerPort = 'metrics';
    expect(() => SCHEMAS['apps/v1/Deployment']!(port)).toThrow(/containerPort/);
  });

  it('kustomization.yaml lists every manifest but the example Secret, and each file it lists exists', () => {
    for (const resource of kustomization.resources) expect([resource, existsSync(join(K8S_DIR, resource))]).toEqual([resource, true]);
    const objectFiles = [...new Set(objects.map((m) => m.file))].filter((file) => file !== 'secret.example.yaml');
    expect([...kustomization.resources].sort()).toEqual(objectFiles.sort());
  });

  const kubectl = findExecutable('kubectl') as string | null;
  // `kubectl kustomize` renders offline; apply would need a cluster.
  (kubectl ? it : it.skip)('renders with kubectl kustomize, every object in the namespace and valid', () => {
    const rendered = parseYamlDocuments(execFileSync(kubectl!, ['kustomize', K8S_DIR], { encoding: 'utf8', timeout: 60_000 }), 'kubectl kustomize') as KubeObject[];
    const listed = objects.filter((m) => kustomization.resources.includes(m.file)).map((m) => `${m.object.kind}/${m.object.metadata.name}`);
    expect(rendered.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual(listed.sort());
    for (const object of rendered) {
      if (object.kind !== 'Namespace') expect([object.kind, object.metadata.namespace]).toEqual([object.kind, kustomization.namespace]);
      SCHEMAS[`${object.apiVersion}/${object.kind}`]!(object);
    }
  });

  it('configures only settings the apps read, and the gateway and the worker accept them', () => {
    const known = settingNames();
    for (const { container } of [gateway, worker]) {
      const env = containerEnvironment(manifests, container);
      for (const name of Object.keys(env)) expect([container.name, name, known.has(name)]).toEqual([container.name, name, true]);
    }
    expect(() => loadGatewaySettings('0.0.0', containerEnvironment(manifests, gateway.container), [])).not.toThrow();
    expect(() => loadWorkerSettings(containerEnvironment(manifests, worker.container), [])).not.toThrow();
    for (const entry of [gateway, worker].map((d) => d.container.args!.find((a) => a.startsWith('dist/'))!)) expect([entry, existsSync(join(ROOT, entry))]).toEqual([entry, true]);
  });

  it('hands each process only the secrets it reads, here and in docker-compose.yml: API keys to gateways, model and search keys to workers', () => {
    const secrets = Object.keys(keyValues(manifests, 'Secret', 'dataagent-secrets')!);
    expect(secrets).toEqual(expect.arrayContaining([...NOT_FOR.gateway, ...NOT_FOR.worker]));
    expect([processReads('gateway', 'DATAAGENT_API_KEYS'), processReads('worker', 'DATAAGENT_API_KEYS'), processReads('worker', 'OPENAI_API_KEY')]).toEqual([true, false, true]);

    const compose = (parseDocument(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }).toJS() as { services: Record<string, { environment: Record<string, string> }> }).services;
    for (const [where, app, environment] of [
      ['k8s', 'gateway', containerEnvironment(manifests, gateway.container)],
      ['k8s', 'worker', containerEnvironment(manifests, worker.container)],
      ['docker-compose.yml', 'gateway', compose.gateway!.environment],
      ['docker-compose.yml', 'worker', compose.worker!.environment],
    ] as const) {
      const given = secrets.filter((name) => name in environment);
      expect([where, app, given.filter((name) => NOT_FOR[app].includes(name) || !processReads(app, name))]).toEqual([where, app, []]);
    }
  });

  it('opens the ports the processes listen on, and the gateway Service reaches the gateway', () => {
    const gatewaySettings = loadGatewaySettings('0.0.0', containerEnvironment(manifests, gateway.container), []);
    const workerSettings = loadWorkerSettings(containerEnvironment(manifests, worker.container), []);
    expect(portOf(gateway.container, 'http')).toBe(gatewaySettings.server.port);
    expect(portOf(worker.container, 'health')).toBe(workerSettings.worker.healthPort);
    expect(portOf(worker.container, 'metrics')).toBe(workerSettings.metrics.port);

    const service = findObject(manifests, 'Service', gateway.deployment.metadata.name).spec as { selector: Record<string, string>; ports: Array<{ port: number; targetPort: string | number }> };
    expect(podTemplate(gateway.deployment).labels).toMatchObject(service.selector);
    for (const port of service.ports) portOf(gateway.container, port.targetPort);
  });

  it("points each probe at a port of its container and at the process's liveness or readiness path", () => {
    const probes = (container: Container) => ({ readiness: container.readinessProbe?.httpGet, liveness: container.livenessProbe?.httpGet });
    const gatewayProbes = probes(gateway.container);
    const workerProbes = probes(worker.container);
    expect([gatewayProbes.readiness?.path, gatewayProbes.liveness?.path]).toEqual(['/api/v1/health/ready', '/api/v1/health/live']);
    expect([workerProbes.readiness?.path, workerProbes.liveness?.path]).toEqual(['/health/ready', '/health/live']);
    for (const probe of Object.values(gatewayProbes)) expect(portOf(gateway.container, probe!.port)).toBe(portOf(gateway.container, 'http'));
    for (const probe of Object.values(workerProbes)) expect(portOf(worker.container, probe!.port)).toBe(portOf(worker.container, 'health'));
  });

  it('scales the worker Deployment on the gateway Service, within sane bounds', () => {
    const scaling = workerScaling(manifests);
    expect(scaling.targetName).toBe(worker.deployment.metadata.name);
    const service = findObject(manifests, 'Service', gateway.deployment.metadata.name);
    const servicePort = (service.spec as { ports: Array<{ port: number }> }).ports[0]!.port;
    // KEDA runs in its own namespace: the URL must name the Service with its namespace.
    expect(scaling.url.hostname).toBe(`${service.metadata.name}.${kustomization.namespace}.svc.cluster.local`);
    expect(Number(scaling.url.port || 80)).toBe(servicePort);
    expect(scaling.minReplicaCount).toBeGreaterThanOrEqual(1);
    expect(scaling.maxReplicaCount).toBeGreaterThan(scaling.minReplicaCount);
    expect(scaling.targetValue).toBeGreaterThan(0);
    // KEDA's formula as the autoscaling test applies it.
    const rule = { minReplicaCount: 1, maxReplicaCount: 20, targetValue: 25, activationTargetValue: 0 };
    expect([0, 1, 25, 26, 100, 499, 501, 10_000].map((n) => kedaReplicas(n, rule))).toEqual([1, 1, 1, 2, 4, 20, 20, 20]);
    expect([0, 1, 26].map((n) => kedaReplicas(n, { ...rule, minReplicaCount: 0 }))).toEqual([0, 1, 2]);
  });
});

/** The probe paths of the manifests, asked of a running gateway and worker (on the worker's DATAAGENT_HEALTH_PORT). */
describe('Kubernetes probes against running processes', () => {
  let system: TestSystem;
  let workerProbes: string;
  const manifests = loadManifests();

  beforeAll(async () => {
    system = await TestSystem.start({ workers: [{ DATAAGENT_HEALTH_PORT: '0' }] });
    workerProbes = probeServerOf(system.workers[0]!);
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('answers 200 on every probe path the Deployments use', async () => {
    for (const [entry, base] of [
      ['dist/gateway.js', system.url],
      ['dist/worker.js', workerProbes],
    ] as const) {
      const { container } = deploymentRunning(manifests, entry);
      for (const probe of [container.readinessProbe, container.livenessProbe]) {
        const path = probe!.httpGet!.path;
        expect([path, await statusWithin(`${base}${path}`, 200)]).toEqual([path, 200]);
      }
    }
  });
});

/** The worker's probe server, from the line it prints at startup (DATAAGENT_HEALTH_PORT=0 picks the port). */
function probeServerOf(worker: AppProcess): string {
  const line = worker.output.map((l) => (l.startsWith('{') ? (JSON.parse(l) as { msg?: string; port?: number }) : null)).find((j) => j?.msg === 'worker health listening');
  if (!line) throw new Error(`the worker printed no health port:\n${worker.output.join('\n')}`);
  return `http://127.0.0.1:${line.port}`;
}

/** Asks `url` until it answers `status` (a starting process may not be ready yet), at most 50 times; returns the last status. */
async function statusWithin(url: string, status: number): Promise<number> {
  let last = 0;
  for (let tries = 0; tries < 50 && last !== status; tries++) {
    if (tries > 0) await new Promise((r) => setTimeout(r, 100));
    last = await fetch(url, { signal: AbortSignal.timeout(5_000) }).then((res) => res.status, () => 0);
  }
  return last;
}
