/**
 * deploy/k8s/*.yaml checked against the Kubernetes API schemas (kubernetes-models: the OpenAPI
 * definitions of each apiVersion/kind), since no cluster can run here; plus the references between
 * documents that a schema cannot see (HPA targets, Service selectors, ConfigMap names).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT } from '../../packages/testkit';

interface Manifest {
  file: string;
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: any;
}

const K8S_DIR = path.join(REPO_ROOT, 'deploy/k8s');

function loadManifests(): Manifest[] {
  const out: Manifest[] = [];
  for (const file of fs.readdirSync(K8S_DIR).filter((f) => /\.ya?ml$/.test(f))) {
    for (const doc of parseAllDocuments(fs.readFileSync(path.join(K8S_DIR, file), 'utf8'))) {
      if (doc.errors.length) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
      const value = doc.toJS();
      if (value) out.push({ file, ...value });
    }
  }
  return out;
}

/** The kubernetes-models class for an apiVersion/kind (core "v1" lives at kubernetes-models/v1). */
function modelOf(apiVersion: string, kind: string): (new (data: unknown) => { validate(): void }) | undefined {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mod = require(`kubernetes-models/${apiVersion}`);
  return mod[kind];
}

function schemaErrors(m: Manifest): string | null {
  const Model = modelOf(m.apiVersion, m.kind);
  if (!Model) return `no Kubernetes schema for ${m.apiVersion} ${m.kind}`;
  const { file: _file, ...data } = m;
  try {
    new Model(data).validate();
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

describe('Kubernetes manifests (deploy/k8s)', () => {
  const manifests = loadManifests();
  const byKind = (kind: string) => manifests.filter((m) => m.kind === kind);

  it('has documents to check', () => {
    expect(byKind('Deployment').length).toBeGreaterThan(0);
  });

  it.each(manifests.map((m) => [`${m.file}: ${m.kind} ${m.metadata?.name}`, m] as const))('%s is valid against its schema', (_name, m) => {
    expect(schemaErrors(m)).toBeNull();
  });

  it('the schema check catches a broken Deployment (the validator really validates)', () => {
    const d = structuredClone(byKind('Deployment')[0]);
    d.spec.replicas = 'two';
    delete d.spec.selector;
    expect(schemaErrors(d)).toEqual(expect.stringMatching(/replicas|selector/));
  });

  it('every HorizontalPodAutoscaler targets a Deployment that exists', () => {
    const deployments = new Set(byKind('Deployment').map((d) => d.metadata.name));
    for (const hpa of byKind('HorizontalPodAutoscaler')) {
      expect({ hpa: hpa.metadata.name, target: hpa.spec.scaleTargetRef.kind }).toEqual({ hpa: hpa.metadata.name, target: 'Deployment' });
      expect(deployments).toContain(hpa.spec.scaleTargetRef.name);
    }
  });

  it("every Service selects some Deployment's or StatefulSet's pods, and every ConfigMap/Secret a pod reads is declared or optional", () => {
    const deployments = byKind('Deployment');
    const workloads = [...deployments, ...byKind('StatefulSet')];
    for (const svc of byKind('Service')) {
      const selector: Record<string, string> = svc.spec.selector ?? {};
      const matches = workloads.filter((d) => Object.entries(selector).every(([k, v]) => d.spec.template.metadata?.labels?.[k] === v));
      expect({ service: svc.metadata.name, matches: matches.length > 0 }).toEqual({ service: svc.metadata.name, matches: true });
    }
    const configMaps = new Set(byKind('ConfigMap').map((c) => c.metadata.name));
    for (const d of deployments) {
      for (const c of d.spec.template.spec.containers) {
        for (const from of c.envFrom ?? []) {
          if (from.configMapRef && !from.configMapRef.optional) expect(configMaps).toContain(from.configMapRef.name);
        }
      }
    }
  });
});
