/**
 * One path for every tool call, whichever door it came through (HTTP router, MCP):
 * look the tool up in the catalogue → authenticate → rate-limit → validate → idempotency → call the
 * owning service's action → map errors to the envelope. The HTTP router and /mcp only adapt I/O.
 */
import type { CallingOptions, ServiceBroker } from 'moleculer';
import {
  argumentErrors,
  findArgumentsProblem,
  getTool,
  IDEMPOTENCY_KEY_PATTERN,
  suggestArgument,
  TOOL_NAMES,
  type ToolDefinition,
} from '../../packages/tool-catalogue';
import type { AuthenticatedAgent, CallMeta } from '../../packages/tool-catalogue/meta';
import { databaseUnavailableReason, MarketError, toEnvelope, type ErrorEnvelope } from '../../packages/errors';
import { callAgents, AGENTS, hashApiKey, type AgentProfile } from '../../packages/contracts/agents';
import type { Db } from '../../packages/db';
import type { RequestLog } from './request-log';
import { logMappedError } from './http';
import type { AuthFailureThrottle } from './auth-throttle';
import { SharedLimits, type SharedCounter } from './limits';
import { base62, canonicalJson, sha256Hex } from '../../packages/ids';
import { withRequestContext } from '../../packages/telemetry/context';
import { tracingEnabled, withSpan } from '../../packages/telemetry/tracing';

export interface ToolCall {
  tool: unknown;
  args: unknown;
  apiKey: string | null;
  idempotencyKey: string | null;
  requestId: string;
  /** Client address, for rate-limiting calls made without a key. */
  clientIp: string;
  via: 'http' | 'mcp';
}

export interface ToolOutcome {
  status: number;
  body: { ok: true; result: unknown } | ErrorEnvelope;
  headers: Record<string, string>;
  agentId: string | null;
  tool: string | null;
}

interface CachedAuth {
  agent: AuthenticatedAgent | null;
  /** The agent's public identity as agents answered it (whoami shows it). */
  profile: AgentProfile | null;
  expiresAt: number;
}

export interface DispatcherOptions {
  authCacheTtlMs: number;
  rateLimitPerMinute: number;
  db: Db;
  requestLog: RequestLog;
  /** Failed API-key authentications per client; absent = not throttled. */
  authThrottle?: AuthFailureThrottle;
  /** Where the call limit is counted (shared by replicas over PostgreSQL); absent = this process. */
  limits?: SharedLimits;
}

const IDEMPOTENCY_TTL_HOURS = 24;
/** An Idempotency-Key claim lapses this long after its gateway stopped renewing it (it died). */
export const IDEMPOTENCY_LEASE_MS = 5_000;
const IDEMPOTENCY_RENEW_MS = 1_500;
/** Tries of writing a keyed call's answer after the first (150, 300, 600 ms apart: under the lease). */
const STORE_ANSWER_RETRIES = 3;
/** How long a finished keyed call waits for its answer to be stored before answering anyway. */
const STORE_ANSWER_WAIT_MS = 2_000;

function isDatabaseFault(err: unknown): boolean {
  return (err as { type?: unknown })?.type === 'service_unavailable' || databaseUnavailableReason(err) !== null;
}

/**
 * Tools that need a key but have a public part an agent with a stale key still gets: whoami says
 * "not registered", ask_help answers from the documentation. Tools with auth: false need no key at all.
 */
const PUBLIC_PART = new Set(['whoami', 'ask_help']);
const KEY_NOT_VALID = 'The API key sent is not valid (revoked, mistyped, or from another server).';

/** How to replace a stale key, in the words of the door the agent came through (no HTTP route for MCP). */
function replaceKeyHint(via: ToolCall['via']): string {
  return via === 'mcp'
    ? 'Call the register tool (no key needed) for a new apiKey, then replace the key in this MCP server\'s configuration: the "Authorization: Bearer" header or ?api_key= of its URL, or MARKET_API_KEY for the @agent-market/mcp package; reconnect after.'
    : 'Call the register tool (no key needed) for a new apiKey, then replace the key you send as "Authorization: Bearer rk_live_…" (MARKET_API_KEY for the @agent-market/mcp package).';
}

