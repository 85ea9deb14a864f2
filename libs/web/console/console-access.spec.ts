import { hashToken, isToken, SESSION_ABSOLUTE_MS, SESSION_IDLE_MS, SessionFacts, sessionVerdict } from './console-access.service';

const signedIn = new Date('2026-11-24T08:00:00Z');
const fresh = (over: Partial<SessionFacts> = {}): SessionFacts => ({
  endedAt: null,
  expiresAt: new Date(signedIn.getTime() + SESSION_ABSOLUTE_MS),
  lastSeenAt: signedIn,
  disabled: false,
  inSessionOrganisation: true,
  canManage: true,
  isOwner: false,
  ...over,
});
const at = (ms: number) => new Date(signedIn.getTime() + ms);

describe('console session rules', () => {
  it('holds while used, for a manager or an owner', () => {
    expect(sessionVerdict(fresh(), at(60_000))).toBeNull();
    expect(sessionVerdict(fresh({ canManage: false, isOwner: true }), at(60_000))).toBeNull();
  });

  it('ends after 30 minutes without a page load, not a moment before', () => {
    expect(sessionVerdict(fresh(), at(SESSION_IDLE_MS - 1))).toBeNull();
    expect(sessionVerdict(fresh(), at(SESSION_IDLE_MS))).toBe('idle');
    // A load in between starts the 30 minutes again.
    expect(sessionVerdict(fresh({ lastSeenAt: at(20 * 60_000) }), at(45 * 60_000))).toBeNull();
  });

  it('ends 12 hours after sign-in however busy it is', () => {
    const busy = fresh({ lastSeenAt: at(SESSION_ABSOLUTE_MS - 60_000) });
    expect(sessionVerdict(busy, at(SESSION_ABSOLUTE_MS - 1))).toBeNull();
    expect(sessionVerdict(busy, at(SESSION_ABSOLUTE_MS))).toBe('expired');
  });

  it('ends for a person disabled, moved out of the organisation, or whose group lost both permissions', () => {
    expect(sessionVerdict(fresh({ disabled: true }), at(1000))).toBe('no_access');
    expect(sessionVerdict(fresh({ inSessionOrganisation: false }), at(1000))).toBe('no_access');
    expect(sessionVerdict(fresh({ canManage: false, isOwner: false }), at(1000))).toBe('no_access');
  });

  it('stays signed out once signed out, before any other reason', () => {
    expect(sessionVerdict(fresh({ endedAt: at(1000), disabled: true }), at(SESSION_ABSOLUTE_MS * 2))).toBe('signed_out');
  });
});

describe('console link and session tokens', () => {
  it('looks up only 32-byte base64url tokens', () => {
    expect(isToken('A'.repeat(43))).toBe(true);
    expect(isToken('A'.repeat(42))).toBe(false);
    expect(isToken('A'.repeat(44))).toBe(false);
    expect(isToken(`${'A'.repeat(42)}=`)).toBe(false);
    expect(isToken(`${'A'.repeat(42)}/`)).toBe(false);
    expect(isToken(['A'.repeat(43)])).toBe(false);
    expect(isToken(undefined)).toBe(false);
  });

  it('stores only a SHA-256 of a token', () => {
    const token = 'b'.repeat(43);
    expect(hashToken(token)).toHaveLength(32);
    expect(hashToken(token).toString('hex')).not.toContain(Buffer.from(token).toString('hex'));
    expect(hashToken(token).equals(hashToken(token))).toBe(true);
    expect(hashToken(token).equals(hashToken('c'.repeat(43)))).toBe(false);
  });
});
