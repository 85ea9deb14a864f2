import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A fact recorded during a conversation (e.g. "date of birth": "1984-03-02"). */
@Entity({ name: 'facts' })
export class FactEntity {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id: string;

  @Column({ name: 'conversation_id', type: 'char', length: 32 })
  conversationId: string;

  @Column({ type: 'text' })
  label: string;

  @Column({ type: 'text' })
  value: string;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  createdAt: Date;
}
