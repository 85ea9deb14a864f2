import { Injectable, Module } from '@nestjs/common';
import { CURRENT_POLICY_VERSION_SQL, DomainError, INTEGRATIONS_MANAGE, isId, isUuid, ORGANISATION_OWN, policyAccepted } from '@kernel/core';
import { CoreModule, TransactionHost } from '@kernel/database';
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

/** A sign-in link works once, for 15 minutes. */
export const LINK_TTL_MS = 15 * 60_000;
/** A session ends after 30 minutes without a page load… */
export const SESSION_IDLE_MS = 30 * 60_000;
/** …and 12 hours after sign-in, whatever happens. */
export const SESSION_ABSOLUTE_MS = 12 * 3_600_000;
/** last_seen_at is written at most once a minute: a page load is a read, not a write. */
export const SESSION_TOUCH_MS = 60_000;
/** A fresh key or secret waits this long for the page that shows it, once. */
export const REVEAL_TTL_MS = 10 * 60_000;

export type LinkVia = 'mail' | 'handover';

/** Who is looking at the console, read anew on every page load. */
export interface ConsoleViewer {
  sessionId: string;
  personId: string;
  name: string;
  email: string;
  organisationId: string;
  organisationName: string;
  /** The module is switched on by the service. */
  moduleEnabled: boolean;
  /** The organisation accepted the current integrations data policy. */
  policyAccepted: boolean;
  /** module on AND policy accepted: connections answer, and the console may change things. */
  moduleOn: boolean;
  ipAllowlist: string[];
  /** `integrations.manage` */
  canManage: boolean;
  /** `organisation.own` */
  isOwner: boolean;
  /** When the session ends at the latest (12 hours after sign-in). */
  expiresAt: Date;
}

export type SessionLookup = { viewer: ConsoleViewer } | { ended: 'unknown' | 'signed_out' | 'idle' | 'expired' | 'no_access' };

interface Eligible {
  person_id: string;
  name: string;
  email: string;
  organisation_id: string;
  organisation_name: string;
  module_enabled: boolean;
  accepted_policy_version: number | null;
  policy_version: number;
  ip_allowlist: string[];
  can_manage: boolean;
  is_owner: boolean;
}

const ELIGIBLE_COLUMNS = `
  p.id AS person_id, p.name, p.email, o.id AS organisation_id, o.name AS organisation_name, o.module_enabled,
  o.accepted_policy_version, ${CURRENT_POLICY_VERSION_SQL} AS policy_version, o.ip_allowlist,
  COALESCE('${INTEGRATIONS_MANAGE}' = ANY(g.permissions), false) AS can_manage,
  COALESCE('${ORGANISATION_OWN}' = ANY(g.permissions), false) AS is_owner`;
const ELIGIBLE_FROM = `people p JOIN organisations o ON o.id = p.organisation_id LEFT JOIN groups g ON g.id = p.group_id`;

/** What decides whether a session still holds, read from its row, its person and their group. */
export interface SessionFacts {
  endedAt: Date | null;
  expiresAt: Date;
  lastSeenAt: Date;
  disabled: boolean;
  /** The person is still in the organisation the session was opened for. */
  inSessionOrganisation: boolean;
  canManage: boolean;
  isOwner: boolean;
}

/**
 * The session rules, in order: signed out stays signed out; 12 hours after sign-in it is over
 * (`expired`), whatever else; 30 minutes without a page load ends it (`idle`); a person disabled,
 * removed from the organisation, or whose group holds neither console permission is out
 * (`no_access`). Null: the session holds.
 */
export function sessionVerdict(f: SessionFacts, now: Date): 'signed_out' | 'expired' | 'idle' | 'no_access' | null {
  if (f.endedAt) return 'signed_out';
  if (now.getTime() >= f.expiresAt.getTime()) return 'expired';
  if (now.getTime() - f.lastSeenAt.getTime() >= SESSION_IDLE_MS) return 'idle';
  if (f.disabled || !f.inSessionOrganisation || (!f.canManage && !f.isOwner)) return 'no_access';
  return null;
}

export const hashToken = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();
const newToken = (): string => randomBytes(32).toString('base64url');
/** Link and session tokens: 32 random bytes, base64url (anything else is not looked up). */
export const isToken = (token: unknown): token is string => typeof token === 'string' && /^[A-Za-z0-9_-]{43}$/.test(token);

/**
 * Who may use the Integrations section, and how they get in: the people of an organisation whose
 * group holds `integrations.manage` or `organisation.own`, signed in by a one-time link (mailed, or
 * handed over by the platform) that opens a server-side session. Every page load reads the person,
 * their group and their organisation again, so a disabled or removed person, or one whose group
 * lost both permissions, is out on the next load.
 */
@Injectable()
export class ConsoleAccessService {
  constructor(private readonly tx: TransactionHost) {}

