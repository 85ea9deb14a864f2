import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** The installation's `console` secret (server_secrets, made by a migration): keys the CSRF tokens. Read once. */
@Injectable()
export class ConsoleSecret {
  private key?: Promise<Buffer>;

  constructor(private readonly dataSource: DataSource) {}

  get(): Promise<Buffer> {
    this.key ??= this.load().catch((err: unknown) => {
      this.key = undefined;
      throw err;
    });
    return this.key;
  }

  private async load(): Promise<Buffer> {
    const rows: Array<{ secret: Buffer }> = await this.dataSource.query(`SELECT secret FROM server_secrets WHERE name = 'console'`);
    if (!rows[0]) throw new Error('server_secrets has no "console" row: run the migrations.');
    return rows[0].secret;
  }
}
