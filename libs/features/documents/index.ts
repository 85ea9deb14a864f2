/**
 * Documents sent for translation: the upload edge, formats and segmentation (model/), the engines,
 * the intake and the translation worker. The only door to this feature from outside it.
 */
export * from './document-intake.service';
export * from './document-translator.service';
export * from './documents.module';
export * from './documents.service';
export * from './engines/apertium.engine';
export * from './engines/deepl.engine';
export * from './engines/engine-http';
export * from './engines/engine.factory';
export * from './engines/libretranslate.engine';
export * from './engines/no-engine';
export * from './engines/translation-engine';
export * from './model/document-file';
export * from './model/document.record';
export * from './model/documents.errors';
export * from './model/documents.options';
export * from './model/formats/document-format';
export * from './model/formats/format-handlers';
export * from './model/languages';
export * from './model/segmentation';
export * from './model/sniff';
export * from './original-copy';
export * from './translation-queue';
