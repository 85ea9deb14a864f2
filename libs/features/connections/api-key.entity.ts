import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A connection's key. Only its SHA-256 and last four characters are kept. */
@Entity({ name: 'api_keys' })
export class ApiKeyEntity {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id: string;

  @Column({ name: 'connection_id', type: 'bigint' })
  connectionId: string;

  @Column({ name: 'key_hash', type: 'char', length: 64 })
  keyHash: string;

  @Column({ name: 'last_four', type: 'char', length: 4 })
  lastFour: string;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'last_used_at', type: 'timestamptz', precision: 3, nullable: true })
  lastUsedAt: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', precision: 3, nullable: true })
  revokedAt: Date | null;
}
