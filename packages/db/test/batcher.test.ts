/**
 * The group commit: a lone item goes out at once; items arriving while maxInFlight batches run go out
 * together; `fits` keeps an item for the next batch; a batch that throws fails exactly its own items.
 */
import { Batcher, type BatcherOptions } from '../batcher';

function deferred() {
  let release!: () => void;
  const done = new Promise<void>((r) => (release = r));
  return { done, release };
}

/** A batcher whose batches are recorded (`sent`) and each held until its gate is opened (`gates[i]()`); items answer `answer(item)`. */
function gated<T, R>(answer: (item: T) => R, opts: BatcherOptions<T>) {
  const sent: T[][] = [];
  const gates: Array<() => void> = [];
  const b = new Batcher<T, R>(async (batch) => {
    sent.push(batch.map((x) => x.item));
    const gate = deferred();
    gates.push(gate.release);
    await gate.done;
    for (const { item, settle } of batch) settle.resolve(answer(item));
  }, opts);
  return { b, sent, gates };
}

describe('Batcher (group commit)', () => {
  test('a lone item is sent at once; what arrives while a batch runs goes out together in the next', async () => {
    const { b, sent, gates } = gated((item: number) => item * 10, { maxInFlight: 1, maxBatch: 10 });
    const first = b.submit(1);
    expect(sent).toEqual([[1]]);
    const rest = [2, 3, 4].map((n) => b.submit(n));
    expect(sent).toEqual([[1]]);
    gates[0]();
    expect(await first).toBe(10);
    await new Promise((r) => setImmediate(r));
    expect(sent).toEqual([[1], [2, 3, 4]]);
    gates[1]();
    expect(await Promise.all(rest)).toEqual([20, 30, 40]);
    expect(b.stats).toEqual({ batches: 2, items: 4, retriedAlone: 0 });
  });

  test('fits keeps an item for the next batch (e.g. two changes of one row); maxBatch bounds a batch', async () => {
    const sent: string[][] = [];
    let gate = deferred();
    const b = new Batcher<string, void>(
      async (batch) => {
        sent.push(batch.map((x) => x.item));
        await gate.done;
        for (const { settle } of batch) settle.resolve();
      },
      { maxInFlight: 1, maxBatch: 2, fits: (batch, item) => !batch.includes(item) },
    );
    const all = [b.submit('a'), b.submit('a'), b.submit('b'), b.submit('c')];
    gate.release();
    await new Promise((r) => setImmediate(r));
    gate = deferred();
    gate.release();
    await Promise.all(all);
    expect(sent).toEqual([['a'], ['a', 'b'], ['c']]);
  });

  test('a batch that throws rejects its own unsettled items only; the next batch still runs', async () => {
    let calls = 0;
    const b = new Batcher<number, number>(
      async (batch) => {
        calls++;
        if (calls === 2) {
          batch[0].settle.resolve(-1);
          throw new Error('deadlock detected');
        }
        for (const { item, settle } of batch) settle.resolve(item);
      },
      { maxInFlight: 1, maxBatch: 10 },
    );
    const p1 = b.submit(1);
    const p2 = b.submit(2);
    const p3 = b.submit(3);
    expect(await p1).toBe(1);
    expect(await p2).toBe(-1);
    await expect(p3).rejects.toThrow('deadlock detected');
    expect(await b.submit(4)).toBe(4);
  });

  test('keys: an item waits while another with a key in common is in flight, in its batch or another', async () => {
    const { b, sent, gates } = gated((): void => undefined, { maxInFlight: 4, maxBatch: 10, keys: (item: string) => [item[0]] });
    const all = ['a1', 'b1', 'a2', 'c1'].map((x) => b.submit(x));
    // a1, b1, c1 each went at once (four may fly); a2 waits for a1's batch.
    expect(sent).toEqual([['a1'], ['b1'], ['c1']]);
    gates[1]();
    await new Promise((r) => setImmediate(r));
    expect(sent).toEqual([['a1'], ['b1'], ['c1']]);
    gates[0]();
    await new Promise((r) => setImmediate(r));
    expect(sent).toEqual([['a1'], ['b1'], ['c1'], ['a2']]);
    gates[2]();
    gates[3]();
    await Promise.all(all);
  });
});
