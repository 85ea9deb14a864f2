/**
 * Holds every call of `target[method]` inside the method until `release()`: `inside` settles
 * when the first call has entered, so a test can act while a request is provably in flight.
 * The spy is jest's; `jest.restoreAllMocks()` (or the spec's own restore) removes it.
 */
export function holdInside<T extends object, K extends keyof T>(target: T, method: K): { inside: Promise<void>; release: () => void } {
  const real = (target[method] as (...args: unknown[]) => unknown).bind(target);
  let entered!: () => void;
  const inside = new Promise<void>((r) => (entered = r));
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  jest.spyOn(target, method as never).mockImplementation((async (...args: unknown[]) => {
    entered();
    await gate;
    return real(...args);
  }) as never);
  return { inside, release };
}
