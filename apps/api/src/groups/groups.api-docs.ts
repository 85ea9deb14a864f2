import { ApiIdParam } from '../common/id-docs';

/** `{id}` of the group routes. */
export const ApiGroupId = () => ApiIdParam('group');
