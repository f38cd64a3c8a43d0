/**
 * deploy/k8s as a platform team would check it before applying, without a cluster:
 *   - each overlay (dev, prod) rendered by the test kit's kustomize subset (test/kit/kustomize.ts),
 *     which must agree object for object with `kubectl kustomize` where kubectl is installed;
 *   - every object, and the one-shot Jobs in deploy/k8s/jobs, valid against the Kubernetes schema with
 *     unknown fields rejected (a `readinesProbe` typo fails);
 *   - policies: non-root, read-only root filesystem, no privilege escalation, resources, probes on every
 *     long-running pod; no Secret object and no secret value in any manifest; each service reads only its
 *     own Secret; every Secret referenced is named in docs/operations.md; NetworkPolicies deny by default and
 *     allow exactly the traffic the architecture needs (evaluated per pod).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT } from '../kit';
import { kustomizeBuild, type KObject } from '../kit/kustomize';
import { strictSchemaErrors } from '../kit/k8s-schema';

const K8S = path.join(REPO_ROOT, 'deploy/k8s');
const OVERLAYS = ['dev', 'prod'] as const;
const SERVICES = ['gateway', 'agents', 'listings', 'escrow', 'ledger', 'payments', 'support', 'notifications'];
const WORKERS = SERVICES.filter((s) => s !== 'gateway');

function loadJobs(): KObject[] {
  const dir = path.join(K8S, 'jobs');
  return fs
    .readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .flatMap((f) => parseAllDocuments(fs.readFileSync(path.join(dir, f), 'utf8')).map((d) => d.toJS() as KObject));
}

const rendered: Record<string, KObject[]> = Object.fromEntries(OVERLAYS.map((o) => [o, kustomizeBuild(path.join(K8S, 'overlays', o))]));
const jobs = loadJobs();
const label = (o: KObject) => `${o.kind} ${o.metadata.name ?? o.metadata.generateName}`;

function kubectlKustomize(): string | null {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore', timeout: 10_000 });
    return 'kubectl';
  } catch {
    return null;
  }
}

function podTemplateOf(o: KObject): any | null {
  if (['Deployment', 'StatefulSet', 'Job'].includes(o.kind)) return o.spec.template;
  return null;
}

/** Every string in an object, with its path. */
function* strings(value: unknown, at = ''): Generator<[string, string]> {
  if (typeof value === 'string') yield [at, value];
  else if (Array.isArray(value)) for (const [i, v] of value.entries()) yield* strings(v, `${at}[${i}]`);
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) yield* strings(v, `${at}.${k}`);
}

/** Names of the Secrets an object reads. */
function secretRefs(o: KObject): string[] {
  const names: string[] = [];
  const spec = podTemplateOf(o)?.spec;
  if (spec) {
    for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
      for (const e of c.envFrom ?? []) if (e.secretRef) names.push(e.secretRef.name);
      for (const e of c.env ?? []) if (e.valueFrom?.secretKeyRef) names.push(e.valueFrom.secretKeyRef.name);
    }
    for (const v of spec.volumes ?? []) if (v.secret) names.push(v.secret.secretName);
  }
  if (o.kind === 'Ingress') for (const t of o.spec.tls ?? []) names.push(t.secretName);
  return names;
}

// --- NetworkPolicy evaluation (enough of the semantics for these manifests) -----------------------

type Peer = { pods?: Record<string, string>; namespace?: string; any?: true; cidr?: string };
interface Allowed {
  port: number;
  peers: Peer[];
}

function selects(selector: any, labels: Record<string, string>): boolean {
  if (!selector) return true;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    if (e.operator === 'In' && !e.values.includes(labels[e.key])) return false;
    if (e.operator === 'NotIn' && e.values.includes(labels[e.key])) return false;
    if (e.operator === 'Exists' && !(e.key in labels)) return false;
  }
  return true;
}

