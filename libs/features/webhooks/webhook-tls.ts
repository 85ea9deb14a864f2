import { Injectable } from '@nestjs/common';

/**
 * TLS trust for webhook deliveries. Certificates are always verified; by default against Node's
 * CA store (plus NODE_EXTRA_CA_CERTS, which is how an operator trusts an internal CA). Tests set
 * `ca` to their receiver's self-signed certificate. Changing it drops pooled connections.
 */
@Injectable()
export class WebhookTls {
  private caValue?: string | Buffer;
  private generationValue = 0;

  get ca(): string | Buffer | undefined {
    return this.caValue;
  }

  set ca(value: string | Buffer | undefined) {
    this.caValue = value;
    this.generationValue++;
  }

  /** Bumped on every change, so connection pools made with older settings are not reused. */
  get generation(): number {
    return this.generationValue;
  }
}
