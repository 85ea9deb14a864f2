/** The platform's permission codes that rules of this service name (a group holds codes; see the groups feature). */

/** The code that lets a person manage people and groups (guarded by last_people_manager). */
export const PEOPLE_MANAGE = 'people.manage';
/** Owners can do everything, so they count as people managers too. */
export const ORGANISATION_OWN = 'organisation.own';
/** People whose group holds this code are the organisation's integration managers. */
export const INTEGRATIONS_MANAGE = 'integrations.manage';