/** Moleculer's answers for "no node serves this action right now" (not an error of the action itself). */
function isUnreachable(err: unknown): boolean {
  const type = (err as { type?: string })?.type;
  return type === 'SERVICE_NOT_FOUND' || type === 'SERVICE_NOT_AVAILABLE' || type === 'REQUEST_TIMEOUT' || type === 'REQUEST_REJECTED';
}

/** The purchase id a tool call names in its arguments or returns (`result.purchase.id`), if any. */
function purchaseIdOf(args: unknown, body: { ok: boolean; result?: unknown }): string | null {
  const fromArgs = args && typeof args === 'object' ? (args as { purchaseId?: unknown }).purchaseId : undefined;
  if (typeof fromArgs === 'string') return fromArgs;
  const purchase = body.ok && body.result && typeof body.result === 'object' ? (body.result as { purchase?: { id?: unknown } }).purchase : undefined;
  return typeof purchase?.id === 'string' ? purchase.id : null;
}

export class ToolDispatcher {
  private readonly authCache = new Map<string, CachedAuth>();
  /** Calls per agent (or per address without a key) and minute, shared by every replica. */
  private readonly calls: SharedCounter | null;

  constructor(
    private readonly broker: ServiceBroker,
    private readonly opts: DispatcherOptions,
  ) {
    const limits = opts.limits ?? new SharedLimits({ db: null, logger: broker.logger });
    this.calls = opts.rateLimitPerMinute > 0 ? limits.counter('calls', opts.rateLimitPerMinute, 60) : null;
  }

  /** Resolves a bearer key to an agent; cached a few seconds so a revoked key is refused within that time. */
  async authenticate(apiKey: string | null): Promise<AuthenticatedAgent | null> {
    return (await this.authenticated(apiKey))?.agent ?? null;
  }

  private async authenticated(apiKey: string | null): Promise<CachedAuth | null> {
    if (!apiKey || !/^rk_live_[0-9A-Za-z]{20,100}$/.test(apiKey)) return null;
    const hash = hashApiKey(apiKey);
    const now = Date.now();
    const cached = this.authCache.get(hash);
    if (cached && cached.expiresAt > now) return cached;
    const found = await callAgents(this.broker, AGENTS.authenticate, { apiKeyHash: hash });
    const agent = found ? { id: found.id, displayName: found.displayName, provider: found.provider } : null;
    if (this.authCache.size > 10_000) this.authCache.clear();
    const entry = { agent, profile: found ?? null, expiresAt: now + this.opts.authCacheTtlMs };
    this.authCache.set(hash, entry);
    return entry;
  }

  /**
   * Keys are resolved by the agents service. Without it, a tool that needs no key still answers
   * (as a key-less call), and one that needs a key answers 503 service_unavailable saying why —
   * never 401, which would tell the agent its key is wrong.
   */
  private async authenticatedOrDegraded(tool: ToolDefinition, apiKey: string | null): Promise<CachedAuth | null> {
    try {
      return await this.authenticated(apiKey);
    } catch (err) {
      if (!isUnreachable(err)) throw err;
      if (!tool.auth) return null;
      throw new MarketError('service_unavailable', 'API keys cannot be checked right now: the agents service is not reachable.', {
        hint: 'Retry in a few seconds with the same Idempotency-Key; nothing is charged twice. search_services needs no key and still answers.',
        retryAfterSeconds: 5,
      });
    }
  }

  /** One tool call, in its request's context, as a span named after the tool when tracing is on. */
  dispatch(call: ToolCall): Promise<ToolOutcome> {
    const name = typeof call.tool === 'string' && getTool(call.tool) ? call.tool : 'unknown';
    return withRequestContext({ requestId: call.requestId }, () =>
      tracingEnabled()
        ? withSpan(`tool ${name}`, { attributes: { 'market.tool': name, 'market.via': call.via, 'request.id': call.requestId } }, async (span) => {
            const outcome = await this.dispatchCall(call);
            span?.setAttribute('http.response.status_code', outcome.status);
            if (outcome.agentId) span?.setAttribute('market.agent_id', outcome.agentId);
            // The purchase a call is about (its argument, or the one it created): a lifecycle is one trace per
            // call (purchase, deliver, confirm), and this attribute finds all of them.
            const purchaseId = purchaseIdOf(call.args, outcome.body);
            if (purchaseId) span?.setAttribute('market.purchase_id', purchaseId);
            return outcome;
          })
        : this.dispatchCall(call),
    );
  }