  /** The people an address may sign in (usually one): active, in an organisation, and holding a console permission. */
  async eligibleByEmail(email: string): Promise<Array<{ personId: string; email: string; name: string }>> {
    const rows: Eligible[] = await this.tx.manager.query(
      `SELECT ${ELIGIBLE_COLUMNS} FROM ${ELIGIBLE_FROM}
        WHERE lower(p.email) = lower($1) AND NOT p.disabled
          AND ('${INTEGRATIONS_MANAGE}' = ANY(g.permissions) OR '${ORGANISATION_OWN}' = ANY(g.permissions))
        LIMIT 5`,
      [email],
    );
    return rows.map((r) => ({ personId: String(r.person_id), email: r.email, name: r.name }));
  }

  /**
   * A one-time sign-in link's token for a person who may use the console; 409-style refusal
   * (invalid_request) naming why otherwise. The token is returned once and stored hashed.
   */
  async issueLink(personId: string, via: LinkVia): Promise<{ token: string; expiresAt: Date }> {
    const person = await this.eligible(personId);
    if (!person) throw new DomainError('not_found', `No person ${personId} is in an organisation.`);
    if (!person.can_manage && !person.is_owner) {
      throw new DomainError(
        'invalid_request',
        `Person ${personId} may not use the Integrations section: their group holds neither integrations.manage nor organisation.own.`,
      );
    }
    const token = newToken();
    const expiresAt = new Date(Date.now() + LINK_TTL_MS);
    await this.tx.manager.query(`DELETE FROM console_sign_in_links WHERE expires_at < now() - interval '1 day'`);
    await this.tx.manager.query(`INSERT INTO console_sign_in_links (token_hash, person_id, via, expires_at) VALUES ($1, $2, $3, $4)`, [
      hashToken(token),
      personId,
      via,
      expiresAt,
    ]);
    return { token, expiresAt };
  }

  /** Whether a link token is still usable, without using it (the page before the button). */
  async linkUsable(token: unknown): Promise<boolean> {
    if (!isToken(token)) return false;
    const rows: unknown[] = await this.tx.manager.query(
      `SELECT 1 FROM console_sign_in_links WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()`,
      [hashToken(token)],
    );
    return rows.length > 0;
  }

  /**
   * Uses a link (once: the first caller wins) and opens a session for its person, if they may
   * still use the console. Returns the session token (for the cookie) and who signed in; null for
   * a link that is unknown, used, expired, or whose person lost access meanwhile.
   */
  // UPDATE/DELETE … RETURNING sit in a CTE: TypeORM's query() answers those statements with [rows, count], a SELECT with rows.
  async redeemLink(token: unknown): Promise<{ sessionToken: string; viewer: ConsoleViewer } | null> {
    if (!isToken(token)) return null;
    return this.tx.run(async () => {
      const used: Array<{ person_id: string }> = await this.tx.manager.query(
        `WITH used AS (
           UPDATE console_sign_in_links SET used_at = now()
            WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()
            RETURNING person_id)
         SELECT person_id FROM used`,
        [hashToken(token)],
      );
      if (!used[0]) return null;
      const person = await this.eligible(String(used[0].person_id));
      if (!person || (!person.can_manage && !person.is_owner)) return null;
      const sessionToken = newToken();
      const expiresAt = new Date(Date.now() + SESSION_ABSOLUTE_MS);
      await this.tx.manager.query(`DELETE FROM console_sessions WHERE expires_at < now() - interval '1 day'`);
      const rows: Array<{ id: string }> = await this.tx.manager.query(
        `INSERT INTO console_sessions (token_hash, person_id, organisation_id, expires_at) VALUES ($1, $2, $3, $4) RETURNING id`,
        [hashToken(sessionToken), person.person_id, person.organisation_id, expiresAt],
      );
      return { sessionToken, viewer: toViewer(String(rows[0].id), person, expiresAt) };
    });
  }

  /**
   * The session a cookie's token names, checked in one query: not ended, not idle for 30 minutes,
   * not older than 12 hours, its person still active in the same organisation and holding a
   * console permission. A session found wanting is ended, so it stays ended.
   */
  async lookup(token: unknown, now = new Date()): Promise<SessionLookup> {
    if (!isToken(token)) return { ended: 'unknown' };
    const rows: Array<
      Eligible & {
        session_id: string;
        session_org: string;
        last_seen_at: Date;
        expires_at: Date;
        ended_at: Date | null;
        person_org: string | null;
        disabled: boolean;
      }
    > = await this.tx.manager.query(
      `SELECT s.id AS session_id, s.organisation_id AS session_org, s.last_seen_at, s.expires_at, s.ended_at,
              p.organisation_id AS person_org, p.disabled, ${ELIGIBLE_COLUMNS}
         FROM console_sessions s
         JOIN people p ON p.id = s.person_id
         JOIN organisations o ON o.id = s.organisation_id
         LEFT JOIN groups g ON g.id = p.group_id
        WHERE s.token_hash = $1`,
      [hashToken(token)],
    );
    const r = rows[0];
    if (!r) return { ended: 'unknown' };
    const ended = sessionVerdict(
      {
        endedAt: r.ended_at,
        expiresAt: new Date(r.expires_at),
        lastSeenAt: new Date(r.last_seen_at),
        disabled: r.disabled,
        inSessionOrganisation: String(r.person_org) === String(r.session_org),
        canManage: r.can_manage,
        isOwner: r.is_owner,
      },
      now,
    );
    if (ended === 'signed_out') return { ended };
    if (ended) {
      await this.end(String(r.session_id));
      return { ended };
    }
    if (now.getTime() - new Date(r.last_seen_at).getTime() >= SESSION_TOUCH_MS) {
      await this.tx.manager.query(`UPDATE console_sessions SET last_seen_at = $2 WHERE id = $1 AND ended_at IS NULL`, [r.session_id, now]);
    }
    return { viewer: toViewer(String(r.session_id), r, new Date(r.expires_at)) };
  }

