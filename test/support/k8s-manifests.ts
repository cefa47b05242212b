import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

/** The repository's `k8s/` folder (from the sources or from `dist/test/support`). */
export const K8S_DIR = fileURLToPath(new URL('../../k8s/', import.meta.url)).replace('/dist/k8s/', '/k8s/');

/** A Kubernetes object as written in a manifest: only the fields every object has are typed. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

/** One YAML document of a file under `k8s/`. */
export interface Manifest {
  file: string;
  object: KubeObject;
}

/** The YAML files under `k8s/`, sorted. */
export function manifestFiles(): string[] {
  return readdirSync(K8S_DIR)
    .filter((name) => /\.ya?ml$/.test(name))
    .sort();
}

/**
 * Parses a YAML text of one or more documents; a syntax error or a duplicate key throws,
 * naming `source`. Empty documents (only comments) are left out.
 */
export function parseYamlDocuments(text: string, source: string): unknown[] {
  return parseAllDocuments(text).flatMap((doc, i) => {
    const problems = [...doc.errors, ...doc.warnings];
    if (problems.length > 0) throw new Error(`${source}, document ${i + 1}: ${problems.map((p) => p.message).join('; ')}`);
    const value: unknown = doc.toJS();
    return value === null || value === undefined ? [] : [value];
  });
}

/** Every document of every YAML file under `k8s/`, in file order. */
export function loadManifests(): Manifest[] {
  return manifestFiles().flatMap((file) => parseYamlDocuments(readFileSync(join(K8S_DIR, file), 'utf8'), file).map((object) => ({ file, object: object as KubeObject })));
}

/** The one object of `kind` named `name` (any name when absent). @throws when there is none or more than one. */
export function findObject(manifests: readonly Manifest[], kind: string, name?: string): KubeObject {
  const found = manifests.filter((m) => m.object.kind === kind && (name === undefined || m.object.metadata?.name === name));
  if (found.length !== 1) throw new Error(`expected one ${kind}${name ? ` named ${name}` : ''} under k8s/, found ${found.length}`);
  return found[0]!.object;
}

/** What KEDA scales the workers with: the ScaledObject's bounds and its one metrics-api trigger. */
export interface WorkerScaling {
  minReplicaCount: number;
  maxReplicaCount: number;
  /** The trigger's figure per replica (metadata.targetValue). */
  targetValue: number;
  activationTargetValue: number;
  url: URL;
  /** Where the figure is in the JSON answer (a top-level key). */
  valueLocation: string;
  /** The Deployment it scales. */
  targetName: string;
}

interface ScaledObjectSpec {
  scaleTargetRef: { name: string };
  minReplicaCount?: number;
  maxReplicaCount?: number;
  triggers: Array<{ type: string; metricType?: string; metadata: Record<string, string> }>;
}

/**
 * The committed ScaledObject's numbers, with KEDA's defaults (0 and 100 replicas, activation 0).
 * @throws unless it has exactly one trigger, a metrics-api one on an AverageValue target.
 */
export function workerScaling(manifests: readonly Manifest[] = loadManifests()): WorkerScaling {
  const spec = findObject(manifests, 'ScaledObject').spec as ScaledObjectSpec;
  if (spec.triggers.length !== 1) throw new Error(`the ScaledObject has ${spec.triggers.length} triggers; the replica formula here assumes one`);
  const [trigger] = spec.triggers as [ScaledObjectSpec['triggers'][number]];
  if (trigger.type !== 'metrics-api' || (trigger.metricType ?? 'AverageValue') !== 'AverageValue') {
    throw new Error(`expected a metrics-api trigger on an AverageValue target, got ${trigger.type} (${trigger.metricType})`);
  }
  const { metadata } = trigger;
  return {
    minReplicaCount: spec.minReplicaCount ?? 0,
    maxReplicaCount: spec.maxReplicaCount ?? 100,
    targetValue: Number(metadata.targetValue),
    activationTargetValue: Number(metadata.activationTargetValue ?? 0),
    url: new URL(metadata.url!),
    valueLocation: metadata.valueLocation!,
    targetName: spec.scaleTargetRef.name,
  };
}

/**
 * The replica count KEDA and the HPA move to for a figure: the HPA's AverageValue rule,
 * ceil(figure / targetValue), clamped to [max(minReplicaCount, 1), maxReplicaCount]; KEDA
 * itself only decides 0 against 1, scaling to zero (minReplicaCount 0) while the figure is at
 * or below the activation value. The HPA skips a change within 10% of the current capacity.
 */
export function kedaReplicas(figure: number, scaling: Pick<WorkerScaling, 'minReplicaCount' | 'maxReplicaCount' | 'targetValue' | 'activationTargetValue'>): number {
  if (scaling.minReplicaCount === 0 && figure <= scaling.activationTargetValue) return 0;
  const wanted = Math.ceil(figure / scaling.targetValue);
  return Math.min(scaling.maxReplicaCount, Math.max(scaling.minReplicaCount, 1, wanted));
}
