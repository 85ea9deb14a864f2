import { Foundation1763750000000 } from './1763750000000-Foundation';
import { Organisation1763760000000 } from './1763760000000-Organisation';
import { Webhooks1763770000000 } from './1763770000000-Webhooks';
import { Scim1763780000000 } from './1763780000000-Scim';
import { Documents1763790000000 } from './1763790000000-Documents';
import { DocumentIntake1763800000000 } from './1763800000000-DocumentIntake';
import { CursorSecret1764010000000 } from './1764010000000-CursorSecret';
import { ScimAttributes1764020000000 } from './1764020000000-ScimAttributes';
import { ScimGroupClaims1764020100000 } from './1764020100000-ScimGroupClaims';
import { IdempotencyClaims1764030000000 } from './1764030000000-IdempotencyClaims';
import { ConsoleAccess1764100000000 } from './1764100000000-ConsoleAccess';
import { DeliveryLogFilters1764110000000 } from './1764110000000-DeliveryLogFilters';
import { TraceContext1764140000000 } from './1764140000000-TraceContext';
import { DeliveryAttemptsOnce1764150000000 } from './1764150000000-DeliveryAttemptsOnce';
import { DocumentOriginalChunks1764160000000 } from './1764160000000-DocumentOriginalChunks';
import { DeliveryExchange1764170000000 } from './1764170000000-DeliveryExchange';
import { WebhookPreviousSecret1764180000000 } from './1764180000000-WebhookPreviousSecret';
import { SwitchOffWarnings1764180500000 } from './1764180500000-SwitchOffWarnings';
import { ProvisioningEvents1764240000000 } from './1764240000000-ProvisioningEvents';
import { ScimPagingStatistics1764260000000 } from './1764260000000-ScimPagingStatistics';
import { SyncHorizon1764270000000 } from './1764270000000-SyncHorizon';

export { CHANNELS } from './channels';

/** Listed explicitly (not globbed) so the same list works from dist/, jest and the CLI. */
export const MIGRATIONS = [
  Foundation1763750000000,
  Organisation1763760000000,
  Webhooks1763770000000,
  Scim1763780000000,
  Documents1763790000000,
  DocumentIntake1763800000000,
  CursorSecret1764010000000,
  ScimAttributes1764020000000,
  ScimGroupClaims1764020100000,
  IdempotencyClaims1764030000000,
  ConsoleAccess1764100000000,
  DeliveryLogFilters1764110000000,
  TraceContext1764140000000,
  DeliveryAttemptsOnce1764150000000,
  DocumentOriginalChunks1764160000000,
  DeliveryExchange1764170000000,
  WebhookPreviousSecret1764180000000,
  SwitchOffWarnings1764180500000,
  ProvisioningEvents1764240000000,
  ScimPagingStatistics1764260000000,
  SyncHorizon1764270000000,
];
