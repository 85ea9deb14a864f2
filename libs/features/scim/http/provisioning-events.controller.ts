import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal, RequireScopes } from '@web/auth';
import { ApiData, timeRange } from '@web/http';
import { ProvisioningEvent, ProvisioningLogService } from '../provisioning-log.service';
import { ProvisioningEventDto, ProvisioningEventListQueryDto } from './dto/provisioning-event.dto';

/** The rules of GET /v1/provisioning-events, as the operation's description. */
export const LIST_PROVISIONING_EVENTS_RULES = `
The provisioning log of the caller's organisation: every SCIM request that changed a User or a Group (POST, PUT, PATCH, DELETE
under \`/scim/v2/Users\` and \`/scim/v2/Groups\`), and every SCIM request refused with a 4xx, reads included, whichever connection
made it. Not logged: a 401 (the key is unknown, so no connection is), a 429 (the rate limit), and reads and searches that
succeeded. Newest first, cursor-paginated like every list: \`limit\` and \`cursor\`, and the answer's \`next_cursor\` (null on
the last page). Repeat the same filters with each cursor. Scope \`users:read\`; only the caller's organisation's events.

Filters, all optional and combined: \`outcome\` (\`succeeded\`, \`refused\`); \`resource_type\` (\`User\`, \`Group\`, \`other\`);
\`since\` and \`until\`, ISO 8601 times with an offset (at or after \`since\`, before \`until\`). A bad filter, or an \`until\` not
later than \`since\`, answers 400 \`invalid_request\`.

Each event says when, which connection, the identity provider as far as the User-Agent tells, the operation, the resource and
its id, the outcome and status, the SCIM \`scimType\` and \`detail\` of a refusal, and what a write changed: attributes old → new
(never a password) and, for groups, the members added and removed. Events are kept 90 days.
`.trim();

export const presentProvisioningEvent = (e: ProvisioningEvent): ProvisioningEventDto => ({
  id: e.id,
  occurred_at: e.occurredAt.toISOString(),
  connection_id: e.connectionId,
  connection_name: e.connectionName,
  identity_provider: e.identityProvider,
  user_agent: e.userAgent,
  operation: e.operation,
  resource_type: e.resourceType,
  resource_id: e.resourceId,
  outcome: e.outcome,
  status: e.status,
  scim_type: e.scimType,
  detail: e.detail,
  changes: e.changes,
  request_id: e.requestId,
});

/** The provisioning log over REST: a new path beside the contract's, confined to the caller's organisation. */
@ApiTags('Provisioning')
@Controller('v1/provisioning-events')
@RequireScopes('users:read')
export class ProvisioningEventsController {
  constructor(private readonly log: ProvisioningLogService) {}

  @Get()
  @ApiOperation({
    operationId: 'listProvisioningEvents',
    summary: 'List the provisioning log (SCIM changes and refusals)',
    description: LIST_PROVISIONING_EVENTS_RULES,
  })
  @ApiData(ProvisioningEventDto, { list: true })
  async list(
    @CurrentPrincipal() p: Principal,
    @Query() query: ProvisioningEventListQueryDto,
  ): Promise<{ data: ProvisioningEventDto[]; next_cursor: string | null }> {
    const page = await this.log.list(
      p.organisationId,
      { limit: query.limit, cursor: query.cursor },
      { outcome: query.outcome, resourceType: query.resource_type, ...timeRange(query.since, query.until) },
    );
    return { data: page.items.map(presentProvisioningEvent), next_cursor: page.nextCursor };
  }
}
