/**
 * Deliveries: canonical JSON (keys sorted, no whitespace) is what is stored and hashed, so a buyer
 * can recompute the sha256 from the delivery it reads. The listing's deliverableSchema is enforced with ajv,
 * its regexes run by a linear-time engine (packages/safe-schema): a seller's pattern cannot stall the process.
 */
import type { ValidateFunction } from 'ajv';
import { canonicalJson, sha256Hex } from '../../packages/ids';
import { createSchemaAjv } from '../../packages/safe-schema';
import { InvalidArgumentsError } from '../../packages/errors';

import { MAX_DELIVERY_BYTES } from '../../packages/market-rules';

export { MAX_DELIVERY_BYTES };

export { canonicalJson };

export function deliveryHash(canonical: string): string {
  return sha256Hex(Buffer.from(canonical, 'utf8'));
}

const ajv = createSchemaAjv();
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
