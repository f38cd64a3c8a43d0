/**
 * Issue #23 (info): an argument named like an Object.prototype member (__proto__, constructor,
 * toString…) is a plain unknown argument, never "did you mean [object Object]", over /api/agent and /mcp's
 * shared dispatcher.
 */
import { startTestApp, type TestApp } from '../../../test/kit';

describe('prototype-named arguments (issue #23)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => app?.stop());

  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'])('{"%s": {}} is a plain unknown argument', async (name) => {
    const { apiKey } = await app.api.register('Proto');
    const res = await fetch(`${app.baseUrl}/api/agent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: `{"tool":"whoami","arguments":{"${name}":{}}}`,
    });
    const body = (await res.json()) as any;
    expect(res.status).toBe(400);
    expect(body.error.code).toBe('invalid_arguments');
    const text = JSON.stringify(body);
    expect(text).not.toContain('[object Object]');
    expect(text).not.toMatch(/did you mean|function/i);
    expect(body.error.details.errors[0]).toEqual({ field: name, message: 'unknown argument', type: 'unknownArgument' });
  });
});
