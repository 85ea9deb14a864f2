// ESLint 9 flat config: typescript-eslint's recommended rules (syntactic, no type information: the
// type checker already runs in `npm run typecheck`), no import cycles, and the library arrows of the
// README's architecture section. A wrong arrow fails `npm run lint`, which CI runs (.ci/run).
import js from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

const { 'import-x/resolver': _legacyResolver, ...importXTypeScript } = importX.flatConfigs.typescript.settings;

/** The HTTP edge's libraries (used by apps/api only). */
const EDGE = ['auth', 'http', 'idempotency'];
/** The infrastructure below them, used by the domain and the edge alike. */
const BASE = ['config', 'database', 'events', 'logging', 'metrics', 'queue', 'redis', 'telemetry'];
/** Infrastructure libraries: they may use the kernel and each other (no cycles), never the domain or an app. */
const INFRA = [...EDGE, ...BASE];
const lib = (name) => `./libs/${name}`;

/**
 * The arrows, as import-x/no-restricted-paths zones: `target` may not import `from`. Zones work on
 * resolved file paths, so they catch an `@app/…` alias and a relative `../../domain/src/…` alike
 * (no-restricted-imports only sees the string as written).
 */
const zones = [
  // apps → domain → core/infrastructure; nothing imports an app, and apps do not import each other.
  { target: './libs', from: './apps', message: 'Libraries never import an app.' },
  { target: './apps/api', from: ['./apps/worker', './apps/admin'], message: 'Apps do not import each other.' },
  { target: './apps/worker', from: ['./apps/api', './apps/admin'], message: 'Apps do not import each other.' },
  { target: './apps/admin', from: ['./apps/api', './apps/worker'], message: 'Apps do not import each other.' },
  // The kernel depends on no other library.
  { target: lib('core'), from: './libs', except: ['./core'], message: 'libs/core is the kernel: it imports no other library.' },
  // Infrastructure never loads the domain (the TypeORM CLI's data source is the one leaf that may).
  ...INFRA.map((name) => ({
    target: lib(name),
    from: lib('domain'),
    message: 'Infrastructure libraries use @app/core, never the domain (see README, Architecture).',
  })),
  // Neither the domain nor the infrastructure below the edge knows HTTP: no guards, interceptors, filters or HTTP helpers.
  { target: [lib('domain'), ...BASE.map(lib)], from: EDGE.map(lib), message: 'Only apps/api and the edge libraries (auth, http, idempotency) know HTTP.' },
  // The worker and the admin CLI serve no HTTP API.
  { target: ['./apps/worker', './apps/admin'], from: [lib('http'), lib('auth')], message: 'Only the api serves HTTP.' },
];

export default tseslint.config(
  // Built or generated output, and the plain CommonJS scripts (scripts/, bench/, jest.config.js): they
  // run before any build, hold no import arrows, and the TypeScript rules would only flag their require().
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.data/**', '**/*.js', '**/*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.mjs'],
    plugins: { 'import-x': importX },
    settings: {
      // import-x's TypeScript settings (without them no-cycle parses no .ts file), resolving the tsconfig's @app/* paths.
      ...importXTypeScript,
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-restricted-paths': ['error', { basePath: import.meta.dirname, zones }],
      // Unused parameters named with a leading underscore are deliberate (Nest hooks, callbacks);
      // `const { secret, ...rest } = x` is how a field is left out of a copy.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
      // `catch {} // why` is used where a failure is expected and harmless (a process gone meanwhile).
      'no-empty': ['error', { allowEmptyCatch: true }],
    },
  },
  {
    files: ['test/**/*.ts', '**/*.spec.ts'],
    rules: {
      // Specs read JSON bodies of every shape; typing each one would add noise, not safety.
      '@typescript-eslint/no-explicit-any': 'off',
      // Specs load the plain-JS helpers of scripts/ (no types, run before any build) with require().
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    // The TypeORM CLI's data source (a leaf no app loads) is where the entity list meets the database library.
    files: ['libs/database/src/data-source.ts'],
    rules: { 'import-x/no-restricted-paths': ['error', { basePath: import.meta.dirname, zones: zones.filter((z) => z.target !== lib('database')) }] },
  },
);
