/**
 * support: ask_help (a grounded pipeline over the service's own knowledge and the caller's account,
 * optionally phrased by an LLM that may only pick an allowed call),
 * report_bug (folded when repeated, with the caller's own failed request attached) and
 * report_experience; operator listings and the counts shown on /api/public/info.
 */
import type { Context, Service } from 'moleculer';
import { decodeTimeCursor, timePage } from '../../packages/pagination';
import { dbMixin, type DbService } from '../../packages/db/mixin';
import { rowView } from '../../packages/db/row-view';
import type { Db, Queryable } from '../../packages/db';
import { toolParams, SEVERITIES, JOURNEY_STEPS } from '../../packages/tool-catalogue';
import { requireAgent, type CallMeta } from '../../packages/tool-catalogue/meta';
import { ForbiddenError, InvalidArgumentsError, NotFoundError } from '../../packages/errors';
import { newId, sha256Hex } from '../../packages/ids';
import type { Clock, ServiceSchemaOf } from '../../packages/runtime';
import type { Config } from '../../packages/config';
import { HelpIndex, composeWithLlm, type HelpContext, type HelpAnswer, type RequestLogEntry } from './help';
import { migrations } from './migrations';
import { BUG_STATUSES, type HelpAccount, type SupportCallMeta } from '../../packages/contracts/support';

/** Identical reports from one agent within this window (since the last one) are folded into one. */
export const BUG_FOLD_WINDOW_MS = 60 * 60 * 1000;
export const HELP_LLM_TIMEOUT_MS = 8000;
const SEVERITY_RANK: Record<string, number> = { low: 0, medium: 1, high: 2, critical: 3 };

interface BugRow {
  id: string;
  agent_id: string;
  title: string;
  description: string;
  severity: string;
  status: string;
  steps: string | null;
  provider: string | null;
  reproduction: string | null;
  expected: string | null;
  actual: string | null;
  /** jsonb (a string from some drivers). */
  context: unknown;
  request: unknown;
  count: number;
  report_request_id: string | null;
  created_at: Date | string;
  last_reported_at: Date | string;
}

interface ExperienceRow {
  id: string;
  agent_id: string;
  rating: number;
  journey_step: string;
  what_worked: string | null;
  what_failed: string | null;
  created_at: Date | string;
}

const iso = (d: Date | string) => new Date(d).toISOString();
const parseJson = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : v);

const BUG_COLUMNS = ['id', 'agent_id', 'title', 'description', 'severity', 'status', 'steps', 'provider', 'reproduction', 'expected', 'actual'] as const;
const EXPERIENCE_COLUMNS = ['id', 'agent_id', 'rating', 'journey_step', 'what_worked', 'what_failed'] as const;

function bugView(row: BugRow) {
  return {
    ...rowView(row, BUG_COLUMNS),
    context: parseJson(row.context) ?? null,
    request: parseJson(row.request) ?? null,
    count: row.count,
    createdAt: iso(row.created_at),
    lastReportedAt: iso(row.last_reported_at),
  };
}

function experienceView(row: ExperienceRow) {
  return { ...rowView(row, EXPERIENCE_COLUMNS), createdAt: iso(row.created_at) };
}

/** Keyset cursor over (created_at DESC, id DESC). */
const REPORTS_CURSOR_HINT = 'Pass the nextCursor of the previous page unchanged, or leave it out.';

function parseSince(since: string | undefined): string | null {
  if (!since) return null;
  const t = Date.parse(since);
  if (Number.isNaN(t)) {
    throw new InvalidArgumentsError(`since "${since}" is not a date.`, { hint: 'Use an ISO-8601 instant, e.g. since=2026-01-31T00:00:00Z.', details: { field: 'since' } });
  }
  return new Date(t).toISOString();
}

function requireOperator(ctx: Context<unknown, CallMeta>): void {
  const meta = ctx.meta;
  if (meta.internal !== true && !meta.operator) throw new ForbiddenError('Only the operator can list reports.', { hint: 'Use GET /api/admin/reports/… with the admin token.' });
}

const listCommon = {
  since: { type: 'string', optional: true, max: 64 },
  agentId: { type: 'string', optional: true, max: 64 },
  limit: { type: 'number', integer: true, min: 1, max: 200, optional: true, convert: true },
  cursor: { type: 'string', optional: true, max: 500 },
};
interface ListCommon {
  since?: string;
  agentId?: string;
  limit?: number;
  cursor?: string;
}

