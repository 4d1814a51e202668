/**
 * Reading a list a server hands out in pages (`nextCursor`) to its end, within bounds: a server that pages without
 * end, or lists very many items, is read only so far, and the caller is told there was more.
 */

/** How far to read: at most `maxPages` pages, and no further page once `maxItems` items are in. */
export interface PageBounds {
  maxPages: number;
  maxItems?: number;
}

export interface PagedList<T> {
  items: T[];
  /** True when the server had more pages than the bounds let be read. */
  more: boolean;
}

/** One page of a list: its items, and the cursor of the next page if there is one. */
export type PageReader<T> = (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string }>;

/** Reads page after page until the server gives no `nextCursor` or a bound is reached. */
export async function readPages<T>(bounds: PageBounds, page: PageReader<T>): Promise<PagedList<T>> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let read = 0; read < bounds.maxPages; read++) {
    const result = await page(cursor);
    items.push(...result.items);
    cursor = result.nextCursor;
    if (!cursor) return { items, more: false };
    if (bounds.maxItems !== undefined && items.length >= bounds.maxItems) break;
  }
  return { items, more: true };
}
