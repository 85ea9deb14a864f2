import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { CursorPosition, decodeCursor, encodeCursor } from '@kernel/core';

/** The row of server_secrets whose bytes sign cursors. */
export const CURSOR_SECRET_NAME = 'cursor';

/**
 * Signs and verifies list cursors with the installation's cursor secret: random bytes made by
 * Postgres when the CursorSecret migration ran, so every replica and process (api, worker, admin
 * CLI) that reads the database has the same key, with nothing to configure. Read once per
 * process, on first use (the admin CLI's `migrate` must start before the table exists).
 */
@Injectable()
export class CursorCodec {
  private key?: Promise<Buffer>;

  constructor(private readonly dataSource: DataSource) {}

  async encode(p: CursorPosition): Promise<string> {
    return encodeCursor(p, await this.secret());
  }

  /** The position of a cursor this installation issued; anything else is 400 invalid_request. */
  async decode(cursor: string): Promise<CursorPosition> {
    return decodeCursor(cursor, await this.secret());
  }

  private secret(): Promise<Buffer> {
    this.key ??= this.load().catch((err: unknown) => {
      this.key = undefined; // tried again on the next call (e.g. after a database outage)
      throw err;
    });
    return this.key;
  }

  private async load(): Promise<Buffer> {
    const rows: Array<{ secret: Buffer }> = await this.dataSource.query(`SELECT secret FROM server_secrets WHERE name = $1`, [CURSOR_SECRET_NAME]);
    if (!rows[0]) throw new Error(`server_secrets has no "${CURSOR_SECRET_NAME}" row: run the migrations.`);
    return rows[0].secret;
  }
}
