import { Injectable, PipeTransform } from '@nestjs/common';
import { validationFailed } from '@kernel/core';

/** For calls that take no body: an absent or empty JSON object passes, anything else is refused. */
@Injectable()
export class NoBodyPipe implements PipeTransform<unknown, undefined> {
  transform(value: unknown): undefined {
    const empty = value === undefined || value === null || (typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0);
    if (!empty) throw validationFailed('body', 'this call takes no body');
    return undefined;
  }
}
