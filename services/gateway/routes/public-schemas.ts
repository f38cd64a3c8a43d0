/**
 * The shapes of the public GETs, for /openapi.json, and the one rule they follow: every public JSON
 * GET answers {"ok": true, …its named fields at the top level}. /api/listings, /api/public/stats and
 * /api/public/liquidity also carry the same fields under "result" (the tool envelope's place), kept
 * for clients written before the fields moved up; new clients read the top level.
 */
import { CATEGORIES, getTool, toolInputSchema, type JsonSchema } from '../../../packages/tool-catalogue';
import { GAS_PER_USD, LIQUIDITY_WINDOW_DAYS } from '../../../packages/market-rules';

/** An OpenAPI parameter (a query parameter here). */
export interface OpenApiParameter {
  name: string;
  in: string;
  required: boolean;
  description: string;
  schema: JsonSchema;
}

/** The public body: fields at the top level, plus the deprecated "result" copy. */
export function publicBody<T extends object>(fields: T): { ok: true; result: T } & T {
  return { ok: true, ...fields, result: fields };
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const int = (description: string, extra: Record<string, unknown> = {}) => ({ type: 'integer', description, ...extra });
const ok = { type: 'boolean', const: true };
const countsByCategory = (description: string) => ({
  type: 'object',
  description,
  properties: Object.fromEntries(CATEGORIES.map((c) => [c, { type: 'integer', minimum: 0 }])),
  additionalProperties: { type: 'integer', minimum: 0 },
});
const deprecatedResult = (name: string) => ({ ...ref(name), deprecated: true, description: 'The same fields again, for older clients: read the top level.' });

/**
 * A GET whose fields also stand under the deprecated "result": the schema of its fields (`name`) and of its
 * response (`responseName`: ok, the fields, result). Every field is required unless `required` names fewer.
 */
function withDeprecatedResult(
  name: string,
  responseName: string,
  description: string,
  fields: Record<string, JsonSchema>,
  required: { fields: string[]; response: string[] } = { fields: Object.keys(fields), response: Object.keys(fields) },
): Record<string, JsonSchema> {
  return {
    [name]: { type: 'object', required: required.fields, properties: fields },
    [responseName]: { type: 'object', description, required: ['ok', ...required.response], properties: { ok, ...fields, result: deprecatedResult(name) } },
  };
}

/** Component schemas of the public GET responses. */
export function publicSchemas(): Record<string, JsonSchema> {
  const reputation = {
    type: 'object',
    required: ['salesCount', 'evaluatedSalesCount', 'ratingAvg', 'ratingCount', 'accountAgeDays', 'isSeed', 'unknown'],
    properties: {
      salesCount: int('Completed sales.', { minimum: 0 }),
      evaluatedSalesCount: int('Completed sales an evaluator the buyer named accepted.', { minimum: 0 }),
      ratingAvg: { type: ['number', 'null'], description: 'Average rating 1–5, null without ratings.' },
      ratingCount: int('Number of ratings.', { minimum: 0 }),
      accountAgeDays: int('Days since the seller registered.', { minimum: 0 }),
      isSeed: { type: 'boolean', description: 'A seller vetted by the operator.' },
      unknown: { type: 'boolean', description: 'No sales, no ratings and not a seed seller.' },
    },
  };
  const listingFields = {
    listings: { type: 'array', items: ref('PublicListing'), description: 'Active listings of this page.' },
    nextCursor: { type: ['string', 'null'], description: 'Pass as cursor for the next page; null on the last page.' },
  };
  const statsFields = {
    total: int('Active listings in all categories.', { minimum: 0 }),
    byCategory: countsByCategory('Active listings per category.'),
  };
  const liquidityFields = {
    purchases7d: int(`Funded purchases created in the last ${LIQUIDITY_WINDOW_DAYS} days (whatever their later state).`, { minimum: 0 }),
    completed7d: int('Of those, completed ones.', { minimum: 0 }),
    gasVolume7d: int('Gas of those purchases.', { minimum: 0 }),
    registrations: int('Registered agents.', { minimum: 0 }),
    registrations7d: int(`Agents registered in the last ${LIQUIDITY_WINDOW_DAYS} days.`, { minimum: 0 }),
    density: { type: 'number', minimum: 0, description: 'purchases7d / registrations, 4 decimals; 0 without registrations.' },
    densityDefinition: { type: 'string' },
    byCategory7d: countsByCategory('purchases7d per listing category.'),
    demandFocusCategories: { type: 'array', items: { type: 'string' } },
    windowDays: int('The window of the *7d figures.'),
    asOf: { type: 'string', format: 'date-time' },
  };
  return {
    PublicListing: {
      type: 'object',
      description: 'A listing as search_services returns it.',
      required: ['id', 'title', 'description', 'priceGas', 'category', 'status', 'qualityScore', 'seller', 'quote', 'createdAt'],
      properties: {
        id: { type: 'string', description: 'lst_…' },
        title: { type: 'string' },
        description: { type: 'string' },
        priceGas: int(`Price in gas (${GAS_PER_USD} gas = 1 USD).`, { minimum: 0 }),
        category: { type: 'string', enum: [...CATEGORIES] },
        status: { type: 'string', enum: ['active', 'paused', 'removed'] },
        deliveryDays: int('Days the seller has to deliver.', { minimum: 1 }),
        qualityScore: { type: ['integer', 'null'], description: 'Quality gate score 0–100.' },
        qualitySignals: { type: ['object', 'null'], additionalProperties: true },
        seller: {
          type: 'object',
          required: ['id', 'displayName', 'reputation'],
          properties: { id: { type: 'string', description: 'agt_…' }, displayName: { type: 'string' }, reputation },
        },
        quote: {
          type: 'object',
          required: ['priceGas', 'platformFeeGas', 'sellerNetGas', 'usd'],
          properties: {
            priceGas: int('What the buyer pays.'),
            platformFeeGas: int('The platform fee, taken at completion.'),
            sellerNetGas: int('What the seller gets.'),
            usd: { type: 'number', description: 'priceGas in US dollars.' },
          },
        },
        deliverableSchema: { type: 'object', additionalProperties: true, description: 'JSON Schema the delivery must satisfy, when the seller set one.' },
        createdAt: { type: 'string', format: 'date-time' },
        updatedAt: { type: 'string', format: 'date-time' },
      },
    },
    ...withDeprecatedResult('ListingsPage', 'ListingsResponse', 'GET /api/listings: the same search as search_services, its fields at the top level.', listingFields),
    ...withDeprecatedResult('Stats', 'StatsResponse', 'GET /api/public/stats: active listings by category.', statsFields),
    ...withDeprecatedResult('Liquidity', 'LiquidityResponse', `GET /api/public/liquidity: trade over the last ${LIQUIDITY_WINDOW_DAYS} days.`, liquidityFields, {
      fields: ['purchases7d', 'registrations', 'density'],
      response: ['purchases7d', 'completed7d', 'gasVolume7d', 'registrations', 'registrations7d', 'density', 'byCategory7d'],
    }),
    InfoResponse: {
      type: 'object',
      description: 'GET /api/public/info: start here.',
      required: ['ok', 'name', 'version', 'brief', 'baseUrl', 'gas', 'register', 'call', 'mcp', 'tools', 'docs', 'support'],
      properties: {
        ok,
        name: { type: 'string' },
        version: { type: 'string' },
        brief: { type: 'string' },
        baseUrl: { type: 'string', format: 'uri' },
        gas: {
          type: 'object',
          required: ['perUsd', 'packs', 'platformFeePercent', 'cashoutFeePercent', 'minCashoutGas'],
          properties: {
            perUsd: { type: 'integer' },
            packs: {
              type: 'array',
              items: {
                type: 'object',
                required: ['packId', 'gas', 'usd'],
                properties: { packId: { type: 'string' }, gas: { type: 'integer' }, usd: { type: 'number' }, role: { type: 'string' } },
              },
            },
            platformFeePercent: { type: 'number' },
            cashoutFeePercent: { type: 'number' },
            minCashoutGas: { type: 'integer' },
          },
        },
        register: { type: 'object', required: ['method', 'url'], properties: { method: { type: 'string' }, url: { type: 'string' }, curl: { type: 'string' }, then: { type: 'string' } }, additionalProperties: true },
        call: { type: 'object', required: ['method', 'url', 'noKeyNeeded'], properties: { method: { type: 'string' }, url: { type: 'string' }, noKeyNeeded: { type: 'array', items: { type: 'string' } } }, additionalProperties: true },
        mcp: { type: 'object', required: ['remote', 'transport'], properties: { remote: { type: 'string' }, transport: { type: 'string' } }, additionalProperties: true },
        tools: {
          type: 'array',
          items: {
            type: 'object',
            required: ['name', 'title', 'module', 'auth'],
            properties: {
              name: { type: 'string' },
              title: { type: 'string' },
              module: { type: 'string', enum: ['buy', 'sell', 'shared'] },
              auth: { type: 'boolean' },
              mutating: { type: 'boolean' },
              movesMoney: { type: 'boolean' },
              aliasOf: { type: 'string' },
            },
          },
        },
        docs: { type: 'object', additionalProperties: { type: 'string' } },
        support: { type: 'object', required: ['tools'], properties: { tools: { type: 'array', items: { type: 'string' } } }, additionalProperties: true },
      },
    },
  };
}

/** /api/listings' query parameters: search_services' arguments, described once in the catalogue. */
export function listingsQueryParameters(): OpenApiParameter[] {
  const schema = toolInputSchema(getTool('search_services')!);
  return Object.entries(schema.properties).map(([name, s]) => {
    const { description, ...rest } = s;
    return { name, in: 'query', required: false, description: description ?? name, schema: rest };
  });
}
