import { ApiIdParam } from '@web/http';

/** `{id}` of the group routes. */
export const ApiGroupId = () => ApiIdParam('group');
