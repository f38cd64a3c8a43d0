/**
 * Purchases as MCP tasks, as an agent would use them (issue #26): the official SDK client over /mcp.
 * Shared by the in-process suite (one gateway) and the distributed one (two gateway processes): the
 * task is created through replica 0 and every later request goes to replica 1, which never saw it.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema, type CreateTaskResult } from '@modelcontextprotocol/sdk/types.js';
import type { ApiClient } from '../../../test/kit';
import { newAgent, newListing, type TestAgent } from '../../escrow/test/helpers';
import { callOk, connect } from './mcp-helpers';

export interface TaskScenarioApp {
  api: ApiClient;
  /** Base URLs of the gateway replicas (one is fine: then both "replicas" are the same). */
  replicas: string[];
  /** Gives the agent at least 1000 gas. */
  fund(agent: TestAgent): Promise<void>;
  /** The ledger audit, clean. */
  audit(): Promise<void>;
}

const RELATED_TASK = 'io.modelcontextprotocol/related-task';

/** An MCP client whose requests go to the replica `to(i)` last chose (a load balancer without stickiness). */
async function routedClient(app: TaskScenarioApp, apiKey: string, served: Set<string>) {
  let target = 0;
  const fetchVia = (url: string | URL, init?: RequestInit) => {
    const u = new URL(url);
    const base = new URL(app.replicas[target % app.replicas.length]);
    u.host = base.host;
    served.add(base.host);
    return fetch(u, init);
  };
  const transport = new StreamableHTTPClientTransport(new URL(`${app.replicas[0]}/mcp`), {
    fetch: fetchVia,
    requestInit: { headers: { authorization: `Bearer ${apiKey}` } },
  });
  const client = await connect(transport);
  return { client, to: (i: number) => (target = i) };
}

function createTask(client: Client, args: Record<string, unknown>): Promise<CreateTaskResult> {
  return client.request({ method: 'tools/call', params: { name: 'purchase_service', arguments: args, task: { ttl: 60_000 } } }, CreateTaskResultSchema);
}

const envelopeOf = (r: any) => JSON.parse(r.content[0].text);

