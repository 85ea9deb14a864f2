// The generated client names BodyInit, a type of the DOM library; in Node it is the global fetch's
// (undici's), so the SDK compiles without the DOM library.
declare global {
  type BodyInit = import('undici-types').BodyInit;
}

export {};
