import { CaseEntity } from '../case.entity';
import { CaseDto } from './dto/case.dto';

export function presentCase(c: CaseEntity): CaseDto {
  return {
    id: c.id,
    external_ref: c.externalRef,
    title: c.title,
    group_id: c.groupId,
    status: c.status,
    closed_at: c.closedAt?.toISOString() ?? null,
    created_at: c.createdAt.toISOString(),
    updated_at: c.updatedAt.toISOString(),
  };
}
