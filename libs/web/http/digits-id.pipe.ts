import { Injectable, PipeTransform } from '@nestjs/common';
import { isId, notFound } from '@kernel/core';

/** Ids are strings of digits as answered (no leading zero); anything else names no object, so it answers 404. */
@Injectable()
export class DigitsIdPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!isId(value)) throw notFound();
    return value;
  }
}
