import { CaseEntity } from '@features/cases';
import { ApiKeyEntity, ConnectionEntity } from '@features/connections';
import { ConversationEntity, FactEntity, SummaryEntity, TurnEntity } from '@features/conversations';
import { GroupEntity, PermissionEntity } from '@features/groups';
import { OrganisationDomainEntity, OrganisationEntity, PolicyVersionEntity } from '@features/organisations';
import { InvitationEntity, PersonEntity } from '@features/people';
import { WebhookDeliveryAttemptEntity, WebhookDeliveryEntity, WebhookEntity } from '@features/webhooks';

/** Every feature's TypeORM entities, for the one data source each app (and the TypeORM CLI) makes. */
export const ENTITIES = [
  OrganisationEntity,
  PolicyVersionEntity,
  OrganisationDomainEntity,
  ConnectionEntity,
  ApiKeyEntity,
  PermissionEntity,
  GroupEntity,
  PersonEntity,
  InvitationEntity,
  CaseEntity,
  ConversationEntity,
  TurnEntity,
  FactEntity,
  SummaryEntity,
  WebhookEntity,
  WebhookDeliveryEntity,
  WebhookDeliveryAttemptEntity,
];
