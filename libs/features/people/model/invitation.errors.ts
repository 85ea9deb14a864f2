import { DomainError } from '@kernel/core';

/** Why an invitation cannot be answered. */
export type InvitationClosedReason = 'unknown' | 'withdrawn' | 'accepted' | 'expired';

const MESSAGES: Record<InvitationClosedReason, string> = {
  unknown: 'No such invitation. Check that the link was copied whole.',
  withdrawn: 'This invitation was withdrawn by the organisation.',
  accepted: 'This invitation has already been accepted.',
  expired: 'This invitation has expired. Ask the organisation to invite you again.',
};

/**
 * An invitation that cannot be accepted. It is not_found to the API (withdrawing a closed
 * invitation names no pending one); the accept page tells the reasons apart (404 or 410).
 */
export class InvitationClosedError extends DomainError {
  constructor(readonly reason: InvitationClosedReason) {
    super('not_found', MESSAGES[reason]);
  }
}
