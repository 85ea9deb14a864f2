import type { InvitationEntity } from '../invitation.entity';
import type { PersonEntity } from '../person.entity';
import { InvitationDto } from './dto/invitation.dto';
import { PersonDto } from './dto/person.dto';

export function presentPerson(p: PersonEntity): PersonDto {
  return {
    id: p.id,
    email: p.email,
    name: p.name,
    job_title: p.jobTitle,
    group_id: p.groupId,
    disabled: p.disabled,
    // Members always have joined_at; created_at stands in for an account seeded without one.
    joined_at: (p.joinedAt ?? p.createdAt).toISOString(),
    created_at: p.createdAt.toISOString(),
    updated_at: p.updatedAt.toISOString(),
  };
}

/**
 * `now` decides whether a pending invitation is shown `expired`; passing `expires_at` is a change
 * of the invitation, so updated_at is then at least `expires_at` (with the same `now`).
 */
export function presentInvitation(i: InvitationEntity, now = new Date()): InvitationDto {
  const expired = i.status === 'pending' && i.expiresAt <= now;
  return {
    id: i.id,
    email: i.email,
    name: i.name,
    job_title: i.jobTitle,
    group_id: i.groupId,
    status: expired ? 'expired' : i.status,
    created_at: i.createdAt.toISOString(),
    expires_at: i.expiresAt.toISOString(),
    updated_at: (expired && i.expiresAt > i.updatedAt ? i.expiresAt : i.updatedAt).toISOString(),
  };
}
