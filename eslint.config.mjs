// ESLint 9 flat config: typescript-eslint's recommended rules (syntactic, no type information: the
// type checker already runs in `npm run typecheck`), no import cycles, and the layout's arrows
// (docs/architecture.md): a wrong arrow fails `npm run lint`, which CI runs (.ci/run).
import js from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import { readdirSync } from 'node:fs';
import tseslint from 'typescript-eslint';

const { 'import-x/resolver': _legacyResolver, ...importXTypeScript } = importX.flatConfigs.typescript.settings;

const dirs = (group) =>
  readdirSync(`${import.meta.dirname}/libs/${group}`, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
/** The kernel's pieces (config, database, redis, …), the web kit's (http, auth, idempotency, console, openapi) and the features. */
const KERNEL = dirs('kernel');
const WEB = dirs('web');
const FEATURES = dirs('features');
/** A feature's edges, each with an index.ts of its own for the app that runs it. */
const EDGES = ['http', 'console', 'worker', 'cli'];
const others = (list, name) => list.filter((n) => n !== name);
const UNITS = [...KERNEL.map((n) => `kernel/${n}`), ...WEB.map((n) => `web/${n}`), ...FEATURES.map((n) => `features/${n}`)];
/** Every folder outside `unit` that may hold an import: the apps, the tests and every other unit. */
const outside = (unit) => ['./apps', './test', ...others(UNITS, unit).map((u) => `./libs/${u}`)];

/**
 * The arrows, as import-x/no-restricted-paths zones: `target` may not import `from` (but may the
 * `except` paths, relative to `from`). Zones work on resolved file paths, so they catch an alias
 * (`@features/webhooks`) and a relative `../../features/webhooks/webhook-url` alike.
 */
const zones = [
  // Nothing imports an app, and apps do not import each other.
  { target: './libs', from: './apps', message: 'Libraries never import an app.' },
  { target: './apps/api', from: ['./apps/worker', './apps/admin'], message: 'Apps do not import each other.' },
  { target: './apps/worker', from: ['./apps/api', './apps/admin'], message: 'Apps do not import each other.' },
  { target: './apps/admin', from: ['./apps/api', './apps/worker'], message: 'Apps do not import each other.' },
  // The kernel knows neither the web kit nor a feature; the web kit knows no feature.
  { target: './libs/kernel', from: ['./libs/web', './libs/features'], message: 'The kernel imports only the kernel.' },
  { target: './libs/web', from: './libs/features', message: 'The web kit imports the kernel and itself, never a feature.' },
  // Every unit (a piece of the kernel or the web kit, a feature) is entered by its index.ts from outside it.
  ...UNITS.map((unit) => ({
    target: unit.startsWith('features/') ? outside(unit).filter((t) => t !== './apps' && t !== './test') : outside(unit),
    from: `./libs/${unit}`,
    except: ['./index.ts'],
    message: `Use @${unit} (its index.ts), not a file inside it.`,
  })),
  // The apps (and their tests) compose a feature's edges through each edge's own index.ts
  // (@features/<name>/http, /console, /worker, /cli), so a process loads only the edges it runs.
  ...FEATURES.map((name) => ({
    target: ['./apps', './test'],
    from: `./libs/features/${name}`,
    except: ['./index.ts', ...EDGES.map((edge) => `./${edge}/index.ts`)],
    message: `Use @features/${name} or one of its edges (@features/${name}/http, /console, /worker, /cli), not a file inside it.`,
  })),
  // The list of every feature's entities is for the apps' data sources, not for a feature.
  { target: './libs/features/*/**', from: './libs/features/entities.ts', message: 'Only the apps (and the TypeORM CLI) read the entity list.' },
  // The worker and the admin CLI serve no HTTP API.
  { target: ['./apps/worker', './apps/admin'], from: ['./libs/web/http', './libs/web/auth', './libs/web/openapi'], message: 'Only the api serves HTTP.' },
];

export default tseslint.config(
  // Built or generated output, and the plain CommonJS scripts (scripts/, bench/, jest.config.js): they
  // run before any build, hold no import arrows, and the TypeScript rules would only flag their require();
  // and the SDK's generated calls, which are the generator's output as it writes it.
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.data/**', '**/*.js', '**/*.cjs', 'sdk/typescript/src/generated/**', 'sdk/typescript/dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.mjs'],
    plugins: { 'import-x': importX },
    settings: {
      // import-x's TypeScript settings (without them no-cycle parses no .ts file), resolving the tsconfig's @kernel/*, @web/* and @features/* paths.
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
    // A feature's model/ holds its pure rules, and the kernel's core the rules every unit shares: no
    // framework, no database, so their specs (and whoever imports them) load neither.
    files: ['libs/features/*/model/**/*.ts', 'libs/kernel/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['@nestjs/*', 'typeorm', 'typeorm/*'], message: 'model/ and the kernel core hold pure rules: no Nest, no TypeORM.' }] },
      ],
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
);
