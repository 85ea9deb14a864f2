import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { REDIS, RedisOutage } from '@kernel/redis';
import type Redis from 'ioredis';
import { createHash } from 'node:crypto';
import type { ScimPage } from './model/scim-caller';

/** How long a walk's remembered positions are kept after the page that ended there: a client that pauses longer starts over with an offset. */
export const SCIM_WALK_POSITION_SECONDS = 300;
/** How long a walk reuses the totalResults it counted (a list's first page always counts afresh). */
export const SCIM_WALK_TOTAL_SECONDS = 10;

/** Who walks what: positions are never shared between organisations, connections, resource types, filters or orders. */
export interface ScimWalk {
  organisationId: string;
  connectionId: string;
  resource: 'Users' | 'Groups';
  /** What selects and orders the rows: the parsed filter and the sort, as one string. */
  signature: string;
}

/** Where a page starts: after the row whose sort key is `after` (a keyset), or else `offset` rows in. */
export interface ScimSlice {
  offset: number;
  limit: number;
  after?: string;
}

/** A list a walk pages through: rows in ascending sort-key order. */
export interface ScimPageSource<R> {
  find(slice: ScimSlice): Promise<R[]>;
  count(): Promise<number>;
  keyOf(row: R): string;
}

/**
 * Writes ARGV[1] at KEYS[1] for ARGV[2] seconds unless another value is there: then the position is
 * ambiguous (two walks of the same list, numbered differently because rows changed between them)
 * and it is marked `x`, never read as a position, until it expires. Atomic, so two replicas
 * remembering at once cannot both believe their value stands.
 */
const REMEMBER_LUA = `
local current = redis.call('GET', KEYS[1])
if current and current ~= ARGV[1] then
  redis.call('SET', KEYS[1], 'x', 'EX', ARGV[2])
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return 1
`;
const CONFLICT = 'x';

/** The connection with the script defined on it (defineCommand: EVALSHA, and the script itself once when Redis lacks it). */
interface Remember {
  scimWalkRemember(key: string, value: string, seconds: number): Promise<number>;
}
const SORT_KEY = /^\d{1,19}$/;

/**
 * SCIM's index paging (startIndex, count) served flat however deep the page. A list is ordered by a
 * unique sort key (the id), so after serving rows up to position N a walk remembers, in Redis, the
 * sort key of row N; a request for startIndex N+1 then reads `key > remembered LIMIT count` (an index
 * range) instead of skipping N rows. Anything else (a jump, a forgotten or ambiguous position, Redis
 * away) is served with an offset, as before. totalResults is counted on a list's first page and
 * reused by the walk for SCIM_WALK_TOTAL_SECONDS, since counting every match is itself linear.
 *
 * Nothing lives in process memory, so the api replicas a client's requests land on agree. Keys
 * name the organisation and the connection and a hash of the signature (no filter value, which
 * may be an address, is stored), and the keyset query still carries the organisation and the
 * filter: a remembered position can only change where the page starts, never what may be in it.
 * docs/scim.md says what a walk answers while rows are added or removed.
 */
@Injectable()
export class ScimWalks {
  private readonly outage: RedisOutage;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly config: AppConfig,
  ) {
    this.outage = new RedisOutage(redis, new Logger(ScimWalks.name), 'SCIM list pages are served by offset', 'SCIM list walks are remembered again');
    if (typeof (redis as unknown as Partial<Remember>).scimWalkRemember !== 'function')
      redis.defineCommand('scimWalkRemember', { numberOfKeys: 1, lua: REMEMBER_LUA });
  }

  /** One page of `source` at `page`, and totalResults. */
  async page<R>(walk: ScimWalk, page: ScimPage, source: ScimPageSource<R>): Promise<{ totalResults: number; rows: R[] }> {
    const key = this.keyOf(walk);
    if (page.startIndex === 1 && page.count > 0) {
      // The first page comes first: when it is not full it holds every match, and its length is
      // totalResults without a statement to count them (a `userName eq` lookup: one statement).
      const rows = await source.find({ offset: 0, limit: page.count });
      const totalResults = rows.length < page.count ? rows.length : await source.count();
      await this.remember(key, rows.length, rows, page.count, source, totalResults);
      return { totalResults, rows };
    }
    const found = page.count > 0 ? await this.recall(key, page.startIndex - 1) : { after: undefined, total: undefined };
    const counted = found.total ?? (await source.count());
    if (found.after === undefined) {
      if (page.count === 0 || page.startIndex > counted) return { totalResults: counted, rows: [] };
      const rows = await source.find({ offset: page.startIndex - 1, limit: page.count });
      await this.remember(key, page.startIndex - 1 + rows.length, rows, page.count, source, found.total === undefined ? counted : undefined);
      return { totalResults: counted, rows };
    }
    // A walk continued: one row more than the page tells whether more follow. Positions are the
    // walk's own, so after rows before it were removed the walk runs past the current count; while
    // more rows follow, totalResults is at least the next one's position, so that a client stopping
    // at totalResults does not stop short (with nothing changed it is the count itself).
    const fetched = await source.find({ offset: page.startIndex - 1, limit: page.count + 1, after: found.after });
    const rows = fetched.slice(0, page.count);
    const end = page.startIndex - 1 + rows.length;
    const totalResults = fetched.length > page.count ? Math.max(counted, end + 1) : counted;
    await this.remember(key, end, rows, page.count, source, found.total === undefined ? counted : undefined);
    return { totalResults, rows };
  }

  private keyOf(walk: ScimWalk): string {
    const signature = createHash('sha256').update(walk.signature).digest('base64url').slice(0, 22);
    // The hash tag keeps a walk's keys in one slot of a Redis Cluster (one MGET reads two of them).
    return `${this.config.redisPrefix}:scim:walk:{${walk.organisationId}:${walk.connectionId}:${walk.resource}:${signature}}`;
  }

  /** The sort key remembered at `position` (if it stands) and the walk's total (if counted recently). */
  private async recall(key: string, position: number): Promise<{ after?: string; total?: number }> {
    if (!this.outage.mayTry()) return {};
    try {
      const [at, total] = await this.redis.mget(`${key}:at:${position}`, `${key}:total`);
      this.outage.worked();
      const counted = total === null ? NaN : Number(total);
      return {
        after: at !== null && at !== CONFLICT && SORT_KEY.test(at) ? at : undefined,
        total: Number.isSafeInteger(counted) && counted >= 0 ? counted : undefined,
      };
    } catch (err) {
      this.outage.failed(err);
      return {};
    }
  }

  /**
   * Remembers the sort key of the last row served (at `position`), and a total just counted. Only
   * after a full page: one that is not full ends the list, so no page continues it (and a lookup,
   * which Okta makes before every create, costs Redis nothing).
   */
  private async remember<R>(key: string, position: number, rows: R[], count: number, source: ScimPageSource<R>, counted: number | undefined): Promise<void> {
    if (rows.length === 0 || rows.length < count) return;
    if (!this.outage.mayTry()) return;
    try {
      const last = String(source.keyOf(rows[rows.length - 1]));
      const writes: Promise<unknown>[] = [(this.redis as unknown as Remember).scimWalkRemember(`${key}:at:${position}`, last, SCIM_WALK_POSITION_SECONDS)];
      if (counted !== undefined) writes.push(this.redis.set(`${key}:total`, String(counted), 'EX', SCIM_WALK_TOTAL_SECONDS));
      await Promise.all(writes);
      this.outage.worked();
    } catch (err) {
      this.outage.failed(err);
    }
  }
}
