import { ApiParam } from '@nestjs/swagger';

/** `{id}` of the group routes. */
export const ApiGroupId = () => ApiParam({ name: 'id', description: 'Id of the group.', schema: { type: 'string', pattern: '^[0-9]+$' } });
