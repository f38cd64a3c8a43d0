import { Errors } from 'moleculer';
import { InsufficientGasError, ListingRejectedError, MarketError, NotFoundError, STATUS_BY_CODE, toEnvelope } from '..';

describe('error envelope', () => {
  it('maps every code to the status of DESIGN §5', () => {
    expect(STATUS_BY_CODE).toMatchObject({
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
    });
  });

  it('keeps code, message, hint and details of typed errors', () => {
    const { status, body } = toEnvelope(
      new InsufficientGasError('Not enough gas.', { hint: 'buy_gas', details: { shortfallGas: 40 } }),
      'req_1',
    );
    expect(status).toBe(402);
    expect(body).toEqual({ ok: false, error: { code: 'insufficient_gas', message: 'Not enough gas.', hint: 'buy_gas', details: { shortfallGas: 40 } }, requestId: 'req_1' });
    expect(toEnvelope(new NotFoundError('gone'), 'r').status).toBe(404);
    expect(toEnvelope(new ListingRejectedError('no', { details: { qualityReport: {} } }), 'r').status).toBe(422);
  });

  it('recognises a typed error that crossed the bus as a plain object', () => {
    const overTheWire = Object.assign(new Error('Not your purchase.'), { type: 'forbidden', code: 403, data: { hint: 'x' } });
    expect(toEnvelope(overTheWire, 'r')).toMatchObject({ status: 403, body: { error: { code: 'forbidden', hint: 'x' } } });
  });

  it('turns Moleculer validation errors into invalid_arguments with field errors', () => {
    const err = new Errors.ValidationError('bad', 'VALIDATION_ERROR', [{ field: 'rating', message: 'too big', type: 'numberMax' }]);
    const { status, body } = toEnvelope(err, 'r');
    expect(status).toBe(400);
    expect(body.error.code).toBe('invalid_arguments');
    expect(body.error.details).toEqual({ errors: [{ field: 'rating', message: 'too big', type: 'numberMax' }] });
  });

  it('answers 503 with Retry-After when the owning service is unreachable', () => {
    const mapped = toEnvelope(new Errors.ServiceNotFoundError({ action: 'ledger.hold' }), 'r');
    expect(mapped.status).toBe(503);
    expect(mapped.retryAfterSeconds).toBeGreaterThan(0);
  });

  it('never leaks the message or stack of an unexpected error', () => {
    const { status, body } = toEnvelope(new Error('password=hunter2 at db.ts:12'), 'req_9');
    expect(status).toBe(500);
    expect(JSON.stringify(body)).not.toContain('hunter2');
    expect(body.error.code).toBe('internal');
    expect(body.requestId).toBe('req_9');
  });

  it('is a MoleculerError so it survives serialization', () => {
    const e = new MarketError('invalid_state', 'nope');
    expect(e).toBeInstanceOf(Errors.MoleculerError);
    expect(e.code).toBe(409);
    expect(e.type).toBe('invalid_state');
  });
});
