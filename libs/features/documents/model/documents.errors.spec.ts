import { DomainError } from '@kernel/core';
import { fileTooLarge, fileTypeNotSupported, textTooLong } from './documents.errors';

describe('documents errors', () => {
  it('fileTooLarge names the limit in bytes and in MB (one decimal)', () => {
    const err = fileTooLarge(10 * 1048576);
    expect(err).toBeInstanceOf(DomainError);
    expect(err.code).toBe('file_too_large');
    expect(err.message).toBe('The file is larger than the limit of 10485760 bytes (10 MB).');
    expect(fileTooLarge(1572864).message).toBe('The file is larger than the limit of 1572864 bytes (1.5 MB).');
    expect(fileTooLarge(1000000).message).toBe('The file is larger than the limit of 1000000 bytes (1 MB).');
    expect(fileTooLarge(100000).message).toBe('The file is larger than the limit of 100000 bytes (0.1 MB).');
  });

  it('textTooLong names the limit in characters', () => {
    const err = textTooLong(50000);
    expect(err).toBeInstanceOf(DomainError);
    expect(err.code).toBe('text_too_long');
    expect(err.message).toBe('The text is longer than the limit of 50000 characters.');
  });

  it('fileTypeNotSupported answers the reason as given', () => {
    const err = fileTypeNotSupported('A PDF is not one of the supported formats.');
    expect(err).toBeInstanceOf(DomainError);
    expect(err.code).toBe('file_type_not_supported');
    expect(err.message).toBe('A PDF is not one of the supported formats.');
  });
});
