import { DomainError } from '@kernel/core';

const mib = (bytes: number) => `${Math.round((bytes / 1048576) * 10) / 10} MB`;

/** 413: the file is over DOCUMENT_MAX_FILE_BYTES (refused while it streams in). */
export const fileTooLarge = (maxBytes: number): DomainError =>
  new DomainError('file_too_large', `The file is larger than the limit of ${maxBytes} bytes (${mib(maxBytes)}).`);

/** 413: the text is over DOCUMENT_MAX_TEXT_CHARS characters. */
export const textTooLong = (maxChars: number): DomainError => new DomainError('text_too_long', `The text is longer than the limit of ${maxChars} characters.`);

/** 415: the file's content (and name) is not one of the supported formats. */
export const fileTypeNotSupported = (reason: string): DomainError => new DomainError('file_type_not_supported', reason);
