import { Column, Entity, PrimaryColumn } from 'typeorm';

/** The fixed catalogue of permission codes (seeded by migration). */
@Entity({ name: 'permissions' })
export class PermissionEntity {
  @PrimaryColumn({ type: 'text' })
  code: string;

  @Column({ type: 'text' })
  name: string;

  /** False for codes a connection may never grant (no escalation through the API). */
  @Column({ type: 'boolean' })
  grantable: boolean;

  @Column({ type: 'int' })
  position: number;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;
}
