import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'summaries' })
export class SummaryEntity {
  @PrimaryColumn({ name: 'conversation_id', type: 'char', length: 32 })
  conversationId: string;

  @Column({ type: 'text' })
  text: string;

  /** 1 when first written, +1 on every rewrite. */
  @Column({ type: 'int', default: 1 })
  revision: number;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  updatedAt: Date;
}