/**
 * One operator page of a report table, newest first: the table's own two filters ($1, $2, in
 * `filters`) and the common ones — since (on `sinceColumn`), agentId and the keyset cursor.
 */
async function reportPage<R extends { created_at: Date | string; id: string }>(
  db: Db,
  table: 'support.bugs' | 'support.experiences',
  filters: { where: string; values: [unknown, unknown] },
  sinceColumn: 'last_reported_at' | 'created_at',
  p: ListCommon,
) {
  const limit = p.limit ?? 50;
  const cursor = decodeTimeCursor(p.cursor, REPORTS_CURSOR_HINT);
  const r = await db.query<R>(
    `SELECT * FROM ${table}
      WHERE ${filters.where}
        AND ($3::timestamptz IS NULL OR ${sinceColumn} >= $3) AND ($4::text IS NULL OR agent_id = $4)
        AND ($5::timestamptz IS NULL OR (created_at, id) < ($5::timestamptz, $6::text))
      ORDER BY created_at DESC, id DESC LIMIT $7`,
    [...filters.values, parseSince(p.since), p.agentId ?? null, cursor?.at ?? null, cursor?.id ?? null, limit + 1],
  );
  return timePage(r.rows, limit);
}

/** A filter of an operator report list: its parameter, the parameter's rule, the SQL type, the column (default: the parameter). */
type ReportFilter = [param: string, rule: Record<string, unknown>, sqlType: 'text' | 'int', column?: string];

/** An operator action listing one report table, newest first, with its two equality filters and the common ones. */
function reportList<R extends { created_at: Date | string; id: string }>(
  table: 'support.bugs' | 'support.experiences',
  sinceColumn: 'last_reported_at' | 'created_at',
  key: string,
  view: (row: R) => unknown,
  filters: [ReportFilter, ReportFilter],
) {
  const where = filters.map(([param, , sqlType, column], i) => `($${i + 1}::${sqlType} IS NULL OR ${column ?? param} = $${i + 1})`).join(' AND ');
  return {
    params: { ...Object.fromEntries(filters.map(([param, rule]) => [param, rule])), ...listCommon },
    async handler(this: SupportThis, ctx: Context<Record<string, unknown> & ListCommon>) {
      requireOperator(ctx);
      const p = ctx.params;
      const values = filters.map(([param]) => p[param] ?? null) as [unknown, unknown];
      const page = await reportPage<R>(this.db, table, { where, values }, sinceColumn, p);
      return { [key]: page.rows.map(view), nextCursor: page.nextCursor };
    },
  };
}

type SupportThis = Service & DbService & {
  clock: Clock;
  config: Config;
  help: HelpIndex;
};

/** report_bug's arguments (the catalogue's params). */
interface ReportBugParams {
  title: string;
  description: string;
  severity?: string;
  steps?: string;
  provider?: string;
  reproduction?: string;
  expected?: string;
  actual?: string;
  context?: HelpContext;
}

/** The caller's own request-log entry, handed over by the gateway (support never calls the gateway). */
function ownRequestOf(ctx: Context<unknown, object>, agentId: string): RequestLogEntry | null {
  const entry = (ctx.meta as SupportCallMeta).requestLogEntry ?? null;
  return entry && entry.agentId === agentId ? entry : null;
}

/** The caller's own account snapshot, handed over by the gateway (only ever the caller's own). */
function ownAccountOf(ctx: Context<unknown, object>, agentId: string): HelpAccount | null {
  const account = (ctx.meta as SupportCallMeta).helpAccount ?? null;
  return account && account.agentId === agentId ? account : null;
}

