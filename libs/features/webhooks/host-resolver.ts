import { Injectable } from '@nestjs/common';
import { lookup } from 'node:dns/promises';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Name lookups give up after this long (the attempt then fails; creation accepts the name). */
export const RESOLVE_TIMEOUT_MS = 5000;

/**
 * Looks a webhook's host name up: every address the system resolver answers, in its order.
 * The one seam where tests make a name resolve somewhere else (spy on `resolve`).
 */
@Injectable()
export class HostResolver {
  async resolve(hostname: string): Promise<ResolvedAddress[]> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error(`lookup of ${hostname} timed out`), { code: 'ETIMEOUT' })), RESOLVE_TIMEOUT_MS);
    });
    try {
      const found = await Promise.race([lookup(hostname, { all: true, verbatim: true }), timeout]);
      return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
    } finally {
      clearTimeout(timer);
    }
  }
}