  /** Ends a session (sign-out): every later lookup of its token answers `signed_out`. */
  async end(sessionId: string): Promise<void> {
    await this.tx.manager.query(`UPDATE console_sessions SET ended_at = now() WHERE id = $1 AND ended_at IS NULL`, [sessionId]);
    await this.tx.manager.query(`DELETE FROM console_reveals WHERE session_id = $1`, [sessionId]);
  }

  /**
   * Keeps a freshly made secret (a key, a webhook secret) for the one page that shows it:
   * sealed with AES-256-GCM under a key derived from the session token, which only the browser's
   * cookie holds, so the stored row alone reveals nothing. Returns the reveal's id.
   */
  async stashReveal(sessionId: string, sessionToken: string, payload: object): Promise<string> {
    await this.tx.manager.query(`DELETE FROM console_reveals WHERE created_at < now() - make_interval(secs => $1)`, [REVEAL_TTL_MS / 1000]);
    const rows: Array<{ id: string }> = await this.tx.manager.query(`SELECT gen_random_uuid() AS id`);
    const id = rows[0].id;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', revealKey(sessionToken, id), iv);
    const body = Buffer.concat([cipher.update(JSON.stringify(payload), 'utf8'), cipher.final()]);
    const sealed = Buffer.concat([iv, cipher.getAuthTag(), body]);
    await this.tx.manager.query(`INSERT INTO console_reveals (id, session_id, sealed) VALUES ($1, $2, $3)`, [id, sessionId, sealed]);
    return id;
  }

  /** The stashed payload, once: the row is deleted as it is read. Null when gone, expired, or another session's. */
  async takeReveal<T>(sessionId: string, sessionToken: string, id: unknown): Promise<T | null> {
    // Not a uuid: no reveal has that id (and Postgres would refuse the comparison with the uuid column).
    if (!isUuid(id)) return null;
    const rows: Array<{ sealed: Buffer }> = await this.tx.manager.query(
      `WITH taken AS (
         DELETE FROM console_reveals WHERE id = $1 AND session_id = $2 AND created_at > now() - make_interval(secs => $3) RETURNING sealed)
       SELECT sealed FROM taken`,
      [id, sessionId, REVEAL_TTL_MS / 1000],
    );
    if (!rows[0]) return null;
    const sealed = rows[0].sealed;
    try {
      const decipher = createDecipheriv('aes-256-gcm', revealKey(sessionToken, id), sealed.subarray(0, 12));
      decipher.setAuthTag(sealed.subarray(12, 28));
      const text = Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString('utf8');
      return JSON.parse(text) as T;
    } catch {
      return null;
    }
  }

  private async eligible(personId: string): Promise<Eligible | null> {
    if (!isId(personId)) return null;
    const rows: Eligible[] = await this.tx.manager.query(`SELECT ${ELIGIBLE_COLUMNS} FROM ${ELIGIBLE_FROM} WHERE p.id = $1 AND NOT p.disabled`, [personId]);
    return rows[0] ?? null;
  }
}

const revealKey = (sessionToken: string, id: string): Buffer => Buffer.from(hkdfSync('sha256', Buffer.from(sessionToken, 'utf8'), id, 'console-reveal', 32));

function toViewer(sessionId: string, r: Eligible, expiresAt: Date): ConsoleViewer {
  const accepted = policyAccepted(r.accepted_policy_version, Number(r.policy_version));
  return {
    sessionId,
    personId: String(r.person_id),
    name: r.name,
    email: r.email,
    organisationId: String(r.organisation_id),
    organisationName: r.organisation_name,
    moduleEnabled: Boolean(r.module_enabled),
    policyAccepted: accepted,
    moduleOn: Boolean(r.module_enabled) && accepted,
    ipAllowlist: r.ip_allowlist ?? [],
    canManage: Boolean(r.can_manage),
    isOwner: Boolean(r.is_owner),
    expiresAt,
  };
}

/** Sign-in links and sessions alone: the admin CLI's `console link` uses it without the pages. */
@Module({ imports: [CoreModule], providers: [ConsoleAccessService], exports: [ConsoleAccessService] })
export class ConsoleAccessModule {}
