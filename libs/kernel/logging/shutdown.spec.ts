import { holdStopSignals } from './shutdown';

describe('holdStopSignals', () => {
  afterEach(() => jest.restoreAllMocks());

  it('keeps a SIGTERM that arrives while the app starts, and sends it again once released', () => {
    const kill = jest.spyOn(process, 'kill').mockImplementation(() => true);
    const before = process.listenerCount('SIGTERM');
    const release = holdStopSignals();
    expect(process.listenerCount('SIGTERM')).toBe(before + 1); // the default (exit) no longer applies
    process.emit('SIGTERM', 'SIGTERM');
    expect(kill).not.toHaveBeenCalled();
    release();
    expect(process.listenerCount('SIGTERM')).toBe(before);
    expect(kill).toHaveBeenCalledWith(process.pid, 'SIGTERM');
  });

  it('sends nothing when no signal came', () => {
    const kill = jest.spyOn(process, 'kill').mockImplementation(() => true);
    holdStopSignals()();
    expect(kill).not.toHaveBeenCalled();
  });
});
