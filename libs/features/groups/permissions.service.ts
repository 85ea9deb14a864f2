import { Injectable } from '@nestjs/common';
import { DomainError } from '@kernel/core';
import { TransactionHost } from '@kernel/database';
import { PermissionEntity } from './permission.entity';

/**
 * The permission catalogue and the rules for changing a group's codes through the API:
 * an unknown code answers 422 unknown_permission; adding or removing a code that is not
 * grantable (integrations.manage, organisation.own) answers 403 permission_not_grantable,
 * so a connection can neither escalate nor strip an owner.
 */
@Injectable()
export class PermissionsService {
  constructor(private readonly tx: TransactionHost) {}

  list(): Promise<PermissionEntity[]> {
    return this.tx.manager.getRepository(PermissionEntity).find({ order: { position: 'ASC' } });
  }

  /** Throws unknown_permission for codes not in the catalogue; returns them sorted, deduplicated. */
  async known(codes: string[]): Promise<string[]> {
    const catalogue = new Map((await this.list()).map((p) => [p.code, p]));
    const unknown = [...new Set(codes)].filter((c) => !catalogue.has(c));
    if (unknown.length > 0) {
      throw new DomainError('unknown_permission', `Unknown permission code(s): ${unknown.join(', ')}. GET /v1/permissions lists them.`);
    }
    return [...new Set(codes)].sort();
  }

  /**
   * Validates a change of a group's codes from `before` to `after` made through the API and
   * returns `after` normalised.
   */
  async checkChange(before: string[], after: string[]): Promise<string[]> {
    const next = await this.known(after);
    const catalogue = new Map((await this.list()).map((p) => [p.code, p]));
    const changed = [...next.filter((c) => !before.includes(c)), ...before.filter((c) => !next.includes(c))];
    const locked = changed.filter((c) => catalogue.get(c)?.grantable === false);
    if (locked.length > 0) {
      throw new DomainError('permission_not_grantable', `The permission(s) ${locked.join(', ')} cannot be granted or removed through the API.`);
    }
    return next;
  }

  /** Throws permission_not_grantable when `codes` hold a code the API may not grant. */
  async assertGrantable(codes: string[], what: string): Promise<void> {
    const catalogue = new Map((await this.list()).map((p) => [p.code, p]));
    const locked = codes.filter((c) => catalogue.get(c)?.grantable === false);
    if (locked.length > 0) {
      throw new DomainError('permission_not_grantable', `${what} carries ${locked.join(', ')}, which cannot be granted through the API.`);
    }
  }
}
