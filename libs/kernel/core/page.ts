/** Page size when a list call names none; the edge bounds `limit` to 1..MAX_PAGE_SIZE. */
export const DEFAULT_PAGE_SIZE = 25;
export const MAX_PAGE_SIZE = 100;

/** What a list call asked for (validated at the edge). */
export interface PageRequest {
  limit?: number;
  cursor?: string;
  /** Only items whose updated_at is at or after this time (the list's order stays). */
  updatedSince?: Date;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
  /**
   * With `updatedSince`: the walk's horizon, fixed by its first page and carried by its cursors;
   * every page holds only items changed before it (see SyncWindow).
   */
  horizon?: Date;
}
