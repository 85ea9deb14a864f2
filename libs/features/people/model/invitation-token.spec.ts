import { createHash } from 'node:crypto';
import { hashInvitationToken, INVITATION_TOKEN_FORMAT, newInvitationToken } from './invitation-token';

describe('invitation tokens', () => {
  it('are 43 base64url characters (32 random bytes), usable in a URL as is', () => {
    const { token } = newInvitationToken();
    expect(token).toMatch(INVITATION_TOKEN_FORMAT);
    expect(encodeURIComponent(token)).toBe(token);
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);
  });

  it('are fresh each time, each with its own hash', () => {
    const made = Array.from({ length: 50 }, () => newInvitationToken());
    expect(new Set(made.map((t) => t.token)).size).toBe(50);
    expect(new Set(made.map((t) => t.hash)).size).toBe(50);
  });

  it('come with the hash of the token, which is what is stored', () => {
    const { token, hash } = newInvitationToken();
    expect(hash).toBe(hashInvitationToken(token));
  });
});

describe('hashInvitationToken', () => {
  it('is the hex SHA-256 of the token: stable across calls, 64 lowercase hex characters', () => {
    const token = 'A'.repeat(43);
    expect(hashInvitationToken(token)).toBe(hashInvitationToken(token));
    expect(hashInvitationToken(token)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashInvitationToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashInvitationToken(token)).toBe(createHash('sha256').update(token).digest('hex'));
  });

  it('differs for tokens differing in one character, including only in case', () => {
    expect(hashInvitationToken(`${'a'.repeat(42)}b`)).not.toBe(hashInvitationToken(`${'a'.repeat(42)}c`));
    expect(hashInvitationToken(`${'a'.repeat(42)}b`)).not.toBe(hashInvitationToken(`${'a'.repeat(42)}B`));
  });
});

describe('INVITATION_TOKEN_FORMAT', () => {
  it.each([
    ['42 characters', 'a'.repeat(42)],
    ['44 characters', 'a'.repeat(44)],
    ['base64 "+" or "/"', `${'a'.repeat(42)}+`],
    ['padding', `${'a'.repeat(42)}=`],
    ['surrounding spaces', ` ${'a'.repeat(43)}`],
  ])('refuses %s', (_, token) => {
    expect(INVITATION_TOKEN_FORMAT.test(token)).toBe(false);
  });

  it('takes letters, digits, "-" and "_"', () => {
    expect(INVITATION_TOKEN_FORMAT.test(`${'aZ09-_'.repeat(7)}x`)).toBe(true);
  });
});
