/**
 * A short log of tool calls (request id, agent, tool, status, error code, time), kept 7 days.
 * ask_help explains a caller's own failed request from it; report_bug attaches the matching entry.
 * Writes are buffered and flushed in batches so logging never slows a call down.
 *
 * A call that failed because the database is down is exactly the one whose row must not be lost (its request
 * id is what the agent quotes to report_bug). A batch the database cannot take now stays buffered — at most
 * MAX_PENDING rows, retried every RETRY_MS — and is written when the database answers again; a row that has to be
 * dropped (the buffer full, the process stopping, a row the database refuses) is logged at warn with its request
 * id, status and error code instead, so it can still be looked up in the logs.
 */
import type { Logger } from 'moleculer';
import type { Db } from '../../packages/db';
import { databaseUnavailableReason } from '../../packages/errors';
import { rowView } from '../../packages/db/row-view';
import type { RequestLogEntry } from '../../packages/contracts/gateway';

export type { RequestLogEntry };

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function storable(text: string | null): string | null {
  return text === null ? null : text.replaceAll('\u0000', '\uFFFD').replace(LONE_SURROGATE, '\uFFFD').slice(0, 2000);
}

interface LogRow {
  request_id: string;
  agent_id: string | null;
  tool: string | null;
  status: number;
  error_code: string | null;
  error_message: string | null;
  at: Date;
}

/** The columns read back: an entry, in order. */
const ENTRY_COLUMNS = ['request_id', 'agent_id', 'tool', 'status', 'error_code', 'error_message', 'at'] as const;
const LOG_COLUMNS = ENTRY_COLUMNS.join(', ');

function entryOf(row: LogRow): RequestLogEntry {
  return rowView(row, ENTRY_COLUMNS);
}

/** Rows kept while the database is unreachable (about a minute of a busy gateway's failures). */
export const MAX_PENDING = 10_000;
const RETRY_MS = 2_000;

/** Whether a failed write should be tried again later: the database could not answer, it did not refuse the rows. */
function unavailable(err: unknown): boolean {
  return (err as { type?: unknown })?.type === 'service_unavailable' || databaseUnavailableReason(err) !== null;
}

export class RequestLog {
  private buffer: RequestLogEntry[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<boolean> | null = null;
  private running = false;

  constructor(
    private readonly db: Db,
    private readonly logger?: Pick<Logger, 'warn'>,
  ) {}

  /** Rows waiting to be written (a database outage keeps them here). */
  get pending(): number {
    return this.buffer.length;
  }

  /** No timer while nothing is logged: the first write after a flush arms one (250 ms), so an idle gateway does nothing. */
  start(): void {
    this.running = true;
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flush();
    // Still unwritten (the database is down as the process stops): into the log, not lost.
    this.drop(this.buffer.splice(0), 'the gateway stopped while the database was unreachable');
  }

  /** Rows given up on, each logged at warn with its request id (what report_bug and ask_help would have looked up). */
  private drop(entries: RequestLogEntry[], why: string): void {
    for (const e of entries) {
      this.logger?.warn(
        { requestLog: 'unwritten', requestId: e.requestId, agentId: e.agentId, tool: e.tool, status: e.status, errorCode: e.errorCode, at: e.at },
        `request-log row not stored (${why}): ${e.requestId} ${e.tool ?? ''} ${e.status}${e.errorCode ? ` ${e.errorCode}` : ''}`,
      );
    }
  }

  private arm(delayMs: number): void {
    if (this.timer || !this.running) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, delayMs);
    this.timer.unref();
  }

  record(entry: RequestLogEntry): void {
    // A tool name or message echoing user input may carry text PostgreSQL refuses (NUL, lone surrogates);
    // one such row would fail the whole batch insert, so it is made storable here.
    this.buffer.push({ ...entry, tool: storable(entry.tool), errorMessage: storable(entry.errorMessage ?? null), at: new Date().toISOString() });
    if (this.buffer.length > MAX_PENDING) this.drop(this.buffer.splice(0, this.buffer.length - MAX_PENDING), 'too many rows waiting for the database');
    if (this.buffer.length >= 500 && !this.flushing) void this.flush();
    else this.arm(250);
    // (A timer already armed for RETRY_MS after a failure is kept: the database is not asked more often.)
  }

  /** Writes what is buffered, 500 rows per statement; stops (keeping the rest) when the database cannot answer. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    while (this.buffer.length > 0) {
      const batch = this.buffer.splice(0, 500);
      const writing = this.write(batch);
      this.flushing = writing;
      let written: boolean;
      try {
        written = await writing;
      } finally {
        this.flushing = null;
      }
      if (!written) return;
    }
  }

  /** One batch; false when the database could not answer (the batch is back in the buffer, retried in RETRY_MS). */
  private async write(batch: RequestLogEntry[]): Promise<boolean> {
    // One parameter whatever the batch size: one statement text (prepared once), no per-value binding.
    const rows = batch.map((e) => ({
      request_id: e.requestId,
      agent_id: e.agentId,
      tool: e.tool,
      status: e.status,
      error_code: e.errorCode,
      error_message: e.errorMessage ?? null,
      at: e.at,
    }));
    try {
      await this.db.query(
        `INSERT INTO gateway.request_log (request_id, agent_id, tool, status, error_code, error_message, at)
         SELECT request_id, agent_id, tool, status, error_code, error_message, at
           FROM jsonb_to_recordset($1::jsonb)
             AS r(request_id text, agent_id text, tool text, status integer, error_code text, error_message text, at timestamptz)
         ON CONFLICT (request_id) DO NOTHING`,
        [JSON.stringify(rows)],
      );
      return true;
    } catch (err) {
      if (!unavailable(err)) {
        this.drop(batch, `refused: ${(err as Error)?.message ?? String(err)}`);
        return true;
      }
      // Back to the front, in order; the newest are kept if the buffer overflows.
      this.buffer.unshift(...batch);
      if (this.buffer.length > MAX_PENDING) this.drop(this.buffer.splice(0, this.buffer.length - MAX_PENDING), 'too many rows waiting for the database');
      this.arm(RETRY_MS);
      return false;
    }
  }

  async find(requestId: string): Promise<RequestLogEntry | null> {
    await this.flush();
    const r = await this.db.query<LogRow>(`SELECT ${LOG_COLUMNS} FROM gateway.request_log WHERE request_id = $1`, [requestId]);
    return r.rows[0] ? entryOf(r.rows[0]) : null;
  }

  /** The agent's own most recent failed calls (status ≥ 400) of the last 7 days, newest first (ask_help's account snapshot). */
  async recentFailures(agentId: string, limit: number): Promise<RequestLogEntry[]> {
    await this.flush();
    const r = await this.db.query<LogRow>(
      `SELECT ${LOG_COLUMNS} FROM gateway.request_log
        WHERE agent_id = $1 AND status >= 400 AND at > now() - interval '7 days' ORDER BY at DESC LIMIT $2`,
      [agentId, limit],
    );
    return r.rows.map(entryOf);
  }

  async prune(): Promise<void> {
    await this.db.query(`DELETE FROM gateway.request_log WHERE at < now() - interval '7 days'`).catch(() => undefined);
    await this.db.query(`DELETE FROM gateway.idempotency WHERE created_at < now() - interval '24 hours'`).catch(() => undefined);
  }
}
