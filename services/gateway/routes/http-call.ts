/** A tool call made by an HTTP route: the caller's address and request id filled in, the tool and agent noted for the access log. */
import type { Request, Response } from 'express';
import type { ToolDispatcher, ToolOutcome } from '../dispatch';
import { clientIp } from '../http';

export async function dispatchHttpCall(
  dispatcher: ToolDispatcher,
  req: Request,
  res: Response,
  call: { tool: unknown; args: unknown; apiKey?: string | null; idempotencyKey?: string | null },
): Promise<ToolOutcome> {
  const outcome = await dispatcher.dispatch({
    tool: call.tool,
    args: call.args,
    apiKey: call.apiKey ?? null,
    idempotencyKey: call.idempotencyKey ?? null,
    requestId: req.requestId,
    clientIp: clientIp(req),
    via: 'http',
  });
  res.locals.tool = outcome.tool;
  res.locals.agentId = outcome.agentId;
  return outcome;
}