export async function runPurchaseTasks(app: TaskScenarioApp, tag: string): Promise<{ servedBy: string[] }> {
  const served = new Set<string>();
  const seller = await newAgent(app, 'Task Seller');
  const buyer = await newAgent(app, 'Task Buyer');
  const stranger = await newAgent(app, 'Task Stranger');
  const listing = await newListing(app, seller);

  const b = await routedClient(app, buyer.apiKey, served);
  const s = await routedClient(app, seller.apiKey, served);
  const x = await routedClient(app, stranger.apiKey, served);
  s.to(1);
  x.to(1);
  const buyerMcp = b.client;
  const tasks = buyerMcp.experimental.tasks;

  // Discovery: the server takes task-augmented tools/call and tasks/list, not tasks/cancel; only purchase_service is a task.
  expect(buyerMcp.getServerCapabilities()?.tasks).toEqual({ list: {}, requests: { tools: { call: {} } } });
  const { tools } = await buyerMcp.listTools();
  expect(tools.find((t) => t.name === 'purchase_service')!.execution).toEqual({ taskSupport: 'optional' });
  expect(tools.filter((t) => t.execution).map((t) => t.name)).toEqual(['purchase_service']);

  // A purchase refused at once creates no task: a JSON-RPC error carrying the envelope and its hint.
  const broke = await createTask(buyerMcp, { listingId: listing.id }).catch((e) => e);
  expect(broke).toMatchObject({ code: -32602, data: { ok: false, error: { code: 'insufficient_gas' } } });
  expect(broke.message).toMatch(/buy_gas|pack/);
  // Another tool as a task: the spec's -32601.
  await expect(buyerMcp.request({ method: 'tools/call', params: { name: 'whoami', arguments: {}, task: {} } }, CreateTaskResultSchema)).rejects.toMatchObject({ code: -32601 });

  await app.fund(buyer);

  // 1. Bought as a task through replica 0; everything after goes to replica 1.
  b.to(0);
  const created = await createTask(buyerMcp, { listingId: listing.id, requirements: 'src/math.ts', idempotencyKey: `task-a-${tag}` });
  b.to(1);
  const taskId = created.task.taskId;
  expect(created.task).toMatchObject({ taskId: expect.stringMatching(/^pur_/), status: 'working', ttl: null, pollInterval: 5000 });
  expect(created._meta?.['agent-market/purchase']).toMatchObject({ id: taskId, status: 'awaiting_delivery', priceGas: 250 });
  expect(created._meta?.['io.modelcontextprotocol/model-immediate-response']).toContain(taskId);

  const working = await tasks.getTask(taskId);
  expect(working).toMatchObject({ taskId, status: 'working', pollInterval: 5000, ttl: null });
  expect(working.statusMessage).toMatch(/awaiting_delivery\..*deliver_work/);

  // Only the buyer can read it: for the seller and a stranger it does not exist.
  for (const other of [s.client, x.client]) {
    await expect(other.experimental.tasks.getTask(taskId)).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/Task not found/) });
    await expect(other.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).rejects.toMatchObject({ code: -32602 });
  }
  await expect(tasks.getTask('pur_doesnotexist')).rejects.toMatchObject({ code: -32602 });
  expect((await x.client.experimental.tasks.listTasks()).tasks).toEqual([]);
  expect((await tasks.listTasks()).tasks.map((t) => t.taskId)).toContain(taskId);

  // tasks/cancel does not cancel a purchase: refused, naming request_refund; nothing changes.
  await expect(tasks.cancelTask(taskId)).rejects.toMatchObject({ code: -32601, message: expect.stringMatching(/request_refund/) });
  expect((await tasks.getTask(taskId)).status).toBe('working');

  // tasks/result waits server-side until the seller delivers: no polling loop in the agent.
  const t0 = Date.now();
  const waiting = tasks.getTaskResult(taskId, CallToolResultSchema);
  await new Promise((r) => setTimeout(r, 700));
  await callOk(s.client, 'deliver_work', { purchaseId: taskId, delivery: { summary: `Tests for math.ts (${tag})`, files: { 'math.test.ts': 'test("adds", () => {});' } } });
  const result: any = await waiting;
  expect(Date.now() - t0).toBeGreaterThanOrEqual(700);
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent.purchase).toMatchObject({ id: taskId, status: 'delivered', role: 'buyer' });
  expect(result.structuredContent.delivery).toMatchObject({ purchaseId: taskId, delivery: { summary: `Tests for math.ts (${tag})` }, trust: 'untrusted' });
  expect(result.structuredContent.delivery.sha256).toMatch(/^[0-9a-f]{64}$/);
  expect(result._meta?.[RELATED_TASK]).toEqual({ taskId });

  const done = await tasks.getTask(taskId);
  expect(done).toMatchObject({ taskId, status: 'completed' });
  expect(done.pollInterval).toBeUndefined();
  expect(done.statusMessage).toMatch(/confirm_delivery/);
  await expect(tasks.cancelTask(taskId)).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/terminal status 'completed'/) });
  // Retrying the purchase with the same idempotencyKey is the same purchase, so the same task.
  expect((await createTask(buyerMcp, { listingId: listing.id, requirements: 'src/math.ts', idempotencyKey: `task-a-${tag}` })).task.taskId).toBe(taskId);
  await callOk(buyerMcp, 'confirm_delivery', { purchaseId: taskId });
  // Completed stays completed (a terminal task never changes), and its result is still the delivery.
  expect((await tasks.getTask(taskId)).status).toBe('completed');
  expect(((await tasks.getTaskResult(taskId, CallToolResultSchema)) as any).structuredContent.purchase.status).toBe('completed');

  // 2. A purchase the seller refunds: the task fails, and tasks/result is the tool error with the refund.
  b.to(0);
  const refundedTask = (await createTask(buyerMcp, { listingId: listing.id, idempotencyKey: `task-b-${tag}` })).task.taskId;
  b.to(1);
  await callOk(s.client, 'request_refund', { purchaseId: refundedTask, reason: 'Cannot take this one, sorry.' });
  const failed = await tasks.getTask(refundedTask);
  expect(failed).toMatchObject({ taskId: refundedTask, status: 'failed' });
  expect(failed.statusMessage).toMatch(/Refunded .*Cannot take this one/);
  const refund: any = await tasks.getTaskResult(refundedTask, CallToolResultSchema);
  expect(refund.isError).toBe(true);
  expect(refund.structuredContent).toBeUndefined();
  expect(envelopeOf(refund)).toMatchObject({
    ok: false,
    error: { code: 'invalid_state', hint: expect.stringMatching(/search_services/), details: { purchaseId: refundedTask, status: 'refunded', refundReason: 'Cannot take this one, sorry.' } },
  });
  expect(refund._meta?.[RELATED_TASK]).toEqual({ taskId: refundedTask });

  // 3. The SDK's own task stream: the agent awaits the delivery in one call while the seller works.
  const messages: any[] = [];
  let delivering: Promise<unknown> | null = null;
  b.to(0);
  const stream = tasks.callToolStream({ name: 'purchase_service', arguments: { listingId: listing.id, idempotencyKey: `task-c-${tag}` } }, CallToolResultSchema, {
    task: { ttl: 60_000 },
  });
  for await (const m of stream) {
    messages.push(m);
    if (m.type === 'taskCreated') {
      b.to(1);
      delivering = callOk(s.client, 'deliver_work', { purchaseId: m.task.taskId, delivery: { summary: 'Streamed delivery' } });
    }
  }
  await delivering;
  expect(messages[0].type).toBe('taskCreated');
  expect(messages.filter((m) => m.type === 'taskStatus').at(-1).task.status).toBe('completed');
  const last = messages.at(-1);
  expect(last.type).toBe('result');
  expect(last.result.structuredContent.delivery.delivery.summary).toBe('Streamed delivery');
  await callOk(buyerMcp, 'confirm_delivery', { purchaseId: messages[0].task.taskId });

  // A client that does not ask for a task gets exactly today's answer.
  const plain = await buyerMcp.callTool({ name: 'purchase_service', arguments: { listingId: listing.id, idempotencyKey: `task-d-${tag}` } });
  expect(plain.isError).toBeFalsy();
  expect(Object.keys(plain.structuredContent as object)).toEqual(['purchase']);
  expect((plain.structuredContent as any).purchase.status).toBe('awaiting_delivery');
  await callOk(buyerMcp, 'request_refund', { purchaseId: (plain.structuredContent as any).purchase.id, reason: 'Changed my mind.' });

  await Promise.all([buyerMcp.close(), s.client.close(), x.client.close()]);
  await app.audit();
  return { servedBy: [...served] };
}