function peersOf(rule: any, key: 'from' | 'to'): Peer[] {
  if (!rule[key] || rule[key].length === 0) return [{ any: true }];
  return rule[key].map((p: any): Peer => {
    if (p.ipBlock) return { cidr: p.ipBlock.cidr };
    const namespace = p.namespaceSelector ? (p.namespaceSelector.matchLabels?.['kubernetes.io/metadata.name'] ?? '*') : undefined;
    return { pods: p.podSelector?.matchLabels, namespace };
  });
}

function allowedFor(objects: KObject[], podLabels: Record<string, string>, direction: 'Ingress' | 'Egress'): Allowed[] {
  const policies = objects.filter((o) => o.kind === 'NetworkPolicy' && (o.spec.policyTypes ?? ['Ingress']).includes(direction) && selects(o.spec.podSelector, podLabels));
  const out: Allowed[] = [];
  for (const p of policies) {
    for (const rule of (direction === 'Ingress' ? p.spec.ingress : p.spec.egress) ?? []) {
      for (const port of rule.ports ?? [{ port: 0 }]) out.push({ port: port.port, peers: peersOf(rule, direction === 'Ingress' ? 'from' : 'to') });
    }
  }
  return out;
}

const ports = (a: Allowed[]) => [...new Set(a.map((x) => x.port))].sort((x, y) => x - y);

