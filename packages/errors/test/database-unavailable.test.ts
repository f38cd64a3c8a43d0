/** Database faults are 503 service_unavailable with Retry-After and a hint — never 500 — whatever shape they arrive in. */
import { Errors } from 'moleculer';
import { DATABASE_RETRY_AFTER_SECONDS, DatabaseUnavailableError, databaseUnavailableReason, MarketError, toEnvelope } from '..';

/** An error as node-postgres raises it: a message, and a SQLSTATE or errno name in `code`. */
function pgError(message: string, code?: string): Error {
  return Object.assign(new Error(message), code ? { code } : {});
}

const UNAVAILABLE: Array<[string, Error]> = [
  ['57P01 admin shutdown (restart -m fast, pg_terminate_backend)', pgError('terminating connection due to administrator command', '57P01')],
  ['57P02 crash shutdown', pgError('terminating connection because of crash of another server process', '57P02')],
  ['57P03 cannot connect now (starting up / shutting down)', pgError('the database system is starting up', '57P03')],
  ['57014 statement timeout', pgError('canceling statement due to statement timeout', '57014')],
  ['08006 connection failure', pgError('connection failure', '08006')],
  ['08001 cannot establish connection', pgError('could not connect', '08001')],
  ['08P01 protocol violation', pgError('protocol violation', '08P01')],
  ['25P03 idle-in-transaction timeout', pgError('terminating connection due to idle-in-transaction timeout', '25P03')],
  ['53300 too many connections', pgError('sorry, too many clients already', '53300')],
  ['ECONNREFUSED', pgError('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
  ['ECONNRESET', pgError('read ECONNRESET', 'ECONNRESET')],
  ['ETIMEDOUT', pgError('connect ETIMEDOUT 10.0.0.5:5432', 'ETIMEDOUT')],
  ['EPIPE', pgError('write EPIPE', 'EPIPE')],
  ['pg: connection ended under a query', pgError('Connection terminated unexpectedly')],
  ['pg: connection ended', pgError('Connection terminated')],
  ['pg-pool: connect timeout / pool exhausted', pgError('timeout exceeded when trying to connect')],
  ['pg-pool: connection timeout while connecting', new Error('Connection terminated due to connection timeout', { cause: new Error('Connection terminated unexpectedly') })],
  ['pg: query_timeout', pgError('Query read timeout')],
  ['pg: broken client', pgError('Client has encountered a connection error and is not queryable')],
  ['AggregateError of refused addresses (localhost: ::1 and 127.0.0.1)', Object.assign(new AggregateError([pgError('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED'), pgError('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')]), { code: 'ECONNREFUSED' })],
];

describe('database faults are 503 service_unavailable', () => {
  it.each(UNAVAILABLE)('%s → 503 with Retry-After and a hint', (_name, err) => {
    expect(databaseUnavailableReason(err)).toEqual(expect.any(String));
    const mapped = toEnvelope(err, 'req_1');
    expect(mapped.status).toBe(503);
    expect(mapped.retryAfterSeconds).toBe(DATABASE_RETRY_AFTER_SECONDS);
    expect(mapped.body.error.code).toBe('service_unavailable');
    expect(mapped.body.error.hint).toMatch(/Idempotency-Key/);
    expect(mapped.body.error.details).toMatchObject({ dependency: 'database' });
  });

  it.each(UNAVAILABLE)('%s wrapped by packages/db keeps its code and Retry-After over the bus', (_name, err) => {
    const wrapped = new DatabaseUnavailableError(databaseUnavailableReason(err)!, err);
    expect(wrapped.retryable).toBe(true);
    // What a remote caller receives: Moleculer copies name, message, code, type, data and retryable.
    const copy = Object.assign(new Errors.MoleculerError(wrapped.message, wrapped.code, wrapped.type, wrapped.data), { retryable: wrapped.retryable });
    const mapped = toEnvelope(copy, 'req_2');
    expect(mapped.status).toBe(503);
    expect(mapped.retryAfterSeconds).toBe(DATABASE_RETRY_AFTER_SECONDS);
    expect(mapped.body.error.hint).toEqual(expect.any(String));
  });

  it.each([
    ['a unique violation', pgError('duplicate key value violates unique constraint', '23505')],
    ['a check violation', pgError('new row violates check constraint', '23514')],
    ['a serialization failure (retried by the db layer)', pgError('could not serialize access', '40001')],
    ['a syntax error (a bug)', pgError('syntax error at or near "SELEC"', '42601')],
    ['a plain bug', new TypeError('cannot read properties of undefined')],
  ])('%s is not a database fault', (_name, err) => {
    expect(databaseUnavailableReason(err)).toBeNull();
    expect(toEnvelope(err, 'r').status).not.toBe(503);
  });

  it('service_unavailable and rate_limited are retryable; the other codes are not', () => {
    expect(new MarketError('service_unavailable', 'x').retryable).toBe(true);
    expect(new MarketError('rate_limited', 'x').retryable).toBe(true);
    expect(new MarketError('invalid_state', 'x').retryable).toBe(false);
    expect(new MarketError('internal', 'x').retryable).toBe(false);
  });
});
