/** The buyer's and seller's lifecycle tools as actions: each fires one transition of the purchase machine. */
import type { Context } from 'moleculer';
import type { Trigger } from '../../packages/contracts/purchase-machine';
import { toolParams } from '../../packages/tool-catalogue';
import { requireAgent, type CallMeta } from '../../packages/tool-catalogue/meta';
import type { AskedOf, InputOf } from './purchase-engine';
import { asRole, roleOf, toView, type PurchaseRow, type Role } from './purchases';
import type { EscrowThis } from './types';

/**
 * A lifecycle tool as an action: the calling agent fires one of `triggers` on the purchase it names — as
 * `role` (anyone else: not_found / forbidden), or as whichever party it is (`'party'`) — with the input
 * `input` decides from its parameters (and the row, inside the engine), and gets the purchase as it sees it.
 * The engine guards the state; the tools differ only in these things.
 *
 * Every keyed step is idempotent (ADR 0035): `asked` says which of the transition's input columns the caller
 * chose (the delivery, a reason, a rating); when a call carries an Idempotency-Key and the row already shows this
 * caller's step with those values (a retry whose first answer was lost, a failover re-send), the answer is the
 * purchase as it is now — a 200 in the shape of the first answer, never invalid_state — and nothing is written
 * or moved again. Without a key, a repeat is refused as the machine says (invalid_state): the contract's answer
 * to "this purchase is already completed" stays what a client without retries expects.
 */
export function lifecycleTool<P extends { purchaseId: string }>(
  tool: string,
  triggers: Trigger | readonly Trigger[],
  role: Role | 'party',
  input: (this: EscrowThis, params: P) => InputOf<Trigger> = () => ({}),
  asked: (params: P) => AskedOf = () => ({}),
) {
  return {
    params: toolParams(tool),
    async handler(this: EscrowThis, ctx: Context<P, CallMeta>) {
      const agent = requireAgent(ctx);
      const { purchaseId } = ctx.params;
      const actor = (p: PurchaseRow) => (role === 'party' ? roleOf(p, agent.id, purchaseId) : asRole(p, agent.id, purchaseId, role, tool));
      const repeatOf = ctx.meta?.idempotencyKey ? asked(ctx.params) : undefined;
      const row = await this.engine.fire(purchaseId, triggers, actor, input.call(this, ctx.params), tool, repeatOf);
      return { purchase: toView(row, agent.id) };
    },
  };
}
