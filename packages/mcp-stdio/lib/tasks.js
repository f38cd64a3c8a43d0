/**
 * Purchases an agent can await: purchase_service as an MCP task (protocol 2025-11-25 tasks,
 * experimental in the spec and the SDK). Part of the one server factory, so both doors have it: the
 * service's /mcp and this package's stdio server.
 *
 * The task IS the purchase. Its taskId is the purchase id, and every answer is derived from the
 * purchase as its buyer reads it with get_purchase — nothing is kept in process memory, so any
 * gateway replica (or a restarted stdio server) answers tasks/get and tasks/result for a task
 * another one created. Only the buyer's key finds the task: for the seller, or anyone else, it does
 * not exist (the same "not found" either way), as the spec's task isolation asks.
 *
 * Which task status a purchase has, and how often a working one is worth polling, is the server's: the
 * purchase view carries `task {status, pollIntervalMs, next}`, derived from the purchase machine
 * (packages/contracts/purchase-machine.ts, each state's `task`), so a state added there needs no edit
 * here: no state is named below — a working task says the server's `task.next`, a cancel offers request_refund
 * when `task.tools` (the buyer's moves now) has it, a failed one tells a refund (refundedAt) from a failed
 * funding. Today:
 *
 *   purchase                                    task
 *   pending, awaiting_approval,                 working     (statusMessage: what it waits for)
 *   awaiting_delivery, disputed before delivery,
 *   awaiting_evaluation (the evaluator's verdict)
 *   delivered (and anything after a delivery)   completed   tasks/result: {purchase, delivery} (with the evaluator's report)
 *   refunded or failed without a delivery,      failed      tasks/result: isError + the envelope
 *   or after the evaluator rejected it
 *
 * A delivered purchase stays "completed" whatever follows (confirm, dispute, refund): a task never
 * leaves a terminal state, and the delivery it returned exists. tasks/result waits server-side,
 * re-reading the purchase, at most `waitMs` (below the SDK's 60 s default request timeout) and
 * stops when the client goes away; past that it answers a -32001 error saying to call it again.
 * tasks/list lists the caller's purchases as buyer (every purchase is a task, including those not
 * bought as one). tasks/cancel is refused: cancelling a wait must not move money — request_refund
 * is the explicit call that does.
 * Plain CommonJS, no build step.
 */
'use strict';

const { ErrorCode, RELATED_TASK_META_KEY } = require('@modelcontextprotocol/sdk/types.js');

/** Tools that may run as a task (tools/list says execution.taskSupport "optional"). */
const TASK_TOOLS = new Set(['purchase_service']);

/** The spec's hint for hosts: what the model is told while the task runs. */
const IMMEDIATE_RESPONSE_META = 'io.modelcontextprotocol/model-immediate-response';
/** The purchase as purchase_service returned it, on the CreateTaskResult. */
const PURCHASE_META = 'agent-market/purchase';

const DEFAULT_WAIT_MS = 30000;
const DEFAULT_READ_INTERVAL_MS = 2000;
/** Only when the server's purchase view says nothing (it always does). */
const DEFAULT_POLL_INTERVAL_MS = 5000;
const PURCHASE_ID = /^pur_[0-9A-Za-z]{1,60}$/;

function rpcError(code, message, data) {
  // Not McpError: its message carries an "MCP error <code>:" prefix the client's McpError repeats.
  return Object.assign(new Error(message), { code, data });
}

function taskNotFound(taskId) {
  return rpcError(
    ErrorCode.InvalidParams,
    `Failed to retrieve task: Task not found (${String(taskId).slice(0, 80)}). A task is one of your purchases as buyer (its taskId is the purchaseId): tasks/list shows yours.`,
  );
}

/** The task status a purchase maps to: the server's (the purchase view's task, derived from the machine). */
function taskStatusOf(purchase) {
  return (purchase.task && purchase.task.status) || 'working';
}

/** The gas the purchase holds in escrow: the price, plus the evaluator's fee when the buyer named one (totalHeldGas). */
function heldInWords(p) {
  return p.evaluator ? `${p.totalHeldGas} gas (price ${p.priceGas} + evaluator fee ${p.evaluator.feeGas})` : `${p.priceGas} gas`;
}

