import { SearchCache } from '../search';

describe('SearchCache', () => {
  it('serves an entry until its TTL, then forgets it', () => {
    const c = new SearchCache<number>(1_000);
    c.set('k', [1], c.begin(), 10_000);
    expect(c.get('k', 10_999)).toEqual([1]);
    expect(c.get('k', 11_000)).toBeUndefined();
  });

  it('a write empties it, and a search that ran across the write does not store its rows', () => {
    const c = new SearchCache<number>(1_000);
    c.set('a', [1], c.begin(), 0);
    const during = c.begin();
    c.invalidate();
    expect(c.get('a', 1)).toBeUndefined();
    c.set('b', [2], during, 1);
    expect(c.get('b', 2)).toBeUndefined();
    c.set('b', [3], c.begin(), 3);
    expect(c.get('b', 4)).toEqual([3]);
  });

  it('keeps at most max entries, dropping the oldest', () => {
    const c = new SearchCache<number>(1_000, 2);
    for (const k of ['a', 'b', 'c']) c.set(k, [1], c.begin(), 0);
    expect(c.get('a', 1)).toBeUndefined();
    expect(c.get('c', 1)).toEqual([1]);
  });
});
