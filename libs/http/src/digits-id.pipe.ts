import { Injectable, PipeTransform } from '@nestjs/common';
import { notFound } from '@app/domain';

/** Ids are strings of digits; anything else names no object, so it answers 404. */
@Injectable()
export class DigitsIdPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!/^[0-9]{1,18}$/.test(value)) throw notFound();
    return value;
  }
}
