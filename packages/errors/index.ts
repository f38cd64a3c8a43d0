/**
 * Typed errors. Services throw these; the gateway maps them to the envelope of DESIGN §5
 * in one place (toEnvelope). They extend MoleculerError so that code (HTTP status),
 * type (error code) and data ({hint, details}) survive the trip over NATS.
 */
import { Errors } from 'moleculer';

export type ErrorCode =
  | 'invalid_arguments'
  | 'unknown_tool'
  | 'unauthorized'
  | 'insufficient_gas'
  | 'forbidden'
  | 'not_found'
  | 'invalid_state'
  | 'listing_rejected'
  | 'rate_limited'
  | 'internal'
  | 'not_implemented'
  | 'service_unavailable';

export const STATUS_BY_CODE: Record<ErrorCode, number> = {
  invalid_arguments: 400,
  unknown_tool: 400,
  unauthorized: 401,
  insufficient_gas: 402,
  forbidden: 403,
  not_found: 404,
  invalid_state: 409,
  listing_rejected: 422,
  rate_limited: 429,
  internal: 500,
  not_implemented: 501,
  service_unavailable: 503,
};

export interface ErrorData {
  hint?: string;
  details?: Record<string, unknown>;
  /** rate_limited / service_unavailable: sent as the Retry-After header. */
  retryAfterSeconds?: number;
}

export class MarketError extends Errors.MoleculerError {
  constructor(code: ErrorCode, message: string, data: ErrorData = {}) {
    super(message, STATUS_BY_CODE[code], code, data);
    this.name = 'MarketError';
  }
}

/** The base of an error class with one code: its message and data are the thrower's. */
function withCode(code: ErrorCode) {
  return class extends MarketError {
    constructor(message: string, data: ErrorData = {}) {
      super(code, message, data);
    }
  };
}

export class InvalidArgumentsError extends withCode('invalid_arguments') {}
export class UnauthorizedError extends MarketError {
  constructor(message = 'A valid API key is required for this tool.', data: ErrorData = {}) {
    super('unauthorized', message, {
      hint: 'Register with POST /api/agent/register (or the register tool) and send the key as "Authorization: Bearer rk_live_…".',
      ...data,
    });
  }
}
export class InsufficientGasError extends withCode('insufficient_gas') {}
export class ForbiddenError extends withCode('forbidden') {}
export class NotFoundError extends withCode('not_found') {}
export class InvalidStateError extends withCode('invalid_state') {}
export class ListingRejectedError extends withCode('listing_rejected') {}
export class NotImplementedError extends withCode('not_implemented') {}

export interface ErrorEnvelope {
  ok: false;
  error: { code: ErrorCode; message: string; hint?: string; details?: Record<string, unknown> };
  requestId: string;
}

/**
 * PostgreSQL errors that mean "this input cannot be stored or searched" (SQLSTATE classes 22 data
 * exception and 54 program limit: NUL bytes, bad Unicode, out-of-range numbers, a tsquery or index
 * row too large). The gateway's guards refuse such input first; this is the safety net, so a gap in
 * them answers 400, not 500 (and is logged as `unexpected` so the gap gets closed).
 */
const BAD_INPUT_SQLSTATE = /^(22|54)[0-9A-Z]{3}$/;

export interface MappedError {
  status: number;
  body: ErrorEnvelope;
  retryAfterSeconds?: number;
  /** A 4xx that only the database noticed: worth a warning in the logs. */
  unexpected?: boolean;
}

/** Maps anything thrown (ours, Moleculer's, or a plain Error) to a status and the envelope. */
export function toEnvelope(err: unknown, requestId: string): MappedError {
  const e = err as { type?: string; code?: number | string; message?: string; data?: unknown; name?: string };
  const type = typeof e?.type === 'string' ? e.type : undefined;

  if (type && type in STATUS_BY_CODE) {
    const code = type as ErrorCode;
    const data = (e.data ?? {}) as ErrorData & { retryAfterSeconds?: number };
    const error: ErrorEnvelope['error'] = { code, message: e.message ?? code };
    if (data.hint) error.hint = data.hint;
    if (data.details) error.details = data.details;
    return { status: STATUS_BY_CODE[code], body: { ok: false, error, requestId }, retryAfterSeconds: data.retryAfterSeconds };
  }
  if (type === 'VALIDATION_ERROR') {
    return {
      status: 400,
      body: {
        ok: false,
        error: {
          code: 'invalid_arguments',
          message: 'The arguments do not match the tool\'s schema.',
          hint: 'Fix the fields listed in details.errors; GET /api/agent shows every tool\'s argument schema.',
          details: { errors: simplifyValidationErrors(e.data) },
        },
        requestId,
      },
    };
  }
  if (type === 'SERVICE_NOT_FOUND' || type === 'SERVICE_NOT_AVAILABLE' || type === 'REQUEST_TIMEOUT' || type === 'REQUEST_REJECTED') {
    return {
      status: 503,
      body: {
        ok: false,
        error: {
          code: 'service_unavailable',
          message: 'The service behind this tool is not reachable right now.',
          hint: 'Retry in a few seconds with the same Idempotency-Key; nothing is charged twice.',
        },
        requestId,
      },
      retryAfterSeconds: 5,
    };
  }
  if (typeof e?.code === 'string' && BAD_INPUT_SQLSTATE.test(e.code)) {
    return {
      status: 400,
      unexpected: true,
      body: {
        ok: false,
        error: {
          code: 'invalid_arguments',
          message: 'The arguments contain a value that cannot be stored or searched.',
          hint: 'Send plain Unicode text without NUL characters, numbers within the documented ranges and shallow objects; GET /api/agent shows every argument\'s bounds.',
          details: { sqlState: e.code },
        },
        requestId,
      },
    };
  }
  return {
    status: 500,
    body: {
      ok: false,
      error: {
        code: 'internal',
        message: 'Something went wrong on our side.',
        hint: 'Retry once; if it persists, call report_bug with context.requestId set to this requestId.',
      },
      requestId,
    },
  };
}

export interface FieldError {
  field: string;
  message: string;
  type?: string;
}

export function simplifyValidationErrors(data: unknown): FieldError[] {
  if (!Array.isArray(data)) return [];
  return data.map((d: { field?: unknown; message?: unknown; type?: string }) => ({ field: String(d.field ?? ''), message: String(d.message ?? 'invalid'), type: d.type }));
}
