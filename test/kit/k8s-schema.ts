/**
 * A Kubernetes object checked against its API schema (kubernetes-models: the OpenAPI definitions of
 * each apiVersion/kind, compiled for ajv) with unknown fields rejected, as `kubectl apply
 * --validate=strict` would: a `readinesProbe` typo is an error, not a silently ignored field.
 *
 * The compiled schemas type-check the fields they define but let any other field through (the
 * Kubernetes OpenAPI documents carry no additionalProperties: false). Every field a schema defines is
 * read by its compiled validator, and maps (labels, ConfigMap data, …) are iterated whole; so the
 * object is validated through proxies that record every read, and a key of a visited object that
 * the validator never read is a field the schema does not know.
 */
import type { KObject } from './kustomize';

interface Visit {
  path: string;
  value: Record<string, unknown>;
  read: Set<string>;
  touched: boolean;
}

function tracked(value: unknown, at: string, visits: Visit[]): unknown {
  if (value === null || typeof value !== 'object') return value;
  const visit: Visit = { path: at, value: value as Record<string, unknown>, read: new Set(), touched: false };
  visits.push(visit);
  const children = new Map<string, unknown>();
  return new Proxy(value as object, {
    get(target, key, receiver) {
      visit.touched = true;
      const v = Reflect.get(target, key, receiver);
      if (typeof key !== 'string') return v;
      visit.read.add(key);
      if (v === null || typeof v !== 'object') return v;
      if (!children.has(key)) children.set(key, tracked(v, Array.isArray(value) ? `${at}[${key}]` : `${at}.${key}`, visits));
      return children.get(key);
    },
    has(target, key) {
      visit.touched = true;
      return Reflect.has(target, key);
    },
    ownKeys(target) {
      visit.touched = true;
      return Reflect.ownKeys(target);
    },
  });
}

type ValidateFn = (this: unknown) => void;

type ModelModule = Record<string, { prototype: { validate: ValidateFn } } | undefined>;
const modules = new Map<string, Promise<ModelModule | null>>();

/**
 * The schema's validate function for an apiVersion/kind (core "v1" lives at kubernetes-models/v1).
 * kubernetes-models 5 is ESM only (no `require` export): loaded with import(), which jest.config.js
 * leaves native for this file so Jest's ESM loader (--experimental-vm-modules) serves it.
 */
async function validatorOf(apiVersion: string, kind: string): Promise<ValidateFn | null> {
  let mod = modules.get(apiVersion);
  if (!mod) {
    mod = (import(`kubernetes-models/${apiVersion}`) as Promise<ModelModule>).catch(() => null);
    modules.set(apiVersion, mod);
  }
  return (await mod)?.[kind]?.prototype.validate ?? null;
}

/** Schema errors and unknown fields of one object ("" when valid), e.g. "unknown field .spec…readinesProbe". */
export async function strictSchemaErrors(obj: KObject): Promise<string> {
  const validate = await validatorOf(obj.apiVersion, obj.kind);
  if (!validate) return `no Kubernetes schema for ${obj.apiVersion} ${obj.kind}`;
  const visits: Visit[] = [];
  const problems: string[] = [];
  try {
    validate.call(tracked(obj, '', visits));
  } catch (err) {
    problems.push((err as Error).message);
  }
  for (const v of visits) {
    if (!v.touched || Array.isArray(v.value)) continue;
    for (const key of Object.keys(v.value)) if (!v.read.has(key)) problems.push(`unknown field ${v.path}.${key}`);
  }
  return problems.join('; ');
}
