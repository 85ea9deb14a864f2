import { CaseEntity } from './cases/case.entity';
import { ApiKeyEntity } from './connections/api-key.entity';
import { ConnectionEntity } from './connections/connection.entity';
import { ConversationEntity } from './conversations/conversation.entity';
import { FactEntity } from './conversations/fact.entity';
import { SummaryEntity } from './conversations/summary.entity';
import { TurnEntity } from './conversations/turn.entity';
import { GroupEntity } from './groups/group.entity';
import { OrganisationDomainEntity } from './organisations/organisation-domain.entity';
import { OrganisationEntity } from './organisations/organisation.entity';
import { PolicyVersionEntity } from './organisations/policy-version.entity';
import { InvitationEntity } from './people/invitation.entity';
import { PersonEntity } from './people/person.entity';
import { PermissionEntity } from './permissions/permission.entity';
import { WebhookDeliveryAttemptEntity } from './webhooks/webhook-delivery-attempt.entity';
import { WebhookDeliveryEntity } from './webhooks/webhook-delivery.entity';
import { WebhookEntity } from './webhooks/webhook.entity';

/** Every TypeORM entity, for the one data source. */
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