function statusMessageOf(p) {
  switch (taskStatusOf(p)) {
    case 'completed':
      if (!p.deliveredAt) return `Purchase ${p.id} was completed without a delivery (released by an operator): tasks/result returns the purchase.`;
      if (p.evaluator && p.evaluator.verdict) return `Delivered ${p.deliveredAt} and accepted by the evaluator: tasks/result returns the delivery and the evaluator's report (purchase now ${p.status}).`;
      return (
        `Delivered ${p.deliveredAt}: tasks/result returns the delivery (purchase now ${p.status}).` +
        (p.task && p.task.next ? ` ${p.task.next}` : '') +
        (p.autoReleaseAt ? ` Auto-release at ${p.autoReleaseAt}.` : '')
      );
    case 'failed':
      if (p.evaluator && p.evaluator.verdict === 'reject') {
        return `The evaluator rejected the delivery: the ${p.priceGas} gas is back in your balance (its ${p.evaluator.feeGas} gas fee was paid). Report: ${p.evaluator.report}`;
      }
      return p.refundedAt
        ? `Refunded ${p.refundedAt || ''}${p.refundReason ? ` (${p.refundReason})` : ''}: no delivery will come; the ${heldInWords(p)} is back in your balance.`
        : `Failed${p.failureReason ? `: ${p.failureReason}` : ''}. No delivery will come; nothing was charged.`;
    default: {
      // Working: the server's words for the state (the machine's next step), with this purchase's link and deadline.
      const due = p.approvalExpiresAt || p.deliverBy || (p.evaluator && p.evaluator.evaluateBy) || null;
      return [
        `Purchase ${p.id} is ${p.status}.`,
        (p.task && p.task.next) || 'Poll get_purchase.',
        p.approvalUrl ? `Approval link for your human: ${p.approvalUrl}.` : '',
        due ? `Due: ${due}.` : '',
      ]
        .filter(Boolean)
        .join(' ');
    }
  }
}

/** The MCP Task of a purchase. ttl null: the purchase record, and so the task, is kept. */
function taskOf(purchase) {
  const status = taskStatusOf(purchase);
  const task = {
    taskId: purchase.id,
    status,
    statusMessage: statusMessageOf(purchase),
    createdAt: purchase.createdAt,
    lastUpdatedAt: purchase.updatedAt || purchase.createdAt,
    ttl: null,
  };
  if (status === 'working') task.pollInterval = (purchase.task && purchase.task.pollIntervalMs) || DEFAULT_POLL_INTERVAL_MS;
  return task;
}

/** A failed tool envelope as the JSON-RPC error a task-augmented call answers with (no task was created). */
function envelopeError(tool, body) {
  const e = body.error || { code: 'internal', message: 'No answer.' };
  const server = e.code === 'internal' || e.code === 'service_unavailable';
  return rpcError(server ? ErrorCode.InternalError : ErrorCode.InvalidParams, `${tool} failed (${e.code}): ${e.message}${e.hint ? ` ${e.hint}` : ''}`, body);
}

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal && signal.aborted) return reject(rpcError(ErrorCode.ConnectionClosed, 'Request cancelled'));
    const timer = setTimeout(resolve, ms);
    if (signal) {
      signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          reject(rpcError(ErrorCode.ConnectionClosed, 'Request cancelled'));
        },
        { once: true },
      );
    }
  });
}

/**
 * @param {object} opts
 * @param {(name: string, args: object, extra: object) => Promise<object>} opts.callTool  a tool call as the caller → envelope
 * @param {number} [opts.waitMs]          how long one tasks/result waits for a working task
 * @param {number} [opts.readIntervalMs]  how often it re-reads the purchase meanwhile
 */