  private async dispatchCall(call: ToolCall): Promise<ToolOutcome> {
    const headers: Record<string, string> = {};
    let agentId: string | null = null;
    let toolName: string | null = typeof call.tool === 'string' ? call.tool.slice(0, 64) : null;
    try {
      const tool = this.lookup(call.tool);
      toolName = tool.name;
      const args = this.argumentsOf(call.args);
      const idempotencyKey = this.idempotencyKeyOf(tool, call.idempotencyKey, args);

      // The key is always checked: a valid key passes whatever others sent from this address.
      const auth = await this.authenticatedOrDegraded(tool, call.apiKey);
      const agent = auth?.agent ?? null;
      // A stale or mistyped key must not lock an agent out of the tools that get it a new one.
      const keyIgnored = !!call.apiKey && !agent;
      if (keyIgnored) {
        // Key-less tools still answer a stale key, so only new wrong keys count towards the throttle there.
        const distinct = !tool.auth || PUBLIC_PART.has(tool.name) ? hashApiKey(call.apiKey!) : undefined;
        await this.opts.authThrottle?.fail('apiKey', call.clientIp, call.requestId, distinct);
      }
      if (keyIgnored && tool.auth && !PUBLIC_PART.has(tool.name)) {
        throw new MarketError('unauthorized', 'This API key is not valid.', { hint: `${KEY_NOT_VALID} ${replaceKeyHint(call.via)}` });
      }
      if (tool.auth && !agent && !keyIgnored) {
        throw new MarketError('unauthorized', `${tool.name} needs an API key.`, {
          hint:
            call.via === 'mcp'
              ? 'Call the register tool (no key needed) and put the apiKey it returns into this MCP server\'s configuration ("Authorization: Bearer rk_live_…" or ?api_key=).'
              : 'Call the register tool (no key needed; also POST /api/agent/register), then send "Authorization: Bearer rk_live_…".',
        });
      }
      agentId = agent?.id ?? null;
      const warning = keyIgnored ? { code: 'api_key_ignored', message: `${KEY_NOT_VALID} It was ignored for this call.`, hint: replaceKeyHint(call.via) } : null;
      await this.rateLimit(agent ? `agent:${agent.id}` : `ip:${call.clientIp}`, headers);
      this.validate(tool, args);
      if (keyIgnored && tool.name === 'whoami') {
        // whoami's public part: who you are not.
        const result = { registered: false, agent: null, warning };
        this.opts.requestLog.record({ requestId: call.requestId, agentId, tool: toolName, status: 200, errorCode: null });
        return { status: 200, body: { ok: true, result }, headers, agentId, tool: toolName };
      }
      if (!tool.action) {
        throw new MarketError('not_implemented', `${tool.name} is not available yet.`, { hint: 'See GET /api/agent for the tools that work today.' });
      }

      const meta: CallMeta = { requestId: call.requestId };
      if (agent) meta.agent = agent;
      if (agent && tool.name === 'whoami' && auth?.profile) meta.agentProfile = auth.profile;
      if (keyIgnored) meta.apiKeyIgnored = true;
      // The same meta object (not a copy): idempotencyKey is added to it below, before run() is called.
      const run = () => {
        const options: CallingOptions = { meta: meta as CallingOptions['meta'], requestID: call.requestId };
        return this.broker.call<unknown, Record<string, unknown>>(tool.action!, args, options);
      };

      let result: unknown;
      if (tool.mutating && idempotencyKey && agent) {
        meta.idempotencyKey = idempotencyKey;
        const replay = await this.withIdempotency(agent.id, idempotencyKey, tool, args, run);
        if (replay.replayed) headers['idempotent-replayed'] = 'true';
        result = replay.result;
      } else {
        result = await run();
      }
      if (warning && result && typeof result === 'object' && !Array.isArray(result)) result = { ...(result as object), warning };
      this.opts.requestLog.record({ requestId: call.requestId, agentId, tool: toolName, status: 200, errorCode: null });
      return { status: 200, body: { ok: true, result }, headers, agentId, tool: toolName };
    } catch (err) {
      const mapped = toEnvelope(err, call.requestId);
      logMappedError(this.broker.logger, mapped, err, { requestId: call.requestId, tool: toolName, agentId });
      if (mapped.retryAfterSeconds) headers['retry-after'] = String(mapped.retryAfterSeconds);
      this.opts.requestLog.record({
        requestId: call.requestId,
        agentId,
        tool: toolName,
        status: mapped.status,
        errorCode: mapped.body.error.code,
        errorMessage: mapped.body.error.message,
      });
      return { status: mapped.status, body: mapped.body, headers, agentId, tool: toolName };
    }
  }

