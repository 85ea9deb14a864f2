import { UNTRACED_PATHS } from './tracing';
import { bullMetadata, contextFrom, currentTraceContext, inContext, inSpan, isTracing } from './trace-context';

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('trace context helpers with tracing off (no SDK started)', () => {
  it('is off, and an active context gives nothing to store', () => {
    expect(isTracing()).toBe(false);
    expect(currentTraceContext()).toEqual({ traceparent: null, tracestate: null });
  });

  it('inSpan and inContext only call the function', async () => {
    const seen: unknown[] = [];
    await expect(inSpan('x', {}, async (span) => (seen.push(span), 7))).resolves.toBe(7);
    expect(seen).toEqual([undefined]);
    expect(inContext({ traceparent: TRACEPARENT, tracestate: null }, () => 8)).toBe(8);
    await expect(inSpan('x', {}, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
  });

  it("writes BullMQ's job metadata as bullmq-otel does: the propagation carrier as JSON", () => {
    expect(bullMetadata({ traceparent: TRACEPARENT, tracestate: null })).toBe(JSON.stringify({ traceparent: TRACEPARENT }));
    expect(bullMetadata({ traceparent: TRACEPARENT, tracestate: 'a=1' })).toBe(JSON.stringify({ traceparent: TRACEPARENT, tracestate: 'a=1' }));
    expect(bullMetadata({ traceparent: null, tracestate: null })).toBeUndefined();
    expect(bullMetadata(undefined)).toBeUndefined();
  });

  it('an empty carried context leaves the active context as it is', () => {
    expect(contextFrom(null)).toBeDefined();
  });
});

describe('requests not traced', () => {
  it('are the health probes and the Prometheus scrapes, nothing else', () => {
    expect(['/health/live', '/health/ready', '/metrics', '/metrics?x=1', '/health'].filter((p) => !UNTRACED_PATHS.test(p))).toEqual([]);
    expect(['/v1/me', '/healthy', '/v1/metrics', '/invitations/accept', '/console'].filter((p) => UNTRACED_PATHS.test(p))).toEqual([]);
  });
});
