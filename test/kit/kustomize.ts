/**
 * `kustomize build` for the subset of kustomize that deploy/ uses, so CI can render every overlay
 * without a kustomize binary (none is packaged for the build machines; `kubectl kustomize` is used
 * to cross-check this renderer where it is installed). A kustomization using anything else is refused
 * with the field's name, so the overlays stay within what is rendered here:
 *   resources (files and kustomization directories), configMapGenerator (files, literals; the
 *   content-hash name suffix and the rewriting of references to it), namespace, labels (metadata
 *   only), images (newName, newTag, digest), patches (strategic merge, by name or by a kind/name target).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

export interface KObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string>; [k: string]: unknown };
  [k: string]: any;
}

/** A generated ConfigMap keeps its given name until the top-level build appends the hash. */
const GENERATED = Symbol('generated');
type Built = KObject & { [GENERATED]?: true };

const SUPPORTED = new Set(['apiVersion', 'kind', 'resources', 'configMapGenerator', 'namespace', 'labels', 'images', 'patches']);

/** Kinds without a namespace (the ones a marketplace overlay might contain). */
const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'StorageClass', 'PersistentVolume', 'PriorityClass', 'IngressClass']);

/** Merge keys of the lists a strategic-merge patch may touch here (by field name; others are replaced). */
const MERGE_KEYS: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  env: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
  imagePullSecrets: 'name',
};

export class KustomizeError extends Error {}

function readYamlDocs(file: string): KObject[] {
  const out: KObject[] = [];
  for (const doc of parseAllDocuments(fs.readFileSync(file, 'utf8'))) {
    if (doc.errors.length) throw new KustomizeError(`${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
    const value = doc.toJS();
    if (value) out.push(value);
  }
  return out;
}

function kustomizationFile(dir: string): string | null {
  for (const name of ['kustomization.yaml', 'kustomization.yml', 'Kustomization']) {
    if (fs.existsSync(path.join(dir, name))) return path.join(dir, name);
  }
  return null;
}

const isObject = (v: unknown): v is Record<string, any> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Strategic merge of `patch` into `base` (a copy), for the list fields in MERGE_KEYS; `null` deletes. */
export function strategicMerge(base: any, patch: any): any {
  if (!isObject(patch) || !isObject(base)) return structuredClone(patch);
  const out: Record<string, any> = structuredClone(base);
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith('$')) throw new KustomizeError(`patch directive ${key} is not supported by this renderer`);
    if (value === null) delete out[key];
    else if (Array.isArray(value) && Array.isArray(out[key]) && MERGE_KEYS[key] && value.every(isObject)) {
      const mergeKey = MERGE_KEYS[key];
      const list: any[] = out[key];
      for (const item of value) {
        const at = list.findIndex((b) => isObject(b) && b[mergeKey] === item[mergeKey]);
        if (at >= 0) list[at] = strategicMerge(list[at], item);
        else list.push(structuredClone(item));
      }
    } else if (isObject(value) && isObject(out[key])) out[key] = strategicMerge(out[key], value);
    else out[key] = structuredClone(value);
  }
  return out;
}

/**
 * kustomize's name suffix: sha256 of {data, kind, name} as Go encodes JSON (sorted keys, <>& escaped),
 * 10 hex characters with 0 1 3 a e swapped for letters. The name in it is empty: kustomize 5 hashes the
 * generated ConfigMap before it names it (checked against `kubectl kustomize` by the deploy test).
 */
export function configMapHash(cm: { data?: Record<string, string>; [k: string]: unknown }): string {
  const sorted = (o: Record<string, string>) => Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]]));
  const encoded = JSON.stringify({ data: sorted(cm.data ?? {}), kind: 'ConfigMap', name: '' })
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
  const hex = crypto.createHash('sha256').update(encoded).digest('hex').slice(0, 10);
  const swap: Record<string, string> = { '0': 'g', '1': 'h', '3': 'k', a: 'm', e: 't' };
  return [...hex].map((c) => swap[c] ?? c).join('');
}

/** Pod specs inside the workload kinds used here. */
function podSpecs(o: KObject): any[] {
  if (['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job'].includes(o.kind)) return o.spec?.template?.spec ? [o.spec.template.spec] : [];
  if (o.kind === 'CronJob') return o.spec?.jobTemplate?.spec?.template?.spec ? [o.spec.jobTemplate.spec.template.spec] : [];
  if (o.kind === 'Pod') return o.spec ? [o.spec] : [];
  return [];
}

function containersOf(spec: any): any[] {
  return [...(spec.initContainers ?? []), ...(spec.containers ?? [])];
}

function renameConfigMapRefs(objects: KObject[], from: string, to: string): void {
  for (const o of objects) {
    for (const spec of podSpecs(o)) {
      for (const v of spec.volumes ?? []) {
        if (v.configMap?.name === from) v.configMap.name = to;
        for (const s of v.projected?.sources ?? []) if (s.configMap?.name === from) s.configMap.name = to;
      }
      for (const c of containersOf(spec)) {
        for (const e of c.envFrom ?? []) if (e.configMapRef?.name === from) e.configMapRef.name = to;
        for (const e of c.env ?? []) if (e.valueFrom?.configMapKeyRef?.name === from) e.valueFrom.configMapKeyRef.name = to;
      }
    }
  }
}

function splitImage(image: string): { name: string; tag: string | null; digest: string | null } {
  const at = image.indexOf('@');
  const digest = at >= 0 ? image.slice(at + 1) : null;
  const rest = at >= 0 ? image.slice(0, at) : image;
  const colon = rest.lastIndexOf(':');
  const hasTag = colon > rest.lastIndexOf('/');
  return { name: hasTag ? rest.slice(0, colon) : rest, tag: hasTag ? rest.slice(colon + 1) : null, digest };
}

function generateConfigMaps(dir: string, generators: any[]): Built[] {
  return generators.map((g) => {
    for (const key of Object.keys(g)) {
      if (!['name', 'files', 'literals'].includes(key)) throw new KustomizeError(`${dir}: configMapGenerator.${key} is not supported by this renderer`);
    }
    const data: Record<string, string> = {};
    for (const entry of g.files ?? []) {
      const [key, file] = String(entry).includes('=') ? String(entry).split('=', 2) : [path.basename(String(entry)), String(entry)];
      const resolved = path.resolve(dir, file);
      if (!resolved.startsWith(path.resolve(dir) + path.sep)) throw new KustomizeError(`${dir}: ${file} is outside the kustomization's folder (kustomize refuses it)`);
      data[key] = fs.readFileSync(resolved, 'utf8');
    }
    for (const literal of g.literals ?? []) {
      const eq = String(literal).indexOf('=');
      data[String(literal).slice(0, eq)] = String(literal).slice(eq + 1);
    }
    const cm: Built = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: g.name }, data };
    cm[GENERATED] = true;
    return cm;
  });
}