  private lookup(name: unknown): ToolDefinition {
    if (typeof name !== 'string' || !name) {
      throw new MarketError('invalid_arguments', 'The body needs "tool": the name of the tool to call.', {
        hint: `Send {"tool": "<name>", "arguments": {…}}. Tools: ${TOOL_NAMES.join(', ')}.`,
        details: { validTools: TOOL_NAMES },
      });
    }
    const tool = getTool(name);
    if (!tool) {
      throw new MarketError('unknown_tool', `There is no tool "${name.slice(0, 64)}".`, {
        hint: `Use one of: ${TOOL_NAMES.join(', ')}. GET /api/agent describes each.`,
        details: { validTools: TOOL_NAMES },
      });
    }
    return tool;
  }

  private argumentsOf(args: unknown): Record<string, unknown> {
    if (args === undefined || args === null) return {};
    if (typeof args !== 'object' || Array.isArray(args)) {
      throw new MarketError('invalid_arguments', '"arguments" must be a JSON object.', { hint: 'Send {"tool": "…", "arguments": {…}}.' });
    }
    return { ...(args as Record<string, unknown>) };
  }

  /**
   * The Idempotency-Key header, or the `idempotencyKey` argument of a mutating tool (MCP), taken out of
   * the arguments. 1–255 printable ASCII characters; anything else is refused before it reaches a table.
   */
  private idempotencyKeyOf(tool: ToolDefinition, header: string | null, args: Record<string, unknown>): string | null {
    let key: unknown = header;
    let field = 'Idempotency-Key header';
    if (tool.mutating && 'idempotencyKey' in args) {
      if (key === null) {
        key = args.idempotencyKey;
        field = 'idempotencyKey';
      }
      delete args.idempotencyKey;
    }
    if (key === null || key === undefined) return null;
    if (typeof key !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(key)) {
      throw new MarketError('invalid_arguments', `The ${field} must be 1–255 printable ASCII characters.`, {
        hint: 'Use a short unique string per operation, e.g. a UUID; reuse it only to retry the very same call.',
        details: { errors: [{ field, message: 'must be 1–255 printable ASCII characters', type: 'idempotencyKey' }] },
      });
    }
    return key;
  }

  private validate(tool: ToolDefinition, args: Record<string, unknown>): void {
    const known = Object.keys(tool.params).filter((k) => !k.startsWith('$$'));
    const unknown = Object.keys(args).filter((k) => !known.includes(k));
    if (unknown.length > 0) {
      // No prototype: an argument named __proto__, constructor or toString must not find Object's members (issue #23).
      const suggestions: Record<string, string> = Object.create(null);
      for (const u of unknown) {
        const s = suggestArgument(u, known);
        if (s) suggestions[u] = s;
      }
      const named = unknown.map((u) => (suggestions[u] ? `"${u.slice(0, 64)}" (did you mean "${suggestions[u]}"?)` : `"${u.slice(0, 64)}"`));
      const accepted = known.length ? `${tool.name} takes: ${known.join(', ')}${tool.mutating ? ' (and idempotencyKey)' : ''}.` : `${tool.name} takes no arguments.`;
      throw new MarketError('invalid_arguments', `${tool.name} has no argument ${named.join(', ')}.`, {
        hint: `${Object.keys(suggestions).length ? `Rename ${Object.entries(suggestions).map(([u, s]) => `${u.slice(0, 64)} → ${s}`).join(', ')}. ` : ''}${accepted}`,
        details: {
          unknown: unknown.map((u) => u.slice(0, 64)),
          didYouMean: { ...suggestions },
          errors: unknown.map((u) => ({ field: u.slice(0, 64), message: `unknown argument${suggestions[u] ? `; did you mean ${suggestions[u]}?` : ''}`, type: 'unknownArgument' })),
        },
      });
    }
    const problem = findArgumentsProblem(args);
    if (problem) {
      throw new MarketError('invalid_arguments', `Invalid arguments for ${tool.name}: ${problem.message}`, {
        hint: problem.hint,
        details: { errors: [{ field: problem.field, message: problem.message, type: problem.type }] },
      });
    }
    const errors = argumentErrors(tool, args);
    if (errors.length) {
      throw new MarketError('invalid_arguments', `Invalid arguments for ${tool.name}: ${errors.map((e) => e.message).join(' ')}`, {
        hint: `Fix the fields in details.errors. GET /api/agent shows the argument schema of ${tool.name}.`,
        details: { errors },
      });
    }
  }

