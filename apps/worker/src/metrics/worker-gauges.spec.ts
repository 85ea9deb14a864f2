import { dueSince } from './worker-gauges';

describe('dueSince: when a waiting job became due', () => {
  it('a job added without delay: when it was added', () => {
    expect(dueSince({ timestamp: 1000, opts: {}, data: {} })).toBe(1000);
  });
  it('a job added with a delay: when the delay ended', () => {
    expect(dueSince({ timestamp: 1000, opts: { delay: 500 }, data: {} })).toBe(1500);
  });
  it('a job tried before: not before its last start', () => {
    expect(dueSince({ timestamp: 1000, processedOn: 9000, opts: {}, data: {} })).toBe(9000);
  });
  it('a webhook retry: the due time its processor wrote (BullMQ forgets the delay once it ends)', () => {
    expect(dueSince({ timestamp: 1000, processedOn: 9000, opts: { delay: 60_000 }, data: { deliveryId: 'x', dueAt: 70_000 } })).toBe(70_000);
  });
});
