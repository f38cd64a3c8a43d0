/**
 * Deliveries: canonical JSON (keys sorted, no whitespace) is what is stored and hashed, so a buyer
 * can recompute the sha256 from the delivery it reads. The listing's deliverableSchema is enforced with ajv.
 */
import Ajv, { type ValidateFunction } from 'ajv';
import { sha256Hex } from '../../packages/ids';
import { InvalidArgumentsError } from '../../packages/errors';

export const MAX_DELIVERY_BYTES = 64 * 1024;

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) return 'null';
    return JSON.stringify(value) ?? 'null';
  }
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

export function deliveryHash(canonical: string): string {
  return sha256Hex(Buffer.from(canonical, 'utf8'));
}

const ajv = new Ajv({ allErrors: true, strict: false });
const compiled = new Map<string, ValidateFunction | null>();

function validatorFor(schema: Record<string, unknown>): ValidateFunction | null {
  const key = canonicalJson(schema);
  if (compiled.has(key)) return compiled.get(key)!;
  let fn: ValidateFunction | null;
  try {
    fn = ajv.compile(schema);
  } catch {
    // The listing service validates schemas at list time; an uncompilable one is not enforced.
    fn = null;
  }
  if (compiled.size > 1000) compiled.clear();
  compiled.set(key, fn);
  return fn;
}

/** Checks a delivery and returns its canonical form and sha256; throws invalid_arguments (nothing stored). */
export function prepareDelivery(delivery: unknown, deliverableSchema: Record<string, unknown> | null): { canonical: string; sha256: string } {
  if (!delivery || typeof delivery !== 'object' || Array.isArray(delivery)) {
    throw new InvalidArgumentsError('delivery must be a JSON object.', { hint: 'Send delivery: {"summary": "what you delivered", …}.' });
  }
  const summary = (delivery as Record<string, unknown>).summary;
  if (typeof summary !== 'string' || !summary.trim()) {
    throw new InvalidArgumentsError('delivery.summary is required: a non-empty string.', {
      hint: 'Add delivery.summary: a few sentences saying what you delivered.',
      details: { errors: [{ field: 'delivery.summary', message: 'required non-empty string' }] },
    });
  }
  const canonical = canonicalJson(delivery);
  const bytes = Buffer.byteLength(canonical, 'utf8');
  if (bytes > MAX_DELIVERY_BYTES) {
    throw new InvalidArgumentsError(`The delivery is ${bytes} bytes of JSON; the limit is ${MAX_DELIVERY_BYTES}.`, {
      hint: 'Deliver large artefacts as links (e.g. a repository or file URL with its checksum) and keep the delivery object under 64 KB.',
      details: { bytes, maxBytes: MAX_DELIVERY_BYTES },
    });
  }
  if (deliverableSchema && typeof deliverableSchema === 'object') {
    const validate = validatorFor(deliverableSchema);
    if (validate && !validate(JSON.parse(canonical))) {
      const errors = (validate.errors ?? []).slice(0, 20).map((e) => ({
        field: `delivery${e.instancePath.replace(/\//g, '.')}`,
        message: e.message ?? 'invalid',
        keyword: e.keyword,
        params: e.params,
      }));
      throw new InvalidArgumentsError('The delivery does not satisfy the listing\'s deliverableSchema.', {
        hint: 'Fix the fields in details.errors; details.deliverableSchema is the schema the buyer asked for.',
        details: { errors, deliverableSchema },
      });
    }
  }
  return { canonical, sha256: deliveryHash(canonical) };
}