describe('Kubernetes manifests (deploy/k8s: kustomize base + overlays, jobs)', () => {
  const cli = kubectlKustomize();
  (cli ? it.each(OVERLAYS) : it.skip.each(OVERLAYS))(`the test kit's rendering of overlays/%s equals \`kubectl kustomize\`${cli ? '' : ' [skipped: no kubectl]'}`, (overlay) => {
    const real = parseAllDocuments(execFileSync('kubectl', ['kustomize', path.join(K8S, 'overlays', overlay)], { encoding: 'utf8' })).map((d) => d.toJS() as KObject);
    const key = (o: KObject) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
    const mine = new Map(rendered[overlay].map((o) => [key(o), JSON.parse(JSON.stringify(o))]));
    expect([...mine.keys()].sort()).toEqual(real.map(key).sort());
    for (const o of real) expect({ object: key(o), same: isDeepStrictEqual(mine.get(key(o)), o) }).toEqual({ object: key(o), same: true });
  });

  it.each(OVERLAYS)('overlays/%s renders every service, NATS, the NetworkPolicies and the generated NATS config', (overlay) => {
    const objects = rendered[overlay];
    const names = (kind: string) => objects.filter((o) => o.kind === kind).map((o) => o.metadata.name);
    expect(names('Deployment').sort()).toEqual([...SERVICES].sort());
    expect(names('HorizontalPodAutoscaler').sort()).toEqual([...SERVICES].sort());
    expect(names('StatefulSet')).toEqual(['nats']);
    expect(names('NetworkPolicy')).toContain('default-deny');
    expect(names('ConfigMap')).toEqual(expect.arrayContaining(['agent-market', expect.stringMatching(/^nats-config-[a-z0-9]{10}$/)]));
    const ns = overlay === 'prod' ? 'agent-market' : 'agent-market-dev';
    for (const o of objects) if (o.kind !== 'Namespace') expect(`${label(o)} in ${o.metadata.namespace}`).toBe(`${label(o)} in ${ns}`);
  });

  describe.each(OVERLAYS)('overlays/%s: schema with unknown fields rejected', (overlay) => {
    it.each(rendered[overlay].map((o) => [label(o), o] as const))('%s', async (_n, o) => {
      expect(await strictSchemaErrors(o)).toBe('');
    });
  });

  it.each(jobs.map((o) => [label(o), o] as const))('jobs/: %s is valid, unknown fields rejected', async (_n, o) => {
    expect(await strictSchemaErrors(o)).toBe('');
  });

  it('the schema check fails a misspelt field at any depth, a wrong type and a missing required field', async () => {
    const d = structuredClone(rendered.prod.find((o) => o.kind === 'Deployment')!);
    const c = d.spec.template.spec.containers[0];
    c.readinesProbe = c.readinessProbe;
    delete c.readinessProbe;
    expect(await strictSchemaErrors(d)).toMatch(/unknown field \.spec\.template\.spec\.containers\[0\]\.readinesProbe/);

    const e = structuredClone(rendered.prod.find((o) => o.kind === 'Deployment')!);
    e.spec.template.spec.containers[0].securityContext.readOnlyRootFileSystem = true;
    e.metadata.lables = { a: 'b' };
    const eErrors = await strictSchemaErrors(e);
    expect(eErrors).toMatch(/securityContext\.readOnlyRootFileSystem.*|metadata\.lables/);
    expect(eErrors.split('; ')).toHaveLength(2);

    const f = structuredClone(rendered.prod.find((o) => o.kind === 'Deployment')!);
    f.spec.replicas = 'two';
    delete f.spec.selector;
    expect(await strictSchemaErrors(f)).toMatch(/replicas|selector/);

    // Maps stay open: any label, annotation or ConfigMap key is fine.
    const g = structuredClone(rendered.prod.find((o) => o.kind === 'ConfigMap')!);
    g.data.ANY_NEW_SETTING = 'x';
    g.metadata.annotations = { 'example.com/any': 'y' };
    expect(await strictSchemaErrors(g)).toBe('');
  });

  describe.each(OVERLAYS)('overlays/%s: pod policies', (overlay) => {
    const workloads = [...rendered[overlay], ...jobs].filter((o) => podTemplateOf(o));

    it.each(workloads.map((o) => [label(o), o] as const))('%s: non-root, read-only root fs, no escalation, resources, probes', (_n, o) => {
      const pod = podTemplateOf(o).spec;
      expect(pod.automountServiceAccountToken).toBe(false);
      for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
        const sc = { ...pod.securityContext, ...c.securityContext };
        expect({ container: c.name, runAsNonRoot: sc.runAsNonRoot, readOnlyRootFilesystem: sc.readOnlyRootFilesystem }).toEqual({
          container: c.name,
          runAsNonRoot: true,
          readOnlyRootFilesystem: true,
        });
        expect(sc.allowPrivilegeEscalation).toBe(false);
        expect(sc.capabilities?.drop).toContain('ALL');
        expect(sc.seccompProfile?.type).toBe('RuntimeDefault');
        expect(c.resources?.requests?.cpu).toBeDefined();
        expect(c.resources?.requests?.memory).toBeDefined();
        expect(c.resources?.limits?.memory).toBeDefined();
        // A Job runs to completion: probes are for the long-running pods.
        if (o.kind !== 'Job') {
          expect(c.readinessProbe).toBeDefined();
          expect(c.livenessProbe).toBeDefined();
        }
      }
    });
  });

  it('no manifest declares a Secret or carries a secret value', () => {
    const secretName = /(PASSWORD|SECRET|TOKEN|_KEY|DATABASE_URL)$/;
    const secretValue = /(sk_(live|test)_|rk_live_|whsec_|postgres(ql)?:\/\/[^\s:/@]+:[^\s@]+@|nats:\/\/[^\s:/@]+:[^\s@]+@)/;
    for (const o of [...rendered.dev, ...rendered.prod, ...jobs]) {
      expect(o.kind).not.toBe('Secret');
      for (const [at, s] of strings(o)) expect({ at: `${label(o)}${at}`, secret: secretValue.test(s) }).toEqual({ at: `${label(o)}${at}`, secret: false });
      if (o.kind === 'ConfigMap') for (const key of Object.keys(o.data ?? {})) expect(key).not.toMatch(secretName);
      const spec = podTemplateOf(o)?.spec;
      for (const c of spec?.containers ?? []) {
        for (const e of c.env ?? []) if (secretName.test(e.name)) expect({ env: e.name, fromSecret: !!e.valueFrom?.secretKeyRef }).toEqual({ env: e.name, fromSecret: true });
      }
    }
  });

  it("the NATS auth config reaches the server as a ConfigMap, with a user per service and no password in it", () => {
    const cm = rendered.prod.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('nats-config-'))!;
    const auth: string = cm.data['auth.conf'];
    expect(cm.data['nats-server.conf']).toMatch(/include \.\/auth\.conf/);
    for (const s of SERVICES) expect(auth).toMatch(new RegExp(`user:\\s*"?${s}"?[\\s,]*password:\\s*"?\\$NATS_PASSWORD_${s.toUpperCase()}\\b`));
    for (const m of auth.matchAll(/password:\s*"?([^\s,"}]+)/g)) expect(m[1]).toMatch(/^\$NATS_PASSWORD_[A-Z]+$/);
    // The generated permissions name Moleculer subjects of one namespace: the services must use it.
    for (const overlay of OVERLAYS) {
      const ns = rendered[overlay].find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'agent-market')!.data.NAMESPACE;
      for (const m of auth.matchAll(/"MOL-([^.]+)\./g)) expect(m[1]).toBe(ns);
    }
    const nats = rendered.prod.find((o) => o.kind === 'StatefulSet' && o.metadata.name === 'nats')!;
    expect(nats.spec.template.spec.volumes.find((v: any) => v.name === 'config').configMap.name).toBe(cm.metadata.name);
    const [container] = nats.spec.template.spec.containers;
    expect(container.args.slice(0, 6)).toEqual(['-c', '/etc/nats/nats-server.conf', '-sd', '/data', '-P', '/data/nats.pid']);
    // Lame-duck mode on stop signals the server through the pid file it was told to write.
    expect(container.lifecycle.preStop.exec.command).toEqual(['nats-server', '--signal', 'ldm=/data/nats.pid']);
    expect(nats.spec.volumeClaimTemplates[0].metadata.name).toBe('data');
  });

  it('prod runs NATS as a 3-node JetStream cluster, the streams on 3 replicas; dev as one server', () => {
    const natsOf = (overlay: string) => rendered[overlay].find((o) => o.kind === 'StatefulSet' && o.metadata.name === 'nats')!;
    const dev = natsOf('dev');
    expect(dev.spec.replicas).toBe(1);
    expect(dev.spec.template.spec.containers[0].args).toEqual(['-c', '/etc/nats/nats-server.conf', '-sd', '/data', '-P', '/data/nats.pid']);
    const prod = natsOf('prod');
    expect(prod.spec.replicas).toBe(3);
    expect(prod.spec.podManagementPolicy).toBe('Parallel');
    const [c] = prod.spec.template.spec.containers;
    const flag = (f: string) => c.args[c.args.indexOf(f) + 1];
    expect(flag('--name')).toBe('$(POD_NAME)');
    expect(c.env.find((e: any) => e.name === 'POD_NAME').valueFrom.fieldRef.fieldPath).toBe('metadata.name');
    expect(flag('--cluster')).toBe('nats://0.0.0.0:6222');
    const headless = rendered.prod.find((o) => o.kind === 'Service' && o.metadata.name === 'nats-headless')!;
    expect(headless.spec.publishNotReadyAddresses).toBe(true);
    expect(flag('--routes').split(',')).toEqual([0, 1, 2].map((i) => `nats://nats-${i}.${headless.metadata.name}:6222`));
    expect(c.ports.map((p: any) => p.containerPort).sort()).toEqual([4222, 6222, 8222]);
    const pdb = rendered.prod.find((o) => o.kind === 'PodDisruptionBudget' && o.metadata.name === 'nats')!;
    expect(pdb.spec.maxUnavailable).toBe(1);
    const config = (overlay: string) => rendered[overlay].find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'agent-market')!.data;
    expect(config('prod').JETSTREAM_REPLICAS).toBe('3');
    expect(config('dev').JETSTREAM_REPLICAS).toBeUndefined();
  });

  it.each(OVERLAYS)('overlays/%s: each process reads only its own Secret (ADMIN_TOKEN in the gateway, Stripe in payments: see the secrets test)', (overlay) => {
    const refs = Object.fromEntries(rendered[overlay].filter((o) => podTemplateOf(o)).map((o) => [o.metadata.name, secretRefs(o)]));
    for (const s of SERVICES) expect(refs[s]).toEqual([`market-${s}`]);
    expect(refs.nats).toEqual(['market-nats']);
    const byJob = Object.fromEntries(jobs.map((j) => [j.metadata.labels!.job, secretRefs(j)]));
    expect(byJob).toEqual({ 'db-roles': ['market-db-admin'], 'audit-ledger': ['market-gateway'] });
    // The audit job takes only the gateway's ADMIN_TOKEN key, not the whole Secret.
    const audit = jobs.find((j) => j.metadata.labels!.job === 'audit-ledger')!;
    expect(audit.spec.template.spec.containers[0].envFrom).toBeUndefined();
  });

  it('every Secret a manifest references is named in docs/operations.md, section "Deploying on Kubernetes"', () => {
    const readme = fs.readFileSync(path.join(REPO_ROOT, 'docs/operations.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Deploying on Kubernetes'));
    expect(section.length).toBeLessThan(readme.length);
    const names = new Set([...rendered.dev, ...rendered.prod, ...jobs].flatMap(secretRefs));
    expect(names.size).toBeGreaterThan(8);
    for (const name of names) expect({ secret: name, documented: section.includes(name) }).toEqual({ secret: name, documented: true });
  });

  it.each(OVERLAYS)('overlays/%s: references resolve (HPA targets, Service selectors, ConfigMaps)', (overlay) => {
    const objects = rendered[overlay];
    const byKind = (kind: string) => objects.filter((o) => o.kind === kind);
    const deployments = new Set(byKind('Deployment').map((d) => d.metadata.name));
    for (const hpa of byKind('HorizontalPodAutoscaler')) expect(deployments).toContain(hpa.spec.scaleTargetRef.name);
    const workloads = [...byKind('Deployment'), ...byKind('StatefulSet')];
    for (const svc of byKind('Service')) {
      const matching = workloads.filter((w) => selects({ matchLabels: svc.spec.selector }, w.spec.template.metadata.labels));
      expect({ service: svc.metadata.name, matches: matching.length }).toEqual({ service: svc.metadata.name, matches: 1 });
      const named = new Set(matching[0].spec.template.spec.containers.flatMap((c: any) => (c.ports ?? []).map((p: any) => p.name)));
      for (const p of svc.spec.ports) if (typeof p.targetPort === 'string') expect(named).toContain(p.targetPort);
    }
    const configMaps = new Set(byKind('ConfigMap').map((c) => c.metadata.name));
    for (const w of workloads) {
      const spec = w.spec.template.spec;
      for (const c of spec.containers) for (const e of c.envFrom ?? []) if (e.configMapRef) expect(configMaps).toContain(e.configMapRef.name);
      for (const v of spec.volumes ?? []) if (v.configMap) expect(configMaps).toContain(v.configMap.name);
    }
    for (const ing of byKind('Ingress')) for (const r of ing.spec.rules) for (const p of r.http.paths) expect(byKind('Service').map((s) => s.metadata.name)).toContain(p.backend.service.name);
  });

  it.each(OVERLAYS)('overlays/%s: every service is scrapeable (annotated pods and Services with a metrics port)', (overlay) => {
    const objects = rendered[overlay];
    for (const s of SERVICES) {
      const d = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === s)!;
      const a = d.spec.template.metadata.annotations;
      expect(a['prometheus.io/scrape']).toBe('true');
      const svc = objects.find((o) => o.kind === 'Service' && o.metadata.name === s)!;
      expect(svc.metadata.annotations!['prometheus.io/port']).toBe(a['prometheus.io/port']);
      expect(svc.spec.ports.map((p: any) => p.port)).toContain(Number(a['prometheus.io/port']));
      // The port the annotation names is open to the monitoring namespace.
      const open = allowedFor(objects, d.spec.template.metadata.labels, 'Ingress').filter((x) => x.peers.some((p) => p.any || p.namespace === 'monitoring'));
      expect(ports(open)).toContain(Number(a['prometheus.io/port']));
    }
  });

  describe.each(OVERLAYS)('overlays/%s: NetworkPolicies', (overlay) => {
    const objects = rendered[overlay];
    const labelsOf = (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name)!.spec.template.metadata.labels;

    it('deny everything by default, in both directions', () => {
      const deny = objects.find((o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'default-deny')!;
      expect(deny.spec).toEqual({ podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
    });

    it('workers accept only the metrics scrape; the gateway its HTTP port and the scrape', () => {
      for (const w of WORKERS) {
        const ingress = allowedFor(objects, labelsOf('Deployment', w), 'Ingress');
        expect({ w, ports: ports(ingress) }).toEqual({ w, ports: [3000] });
        for (const rule of ingress) expect(rule.peers).toEqual([{ namespace: 'monitoring' }]);
      }
      const gw = allowedFor(objects, labelsOf('Deployment', 'gateway'), 'Ingress');
      expect(ports(gw)).toEqual([3000, 9464]);
      for (const rule of gw.filter((r) => r.port === 9464)) expect(rule.peers).toEqual([{ namespace: 'monitoring' }]);
      if (overlay === 'prod') {
        for (const rule of gw.filter((r) => r.port === 3000 && !r.peers.some((p) => p.namespace === 'monitoring'))) {
          expect(rule.peers).toEqual([{ namespace: 'ingress-nginx' }, { pods: { app: 'agent-market-job', job: 'audit-ledger' } }]);
        }
      }
    });

    it('services reach only NATS, PostgreSQL and DNS; notifications and payments also HTTPS outside the cluster', () => {
      for (const s of SERVICES) {
        const egress = allowedFor(objects, labelsOf('Deployment', s), 'Egress');
        const expected = ['notifications', 'payments'].includes(s) ? [53, 443, 4222, 5432] : [53, 4222, 5432];
        expect({ s, ports: ports(egress) }).toEqual({ s, ports: expected });
        for (const rule of egress.filter((r) => r.port === 4222)) expect(rule.peers).toEqual([{ pods: { app: 'nats' }, namespace: undefined }]);
        for (const rule of egress.filter((r) => r.port === 443)) expect(rule.peers).toEqual([{ cidr: '0.0.0.0/0' }]);
      }
    });

    it('NATS accepts clients only from the marketplace pods, and opens no connection itself but its cluster routes (prod)', () => {
      const labels = labelsOf('StatefulSet', 'nats');
      const ingress = allowedFor(objects, labels, 'Ingress');
      const routes = overlay === 'prod' ? [6222] : [];
      expect(ports(ingress)).toEqual([4222, ...routes, 8222]);
      for (const rule of ingress.filter((r) => r.port === 4222)) expect(rule.peers).toEqual([{ pods: { app: 'agent-market' }, namespace: undefined }]);
      expect(ingress.filter((r) => r.port === 4222)).toHaveLength(1);
      const egress = allowedFor(objects, labels, 'Egress');
      expect(ports(egress)).toEqual([53, ...routes]);
      for (const rule of [...ingress, ...egress].filter((r) => r.port === 6222)) expect(rule.peers).toEqual([{ pods: { app: 'nats' }, namespace: undefined }]);
      // Jobs are not NATS clients.
      for (const j of jobs) expect(selects({ matchLabels: { app: 'agent-market' } }, j.spec.template.metadata.labels)).toBe(false);
    });

    it('the jobs reach only what they need: db-roles PostgreSQL, the audit the gateway', () => {
      const [dbRoles, audit] = ['db-roles', 'audit-ledger'].map((j) => jobs.find((x) => x.metadata.labels!.job === j)!.spec.template.metadata.labels);
      expect(ports(allowedFor(objects, dbRoles, 'Egress'))).toEqual([53, 5432]);
      expect(allowedFor(objects, audit, 'Egress').filter((r) => r.port !== 53)).toEqual([{ port: 3000, peers: [{ pods: { app: 'agent-market', service: 'gateway' }, namespace: undefined }] }]);
    });
  });

  it('prod pins its images (no :latest, a registry for the marketplace image)', () => {
    for (const o of rendered.prod) {
      for (const c of podTemplateOf(o)?.spec.containers ?? []) {
        expect(c.image).toMatch(/:[\w.-]+$/);
        expect(c.image).not.toMatch(/:latest$/);
      }
    }
    expect(rendered.prod.find((o) => o.metadata.name === 'gateway' && o.kind === 'Deployment')!.spec.template.spec.containers[0].image).toMatch(/^[\w.-]+\.[a-z]+\/agent-market:/);
  });
});
