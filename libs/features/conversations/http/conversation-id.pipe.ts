import { Injectable, PipeTransform } from '@nestjs/common';
import { notFound } from '@kernel/core';

/** A conversation id is 32 lowercase hex characters; anything else names no conversation (404). */
@Injectable()
export class ConversationIdPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!/^[0-9a-f]{32}$/.test(value)) throw notFound('conversation');
    return value;
  }
}
