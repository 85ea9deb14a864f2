import { Foundation1763750000000 } from './1763750000000-Foundation';
import { Organisation1763760000000 } from './1763760000000-Organisation';

/** Listed explicitly (not globbed) so the same list works from dist/, jest and the CLI. */
export const MIGRATIONS = [Foundation1763750000000, Organisation1763760000000];
