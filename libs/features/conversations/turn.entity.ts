import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** One utterance, in the speaker's language and translated into the other. */
@Entity({ name: 'turns' })
export class TurnEntity {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id: string;

  @Column({ name: 'conversation_id', type: 'char', length: 32 })
  conversationId: string;

  /** 1-based position in the conversation. */
  @Column({ type: 'int' })
  seq: number;

  @Column({ type: 'text' })
  speaker: string;

  @Column({ type: 'text' })
  language: string;

  @Column({ type: 'text' })
  text: string;

  @Column({ name: 'translation_language', type: 'text' })
  translationLanguage: string;

  @Column({ type: 'text' })
  translation: string;

  @Column({ name: 'spoken_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  spokenAt: Date;
}
