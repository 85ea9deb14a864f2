import { Foundation1763750000000 } from './1763750000000-Foundation';

/** Listed explicitly (not globbed) so the same list works from dist/, jest and the CLI. */
export const MIGRATIONS = [Foundation1763750000000];
