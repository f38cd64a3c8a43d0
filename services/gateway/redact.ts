/**
 * Paths that carry a secret (issue #23): the owner link's token, the approval link's token and the
 * checkout session id (anyone holding a sandbox one can approve it). Logged as `[redacted]`, the way
 * the query string is never logged. Every route with a secret in its path is listed here; a test
 * checks the list against the app's routes.
 */
const SECRET_PATHS: RegExp[] = [
  /^(\/owner\/)[^/]+/,
  /^(\/approve\/)[^/]+/,
  /^(\/checkout\/sandbox\/)[^/]+/,
  /^(\/checkout\/)(?!done$|cancelled$|sandbox(?:\/|$))[^/]+/,
];
/** Route patterns whose parameter is a secret (for the completeness test). */
export const SECRET_ROUTE_PREFIXES = ['/owner/:token', '/approve/:token', '/checkout/sandbox/:sessionId', '/checkout/:sessionId'];

export function redactPath(path: string): string {
  for (const re of SECRET_PATHS) if (re.test(path)) return path.replace(re, '$1[redacted]');
  return path;
}