function matches(o: KObject, target: { kind?: string; name?: string }): boolean {
  if (target.kind && o.kind !== target.kind) return false;
  if (target.name && !new RegExp(`^(?:${target.name})$`).test(o.metadata.name)) return false;
  return true;
}

function build(dir: string): Built[] {
  const file = kustomizationFile(dir);
  if (!file) throw new KustomizeError(`${dir}: no kustomization.yaml`);
  const k = readYamlDocs(file)[0] as any;
  for (const key of Object.keys(k)) if (!SUPPORTED.has(key)) throw new KustomizeError(`${file}: "${key}" is not supported by this renderer (test kit kustomize subset)`);

  let objects: Built[] = [];
  for (const entry of k.resources ?? []) {
    const target = path.resolve(dir, entry);
    if (fs.statSync(target).isDirectory()) objects.push(...build(target));
    else objects.push(...readYamlDocs(target));
  }
  objects.push(...generateConfigMaps(dir, k.configMapGenerator ?? []));

  for (const p of k.patches ?? []) {
    for (const key of Object.keys(p)) if (!['path', 'target'].includes(key)) throw new KustomizeError(`${file}: patches[].${key} is not supported by this renderer`);
    for (const key of Object.keys(p.target ?? {})) if (!['kind', 'name'].includes(key)) throw new KustomizeError(`${file}: patches[].target.${key} is not supported by this renderer`);
    for (const patch of readYamlDocs(path.resolve(dir, p.path))) {
      const selected = p.target ? objects.filter((o) => matches(o, p.target)) : objects.filter((o) => o.kind === patch.kind && o.metadata.name === patch.metadata?.name);
      if (selected.length === 0) throw new KustomizeError(`${file}: patch ${p.path} (${patch.kind} ${patch.metadata?.name}) matches no resource`);
      objects = objects.map((o) => {
        if (!selected.includes(o)) return o;
        const { metadata: _m, ...body } = patch;
        const merged: Built = strategicMerge(o, { ...body, ...(patch.metadata ? { metadata: { ...patch.metadata, name: o.metadata.name } } : {}) });
        if (o[GENERATED]) merged[GENERATED] = true;
        return merged;
      });
    }
  }

  if (k.namespace) {
    for (const o of objects) if (!CLUSTER_SCOPED.has(o.kind)) o.metadata.namespace = k.namespace;
  }
  for (const l of k.labels ?? []) {
    for (const key of Object.keys(l)) if (key !== 'pairs') throw new KustomizeError(`${file}: labels[].${key} is not supported by this renderer (metadata labels only)`);
    for (const o of objects) o.metadata.labels = { ...(o.metadata.labels ?? {}), ...l.pairs };
  }
  for (const img of k.images ?? []) {
    for (const key of Object.keys(img)) if (!['name', 'newName', 'newTag', 'digest'].includes(key)) throw new KustomizeError(`${file}: images[].${key} is not supported by this renderer`);
    for (const o of objects) {
      for (const spec of podSpecs(o)) {
        for (const c of containersOf(spec)) {
          const cur = splitImage(c.image);
          if (cur.name !== img.name) continue;
          const name = img.newName ?? cur.name;
          c.image = img.digest ? `${name}@${img.digest}` : `${name}${img.newTag ?? cur.tag ? `:${img.newTag ?? cur.tag}` : ''}${!img.newTag && cur.digest ? `@${cur.digest}` : ''}`;
        }
      }
    }
  }
  return objects;
}

/** The objects `kustomize build <dir>` prints (order aside). */
export function kustomizeBuild(dir: string): KObject[] {
  const objects = build(dir);
  for (const o of objects) {
    if (!o[GENERATED]) continue;
    const from = o.metadata.name;
    o.metadata.name = `${from}-${configMapHash(o)}`;
    delete o[GENERATED];
    renameConfigMapRefs(
      objects.filter((x) => x.kind !== 'ConfigMap' && (x.metadata.namespace ?? null) === (o.metadata.namespace ?? null)),
      from,
      o.metadata.name,
    );
  }
  return objects;
}
