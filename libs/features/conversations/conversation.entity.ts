import { Column, Entity, PrimaryColumn } from 'typeorm';

export type ConversationStatus = 'active' | 'ended';

/** Made by the platform's interpreting app; the API only reads it. Id: 32 lowercase hex. */
@Entity({ name: 'conversations' })
export class ConversationEntity {
  @PrimaryColumn({ type: 'char', length: 32 })
  id: string;

  @Column({ name: 'organisation_id', type: 'bigint' })
  organisationId: string;

  @Column({ name: 'case_id', type: 'bigint' })
  caseId: string;

  @Column({ name: 'language_a', type: 'text' })
  languageA: string;

  @Column({ name: 'language_b', type: 'text' })
  languageB: string;

  @Column({ type: 'text', default: 'active' })
  status: ConversationStatus;

  @Column({ name: 'started_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  startedAt: Date;

  @Column({ name: 'ended_at', type: 'timestamptz', precision: 3, nullable: true })
  endedAt: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  createdAt: Date;

  /** Set by the database at every change it shows (a trigger): see docs/partners/sync.md. */
  @Column({ name: 'updated_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  updatedAt: Date;
}
