/** Tunables of the documents feature that are not (yet) settings of their own. */
export interface DocumentsOptions {
  /**
   * Attempts of a translation job and the first backoff delay (doubling after each failure).
   * Default: 6 attempts, 15 s → 15, 30, 60, 120, 240 s between them (about 8 minutes in all).
   */
  retry?: { attempts: number; backoffMs: number };
  /** A document still queued this long after it was sent is queued again (its job was lost). Default 5 minutes. */
  requeueAfterMs?: number;
}

export const DOCUMENTS_OPTIONS = Symbol('DOCUMENTS_OPTIONS');

export const DEFAULT_DOCUMENTS_OPTIONS: Required<DocumentsOptions> = {
  retry: { attempts: 6, backoffMs: 15_000 },
  requeueAfterMs: 5 * 60_000,
};