const SupportService: ServiceSchemaOf<SupportThis> = {
  name: 'support',
  mixins: [dbMixin('support', migrations)],

  actions: {
    askHelp: {
      params: toolParams('ask_help'),
      async handler(this: SupportThis, ctx: Context<{ question: string; stuckState?: string; context?: HelpContext }, CallMeta>) {
        // The gateway lets a caller whose configured key is not valid reach the public part: the
        // documentation, not its own request log.
        const agent = ctx.meta.agent ?? null;
        if (!agent && !ctx.meta.apiKeyIgnored) requireAgent(ctx);
        const { question, stuckState, context } = ctx.params;
        const request = agent ? ownRequestOf(ctx, agent.id) : null;
        const account = agent ? ownAccountOf(ctx, agent.id) : null;
        const input = { question, stuckState, context, request, account, now: this.clock.now() };
        const run = this.help.run(input);
        let answer: HelpAnswer = run.answer;
        const { helpLlmUrl, helpLlmKey, helpLlmModel } = this.config;
        if (helpLlmUrl && answer.known && !answer.declined) {
          try {
            const llm = await composeWithLlm({ url: helpLlmUrl, key: helpLlmKey, model: helpLlmModel, timeoutMs: HELP_LLM_TIMEOUT_MS }, question, run.pipeline, answer);
            if (llm) answer = llm;
            else this.logger.warn('ask_help: the LLM answer chose a call not allowed here, or numbers it was not given; using the composed answer');
          } catch (err) {
            this.logger.warn(`ask_help: LLM failed (${(err as Error).message}); using the composed answer`);
          }
        }
        await this.db
          .query(
            `INSERT INTO support.help_log (id, agent_id, question, stuck_state, context, known, sources, generated_by, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
            [
              newId('hlp'),
              agent?.id ?? null,
              question,
              stuckState ?? null,
              context ? JSON.stringify(context) : null,
              answer.known,
              answer.sources.map((s) => s.id),
              answer.generatedBy,
              this.clock.now().toISOString(),
            ],
          )
          .catch((err: Error) => this.logger.warn('ask_help: could not log the question', err.message));
        return answer;
      },
    },

    reportBug: {
      params: toolParams('report_bug'),
      async handler(this: SupportThis, ctx: Context<ReportBugParams, CallMeta>) {
        const agent = requireAgent(ctx);
        const p = ctx.params;
        const title = String(p.title).trim();
        const description = String(p.description).trim();
        const severity = p.severity ?? 'medium';
        const context = p.context && Object.keys(p.context).length ? p.context : null;
        const request = ownRequestOf(ctx, agent.id);
        const hash = sha256Hex(`${title}\n${description}`);
        const now = this.clock.now();
        const windowStart = new Date(now.getTime() - BUG_FOLD_WINDOW_MS).toISOString();

        const { row, folded } = await this.db.transaction(async (tx: Queryable) => {
          // Serialises identical reports of one agent (a retrying agent sends them in bursts).
          await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`support.bug:${agent.id}:${hash}`]);
          const existing = await tx.query<BugRow>(
            `SELECT * FROM support.bugs WHERE agent_id = $1 AND content_hash = $2 AND last_reported_at > $3
              ORDER BY last_reported_at DESC LIMIT 1 FOR UPDATE`,
            [agent.id, hash, windowStart],
          );
          const prev = existing.rows[0];
          if (prev) {
            const higher = SEVERITY_RANK[severity] > SEVERITY_RANK[prev.severity] ? severity : prev.severity;
            const updated = await tx.query<BugRow>(
              `UPDATE support.bugs SET count = count + 1, last_reported_at = $2, severity = $3,
                      request = COALESCE(request, $4), context = COALESCE(context, $5)
                WHERE id = $1 RETURNING *`,
              [prev.id, now.toISOString(), higher, request ? JSON.stringify(request) : null, context ? JSON.stringify(context) : null],
            );
            return { row: updated.rows[0], folded: true };
          }
          const inserted = await tx.query<BugRow>(
            `INSERT INTO support.bugs (id, agent_id, title, description, severity, steps, provider, reproduction, expected, actual,
                                       context, request, content_hash, report_request_id, created_at, last_reported_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $15) RETURNING *`,
            [
              newId('bug'),
              agent.id,
              title,
              description,
              severity,
              p.steps ?? null,
              p.provider ?? null,
              p.reproduction ?? null,
              p.expected ?? null,
              p.actual ?? null,
              context ? JSON.stringify(context) : null,
              request ? JSON.stringify(request) : null,
              hash,
              (ctx.meta as CallMeta).requestId ?? null,
              now.toISOString(),
            ],
          );
          return { row: inserted.rows[0], folded: false };
        });
        const bug = bugView(row);
        return {
          bug: { ...bug, folded, requestAttached: !!bug.request },
        };
      },
    },

    reportExperience: {
      params: toolParams('report_experience'),
      async handler(this: SupportThis, ctx: Context<{ rating: number; journeyStep?: string; whatWorked?: string; whatFailed?: string }, CallMeta>) {
        const agent = requireAgent(ctx);
        const { rating, journeyStep, whatWorked, whatFailed } = ctx.params;
        const r = await this.db.query<ExperienceRow>(
          `INSERT INTO support.experiences (id, agent_id, rating, journey_step, what_worked, what_failed, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
          [newId('exp'), agent.id, rating, journeyStep ?? 'other', whatWorked?.trim() || null, whatFailed?.trim() || null, this.clock.now().toISOString()],
        );
        return { experience: experienceView(r.rows[0]) };
      },
    },

    /** Internal: counts for /api/public/info — never contents. */
    summary: {
      params: {},
      async handler(this: SupportThis) {
        const [bugs, experiences, help] = await Promise.all([
          this.db.query<{ total: string; open: string; reports: string | null }>(
            `SELECT count(*) AS total, count(*) FILTER (WHERE status IN ('open', 'acknowledged')) AS open, sum(count) AS reports FROM support.bugs`,
          ),
          this.db.query<{ total: string; avg: string | null }>('SELECT count(*) AS total, avg(rating) AS avg FROM support.experiences'),
          this.db.query<{ total: string; unanswered: string }>(
            'SELECT count(*) AS total, count(*) FILTER (WHERE NOT known) AS unanswered FROM support.help_log',
          ),
        ]);
        const avg = experiences.rows[0].avg === null ? null : Math.round(Number(experiences.rows[0].avg) * 100) / 100;
        return {
          bugs: { total: Number(bugs.rows[0].total), open: Number(bugs.rows[0].open), reports: Number(bugs.rows[0].reports ?? 0) },
          experiences: { total: Number(experiences.rows[0].total), averageRating: avg },
          helpQuestions: { total: Number(help.rows[0].total), unanswered: Number(help.rows[0].unanswered) },
        };
      },
    },

    /** Operator: bug reports, newest first, with the attached request-log entry. */
    listBugs: reportList('support.bugs', 'last_reported_at', 'bugs', bugView, [
      ['severity', { type: 'enum', values: [...SEVERITIES], optional: true }, 'text'],
      ['status', { type: 'enum', values: [...BUG_STATUSES], optional: true }, 'text'],
    ]),

    /** Operator: one bug report. */
    getBug: {
      params: { bugId: { type: 'string', min: 3, max: 64 } },
      async handler(this: SupportThis, ctx: Context<{ bugId: string }>) {
        requireOperator(ctx);
        const r = await this.db.query<BugRow>('SELECT * FROM support.bugs WHERE id = $1', [ctx.params.bugId]);
        if (!r.rows[0]) throw new NotFoundError(`No bug report ${ctx.params.bugId}.`, { hint: 'GET /api/admin/reports/bugs lists them.' });
        return { bug: bugView(r.rows[0]) };
      },
    },

    /** Operator: move a bug report through open → acknowledged → fixed/closed/wont_fix. */
    setBugStatus: {
      params: { bugId: { type: 'string', min: 3, max: 64 }, status: { type: 'enum', values: [...BUG_STATUSES] } },
      async handler(this: SupportThis, ctx: Context<{ bugId: string; status: string }>) {
        requireOperator(ctx);
        const r = await this.db.query<BugRow>('UPDATE support.bugs SET status = $2 WHERE id = $1 RETURNING *', [ctx.params.bugId, ctx.params.status]);
        if (!r.rows[0]) throw new NotFoundError(`No bug report ${ctx.params.bugId}.`, { hint: 'GET /api/admin/reports/bugs lists them.' });
        return { bug: bugView(r.rows[0]) };
      },
    },

    /** Operator: experience reports, newest first. */
    listExperiences: reportList('support.experiences', 'created_at', 'experiences', experienceView, [
      ['journeyStep', { type: 'enum', values: [...JOURNEY_STEPS], optional: true }, 'text', 'journey_step'],
      ['rating', { type: 'number', integer: true, min: 1, max: 5, optional: true, convert: true }, 'int'],
    ]),
  },

  async started(this: SupportThis) {
    // this.config was handed over at creation (packages/runtime withRuntime).
    this.help = new HelpIndex(this.config.publicBaseUrl, this.config);
  },
};

export default SupportService;
