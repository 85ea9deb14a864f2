import { policyAccepted } from './data-policy';

describe('policyAccepted', () => {
  it('holds for the current version or a later one, never for none', () => {
    expect(policyAccepted(2, 2)).toBe(true);
    expect(policyAccepted(3, 2)).toBe(true);
    expect(policyAccepted(1, 2)).toBe(false);
    expect(policyAccepted(null, 1)).toBe(false);
  });
});
