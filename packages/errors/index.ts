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

/** Codes whose call may succeed when repeated unchanged later (with the same Idempotency-Key): Moleculer's `retryable`. */
export const RETRYABLE_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['service_unavailable', 'rate_limited']);

export class MarketError extends Errors.MoleculerError {
  constructor(code: ErrorCode, message: string, data: ErrorData = {}) {
    super(message, STATUS_BY_CODE[code], code, data);
    this.name = 'MarketError';
    this.retryable = RETRYABLE_CODES.has(code);
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

/** Retry-After of a database fault: about one failed connect attempt; a client backing off finds a failed-over server. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * The database cannot answer right now — a failover, a restart, a frozen or unreachable server, a full pool
 * (what isDatabaseUnavailable recognises). Nothing the caller sent is wrong: 503, with Retry-After. packages/db
 * throws it in place of the driver's error, so it keeps its code and hint over the bus.
 */
export class DatabaseUnavailableError extends MarketError {
  constructor(readonly reason: string, cause?: unknown) {
    super('service_unavailable', `The database is not reachable right now (${reason}).`, {
      hint: `Retry in ${DATABASE_RETRY_AFTER_SECONDS} s with the same Idempotency-Key: a step that already happened answers its result again, nothing is charged twice. A database failover can take up to a minute.`,
      retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS,
      details: { dependency: 'database', reason },
    });
    this.name = 'DatabaseUnavailableError';
    if (cause !== undefined) (this as { cause?: unknown }).cause = cause;
  }
}

/**
 * SQLSTATEs of a server that is going away or not there yet: class 08 (connection exception), 57P01–57P03
 * (admin/crash shutdown, cannot connect now: a restart or failover), 57014 (statement_timeout or a cancel), 25P03
 * (idle-in-transaction timeout ended the session), 53300 (too many connections).
 */
const UNAVAILABLE_SQLSTATE = /^(08[0-9A-Z]{3}|57P0[1-3]|57014|25P03|53300)$/;
/** Socket errors of an unreachable or vanished server (errno names, as Node sets err.code). */
const UNAVAILABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'EAI_AGAIN', 'ECONNABORTED']);
/**
 * node-postgres and pg-pool say these in words, without a code: a connection ended under a query, the pool's
 * connect/wait timeout (connectionTimeoutMillis: also a full pool), the client's query_timeout, a broken client.
 */
const UNAVAILABLE_MESSAGE =
  /^(Connection terminated|timeout exceeded when trying to connect|timeout expired|Query read timeout|Client has encountered a connection error|Client was closed and is not queryable|Cannot use a pool after calling end)/;

/**
 * Why an error means "the database cannot answer right now", in a few words, or null when it is something else
 * (a constraint, bad input, a bug). Reads only `code` and `message`, so it works on the driver's errors as thrown
 * and on their copies after a trip over the bus.
 */
export function databaseUnavailableReason(err: unknown): string | null {
  const e = err as { code?: unknown; message?: unknown; errno?: unknown; cause?: unknown } | null | undefined;
  if (!e || typeof e !== 'object') return null;
  const code = typeof e.code === 'string' ? e.code : '';
  if (UNAVAILABLE_SQLSTATE.test(code)) {
    if (code === '57014') return 'statement timeout (57014)';
    if (code.startsWith('08')) return `connection exception (${code})`;
    if (code === '53300') return 'too many connections (53300)';
    if (code === '25P03') return 'session ended by the idle-in-transaction timeout (25P03)';
    return `server shutting down or starting (${code})`;
  }
  if (UNAVAILABLE_ERRNO.has(code)) return `connection failed (${code})`;
  const message = typeof e.message === 'string' ? e.message : '';
  const m = UNAVAILABLE_MESSAGE.exec(message);
  if (m) {
    if (m[1].startsWith('Query')) return 'query timeout';
    // "timeout exceeded when trying to connect" (a full pool, or connecting too long), "… due to connection timeout".
    if (/timeout/i.test(message)) return 'connection timeout or pool exhausted';
    return 'connection lost';
  }
  // AggregateError (a host with several addresses) and pg-pool's "connection timeout" wrap the socket error.
  if (e.cause && e.cause !== err) return databaseUnavailableReason(e.cause);
  const inner = (e as { errors?: unknown }).errors;
  if (Array.isArray(inner) && inner.length > 0 && inner.every((x) => databaseUnavailableReason(x) !== null)) return databaseUnavailableReason(inner[0]);
  return null;
}

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
  const unavailable = databaseUnavailableReason(err);
  if (unavailable) {
    // A driver error that reached the envelope unwrapped (packages/db wraps its own): still 503, never 500.
    return toEnvelope(new DatabaseUnavailableError(unavailable), requestId);
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