function createPurchaseTasks(opts) {
  const callTool = opts.callTool;
  const waitMs = opts.waitMs === undefined ? DEFAULT_WAIT_MS : opts.waitMs;
  const readIntervalMs = opts.readIntervalMs || DEFAULT_READ_INTERVAL_MS;

  /** The purchase behind a task, read as the caller; not found unless the caller is its buyer. */
  async function readPurchase(taskId, extra) {
    if (typeof taskId !== 'string' || !PURCHASE_ID.test(taskId)) throw taskNotFound(taskId);
    const body = await callTool('get_purchase', { purchaseId: taskId }, extra);
    if (body.ok) {
      const purchase = body.result && body.result.purchase;
      if (!purchase || purchase.role !== 'buyer') throw taskNotFound(taskId);
      return purchase;
    }
    const code = body.error && body.error.code;
    if (code === 'not_found' || code === 'forbidden' || code === 'invalid_arguments') throw taskNotFound(taskId);
    if (code === 'unauthorized') throw rpcError(ErrorCode.InvalidParams, `${body.error.message} ${body.error.hint || ''}`.trim(), body);
    throw rpcError(ErrorCode.InternalError, `Could not read purchase ${taskId} (${code}): ${body.error && body.error.message}${body.error && body.error.hint ? ` ${body.error.hint}` : ''}`, body);
  }

  /** tools/call with params.task: run the tool now (the purchase is made and held), answer with its task. */
  async function create(name, args, extra) {
    const body = await callTool(name, args, extra);
    if (!body.ok) throw envelopeError(name, body);
    const purchase = body.result && body.result.purchase;
    if (!purchase || typeof purchase.id !== 'string') throw rpcError(ErrorCode.InternalError, `${name} answered without a purchase.`);
    const task = taskOf(purchase);
    return {
      task,
      _meta: {
        [IMMEDIATE_RESPONSE_META]:
          `Purchase ${purchase.id} made (${purchase.status}, ${heldInWords(purchase)} held in escrow). It runs as task ${task.taskId}: ` +
          `tasks/result returns the delivery once the seller delivers${purchase.evaluator ? ' and the evaluator accepts it' : ''} (or the refund). ${task.statusMessage}`,
        [PURCHASE_META]: purchase,
      },
    };
  }

  async function get(taskId, extra) {
    return taskOf(await readPurchase(taskId, extra));
  }

  /** The tool result the task ends with: the delivery, or the refund/failure as a tool error. */
  async function finalResult(purchase, extra) {
    const related = { [RELATED_TASK_META_KEY]: { taskId: purchase.id } };
    if (taskStatusOf(purchase) === 'failed') {
      const requestId = (extra.authInfo && extra.authInfo.extra && extra.authInfo.extra.requestId) || null;
      const envelope = {
        ok: false,
        error: {
          code: 'invalid_state',
          message: `Purchase ${purchase.id} was ${purchase.status}: ${purchase.deliveredAt ? 'the delivery was rejected' : 'no delivery will come'}. ${statusMessageOf(purchase)}`,
          hint:
            purchase.refundedAt
              ? 'Your gas is back (wallet shows it). search_services for another seller, then purchase_service again.'
              : 'Nothing was charged. If gas was short, buy_gas first; if your human declined, ask them; then purchase_service again.',
          details: { purchaseId: purchase.id, status: purchase.status, refundReason: purchase.refundReason, failureReason: purchase.failureReason, purchase },
        },
        requestId,
      };
      return { isError: true, content: [{ type: 'text', text: JSON.stringify(envelope, null, 2) }], _meta: related };
    }
    let delivery = null;
    if (purchase.deliveredAt) {
      const body = await callTool('get_delivery', { purchaseId: purchase.id }, extra);
      if (!body.ok) throw rpcError(ErrorCode.InternalError, `Could not read the delivery of ${purchase.id} (${body.error.code}): ${body.error.message} Call tasks/result again.`, body);
      delivery = body.result;
    }
    const structured = { purchase, delivery };
    return { content: [{ type: 'text', text: JSON.stringify(structured, null, 2) }], structuredContent: structured, _meta: related };
  }

  async function result(taskId, extra) {
    const deadline = Date.now() + waitMs;
    let purchase = await readPurchase(taskId, extra);
    while (taskStatusOf(purchase) === 'working') {
      const left = deadline - Date.now();
      if (left <= 0) {
        const task = taskOf(purchase);
        throw rpcError(
          ErrorCode.RequestTimeout,
          `Task ${taskId} is still working after ${Math.round(waitMs / 1000)} s: ${task.statusMessage} Call tasks/result again to keep waiting, or tasks/get every ${task.pollInterval} ms.`,
          { taskId, status: task.status, purchaseStatus: purchase.status, pollInterval: task.pollInterval },
        );
      }
      await sleep(Math.min(readIntervalMs, left), extra.signal);
      purchase = await readPurchase(taskId, extra);
    }
    return finalResult(purchase, extra);
  }

  async function list(cursor, extra) {
    const args = { role: 'buyer', limit: 50 };
    if (cursor !== undefined) args.cursor = cursor;
    const body = await callTool('list_orders', args, extra);
    if (!body.ok) {
      if (body.error && body.error.code === 'invalid_arguments') throw rpcError(ErrorCode.InvalidParams, `Invalid cursor for tasks/list: ${body.error.message}`, body);
      throw envelopeError('tasks/list', body);
    }
    const out = { tasks: body.result.purchases.map(taskOf) };
    if (body.result.nextCursor) out.nextCursor = body.result.nextCursor;
    return out;
  }

  /** Refused with the call that does what the agent likely wants (no tasks.cancel capability is declared). */
  async function cancel(taskId, extra) {
    const purchase = await readPurchase(taskId, extra);
    const status = taskStatusOf(purchase);
    if (status !== 'working') throw rpcError(ErrorCode.InvalidParams, `Cannot cancel task: already in terminal status '${status}'.`);
    // What the buyer may do instead, from the server (the machine's moves for the buyer in this state).
    const tools = (purchase.task && purchase.task.tools) || [];
    const nextTool = tools.includes('request_refund') ? 'request_refund' : null;
    const next =
      (nextTool ? `To cancel the purchase itself, call request_refund {purchaseId: "${purchase.id}", reason}. ` : '') +
      ((purchase.task && purchase.task.next) || '');
    throw rpcError(
      ErrorCode.MethodNotFound,
      `tasks/cancel is not supported: a purchase is not cancelled by cancelling its task (stop waiting simply by not calling tasks/result). ${next}`,
      { taskId: purchase.id, purchaseStatus: purchase.status, nextTool },
    );
  }

  return { create, get, result, list, cancel };
}

module.exports = { TASK_TOOLS, createPurchaseTasks, taskOf, taskStatusOf, DEFAULT_POLL_INTERVAL_MS, DEFAULT_WAIT_MS };