  private async rateLimit(key: string, headers: Record<string, string>): Promise<void> {
    const limit = this.opts.rateLimitPerMinute;
    if (limit <= 0 || !this.calls) return;
    const v = await this.calls.consume(key);
    headers['x-ratelimit-limit'] = String(limit);
    headers['x-ratelimit-remaining'] = String(v.remaining);
    if (!v.allowed) {
      throw new MarketError('rate_limited', `Too many calls: at most ${limit} per minute.`, {
        hint: `Wait ${v.retryAfterSeconds} s and retry (Retry-After header).`,
        retryAfterSeconds: v.retryAfterSeconds,
      });
    }
  }

  /**
   * Same agent + key within 24 h → the first response again, and the call runs once.
   * A key still in flight answers invalid_state; a key reused for other arguments answers invalid_arguments.
   *
   * The claim is a lease (issue #23): the gateway running the call renews it every
   * IDEMPOTENCY_RENEW_MS while the call runs, so a claim whose gateway died (kill -9 of a replica)
   * lapses within IDEMPOTENCY_LEASE_MS and the next retry takes it over and runs the call again; the
   * services key their own effects (escrow dedupes purchases by this key), so nothing doubles. The
   * "still running" answer says how long to wait (hint and Retry-After).
   */
  private async withIdempotency(
    agentId: string,
    key: string,
    tool: ToolDefinition,
    args: Record<string, unknown>,
    run: () => Promise<unknown>,
  ): Promise<{ result: unknown; replayed: boolean }> {
    const db = this.opts.db;
    // Canonical JSON: the same arguments with keys in another order are the same call.
    const fingerprint = sha256Hex(canonicalJson([tool.aliasOf ?? tool.name, args]));
    const holder = base62(16);
    const leaseSecs = IDEMPOTENCY_LEASE_MS / 1000;
    await db.query(
      `DELETE FROM gateway.idempotency WHERE agent_id = $1 AND key = $2 AND created_at < now() - make_interval(hours => $3)`,
      [agentId, key, IDEMPOTENCY_TTL_HOURS],
    );
    const claimed = await db.query(
      `INSERT INTO gateway.idempotency (agent_id, key, fingerprint, holder, lease_until) VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5))
       ON CONFLICT (agent_id, key) DO NOTHING`,
      [agentId, key, fingerprint, holder, leaseSecs],
    );
    if (claimed.rowCount === 0) {
      // result: the jsonb column as the driver gives it (parsed JSON; a string is parsed once more below).
      const r = await db.query<{ fingerprint: string; result: unknown; completed_at: Date | null; wait_ms: number | null }>(
        `SELECT fingerprint, result, completed_at, GREATEST(0, EXTRACT(EPOCH FROM (lease_until - now())) * 1000)::float8 AS wait_ms
           FROM gateway.idempotency WHERE agent_id = $1 AND key = $2`,
        [agentId, key],
      );
      const row = r.rows[0];
      if (!row) return this.withIdempotency(agentId, key, tool, args, run);
      if (row.fingerprint !== fingerprint) {
        throw new MarketError('invalid_arguments', 'This Idempotency-Key was already used for a different call.', {
          hint: 'Use a new key for a new operation; reuse a key only to retry the very same call.',
        });
      }
      if (row.completed_at) return { result: typeof row.result === 'string' ? JSON.parse(row.result) : row.result, replayed: true };
      // A lapsed lease (its gateway died, or a claim from before leases: created_at + the old bound) is taken over.
      const took = await db.query(
        `UPDATE gateway.idempotency SET holder = $3, lease_until = now() + make_interval(secs => $4)
          WHERE agent_id = $1 AND key = $2 AND completed_at IS NULL
            AND COALESCE(lease_until, created_at + make_interval(secs => $5)) < now()`,
        [agentId, key, holder, leaseSecs, (2 * (this.broker.options.requestTimeout ?? 0) + 5_000) / 1000],
      );
      if (took.rowCount !== 1) {
        const waitSeconds = Math.max(1, Math.ceil((row.wait_ms ?? IDEMPOTENCY_LEASE_MS) / 1000));
        throw new MarketError('invalid_state', 'A call with this Idempotency-Key is still running.', {
          hint: `Retry in ${waitSeconds} s with the same key: you get its result, or, if the server running it stopped, the call runs again (once).`,
          retryAfterSeconds: waitSeconds,
          details: { retryAfterSeconds: waitSeconds },
        });
      }
    }
    const renew = setInterval(() => {
      void db
        .query(`UPDATE gateway.idempotency SET lease_until = now() + make_interval(secs => $4) WHERE agent_id = $1 AND key = $2 AND holder = $3 AND completed_at IS NULL`, [
          agentId,
          key,
          holder,
          leaseSecs,
        ])
        .catch(() => undefined);
    }, IDEMPOTENCY_RENEW_MS);
    renew.unref();
    let result: unknown;
    try {
      result = await run();
    } catch (err) {
      clearInterval(renew);
      // Failed calls are not remembered: the agent may fix the cause and retry with the same key.
      // Services key their own money moves, so a timed-out call that did run is not repeated by the retry.
      // Not awaited: with the database down it would add a query timeout to the caller's wait; if it fails, the
      // claim's lease lapses within IDEMPOTENCY_LEASE_MS (no more than the Retry-After of a database fault).
      void db.query('DELETE FROM gateway.idempotency WHERE agent_id = $1 AND key = $2 AND holder = $3', [agentId, key, holder]).catch(() => undefined);
      throw err;
    }
    // The call succeeded: its answer is the caller's whatever happens to the record of it. The record is written
    // at once (still under this gateway's lease, so no retry can run the call meanwhile), tried again briefly if the
    // database blinks; if it cannot be written the answer is still returned, the lease lapses, and a retry with the
    // key runs the call again — which the services answer from their own keyed effects (escrow's steps recognise a
    // repeat, ADR 0035): the same result, nothing done twice.
    const stored = this.storeAnswer(agentId, key, holder, result)
      .catch((err: unknown) => {
        this.broker.logger.warn(
          { agentId, idempotencyKey: key, err },
          `idempotency: the answer of ${tool.name} was not stored (${(err as Error)?.message ?? String(err)}); a retry runs it again, answered by the service's own key`,
        );
      })
      .finally(() => clearInterval(renew));
    // Waited for, so a prompt retry finds it; but a frozen database does not hold a finished call's answer back.
    let waited: NodeJS.Timeout | undefined;
    await Promise.race([stored, new Promise<void>((r) => (waited = setTimeout(r, STORE_ANSWER_WAIT_MS)))]);
    clearTimeout(waited);
    return { result, replayed: false };
  }

  /** Writes a keyed call's answer, only while this gateway holds the key; a few tries within about a second. */
  private async storeAnswer(agentId: string, key: string, holder: string, result: unknown): Promise<void> {
    const started = Date.now();
    for (let attempt = 0; ; attempt++) {
      try {
        await this.opts.db.query(
          `UPDATE gateway.idempotency SET result = $4, completed_at = now(), lease_until = NULL
            WHERE agent_id = $1 AND key = $2 AND holder = $3 AND completed_at IS NULL`,
          [agentId, key, holder, JSON.stringify(result ?? null)],
        );
        return;
      } catch (err) {
        if (attempt >= STORE_ANSWER_RETRIES || !isDatabaseFault(err) || Date.now() - started > STORE_ANSWER_WAIT_MS) throw err;
        await new Promise((r) => setTimeout(r, 150 * 2 ** attempt));
      }
    }
  }
}
