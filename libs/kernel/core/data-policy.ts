/**
 * The integrations data policy rule, written once. The current version is the newest published
 * one, 1 before any is published; an organisation has accepted the policy when it accepted that
 * version or a later one. Until then its keys answer module_off and its deliveries are given up.
 */
export const CURRENT_POLICY_VERSION_SQL = '(SELECT COALESCE(max(version), 1) FROM integration_policy_versions)';

export const policyAccepted = (acceptedVersion: number | null, currentVersion: number): boolean =>
  acceptedVersion !== null && acceptedVersion >= currentVersion;
