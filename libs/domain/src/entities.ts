import { ApiKeyEntity } from './connections/api-key.entity';
import { ConnectionEntity } from './connections/connection.entity';
import { OrganisationEntity } from './organisations/organisation.entity';
import { PolicyVersionEntity } from './organisations/policy-version.entity';

/** Every TypeORM entity, for the one data source. */
export const ENTITIES = [OrganisationEntity, PolicyVersionEntity, ConnectionEntity, ApiKeyEntity];
