// The code under test, as the benches see it: a dist directory built from apps/ and libs/. Every
// module a bench requires from a build goes through `built(dist)`, every app it spawns through
// `entry(dist, app)`; SYMBOLS and ENTRIES below are the only places that know where the compiled
// modules lie, so moving the sources means editing these two tables and nothing else.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { root } = require('./paths');

/** Each name a bench takes from a build → the module, relative to the dist directory, that exports it. */
const SYMBOLS = {
  // the kernel: configuration, database, queues, logging, cursors signed as the api signs them, mail
  AppConfig: 'libs/kernel/config',
  dataSourceOptions: 'libs/kernel/database',
  QUEUES: 'libs/kernel/queue',
  TRANSLATION_JOBS: 'libs/kernel/queue',
  bullConnection: 'libs/kernel/queue',
  bullPrefix: 'libs/kernel/queue',
  installGracefulShutdown: 'libs/kernel/logging',
  encodeCursor: 'libs/kernel/core',
  CURSOR_SECRET_NAME: 'libs/kernel/database',
  Mailer: 'libs/kernel/mail',
  // features, through their doors (a feature's, or one of its edges')
  WebhooksModule: 'libs/features/webhooks',
  WebhooksWorkerModule: 'libs/features/webhooks/worker',
  WebhooksConsoleModule: 'libs/features/webhooks/console',
  CasesHttpModule: 'libs/features/cases/http',
  LibreTranslateEngine: 'libs/features/documents',
  TranslationQueue: 'libs/features/documents',
  TranslationProcessor: 'libs/features/documents/worker',
  // the apps' composition roots
  ApiModule: 'apps/api/src/api.module',
  createApiApp: 'apps/api/src/bootstrap',
  WorkerModule: 'apps/worker/src/worker.module',
};

/** The apps' entry points, started as processes. */
const ENTRIES = {
  api: 'apps/api/src/main.js',
  worker: 'apps/worker/src/main.js',
  admin: 'apps/admin/src/main.js',
};

/** The dist directory a bench runs: `$variable` (relative to the checkout) if set, else `fallback`. */
const distFrom = (variable = 'BENCH_DIST', fallback = 'dist') => path.resolve(root, process.env[variable] || fallback);

/** The file of `app`'s entry point in `dist`. */
function entry(dist, app) {
  if (!ENTRIES[app]) throw new Error(`no entry point named ${app} in bench/harness/built.js`);
  return path.join(dist, ENTRIES[app]);
}

/**
 * The built code of `dist` by name: `const { AppConfig, ApiModule } = built(dist)` requires the
 * modules that export them (and only those), and fails loudly when a name is not in SYMBOLS or
 * the module no longer exports it.
 */
function built(dist) {
  const out = {};
  for (const name of Object.keys(SYMBOLS)) {
    Object.defineProperty(out, name, {
      enumerable: true,
      get() {
        const value = require(path.join(dist, SYMBOLS[name]))[name];
        if (value === undefined) throw new Error(`${path.join(dist, SYMBOLS[name])} exports no ${name}: update SYMBOLS in bench/harness/built.js`);
        return value;
      },
    });
  }
  return new Proxy(out, {
    get(target, name) {
      if (typeof name === 'string' && !(name in target)) throw new Error(`${name} is not in SYMBOLS (bench/harness/built.js)`);
      return target[name];
    },
  });
}

/** Whether `dist` holds the file behind `name` (an entry point or a name of SYMBOLS). */
function holds(dist, name) {
  const rel = ENTRIES[name] ?? SYMBOLS[name];
  if (!rel) throw new Error(`${name} is neither in ENTRIES nor in SYMBOLS (bench/harness/built.js)`);
  const file = path.join(dist, rel);
  return [file, `${file}.js`, path.join(file, 'index.js')].some((f) => fs.existsSync(f) && fs.statSync(f).isFile());
}

/** Fails unless every dist of `dists` holds each of `names` (entry points or SYMBOLS): a missing or an older build. */
function requireBuilds(dists, names) {
  for (const dist of dists.filter(Boolean)) {
    for (const name of names) {
      if (!holds(dist, name)) throw new Error(`${dist} has no ${name}: run \`npm run build\` first (or point BENCH_DIST at a build)`);
    }
  }
}

/** Compiles apps/ and libs/ into `dist` as `npm run build` does: a build of the bench's own that `npm run build` cannot pull from under a run. */
function buildInto(dist) {
  require('../../scripts/build').buildInto(dist);
}

module.exports = { SYMBOLS, ENTRIES, built, buildInto, distFrom, entry, requireBuilds };
