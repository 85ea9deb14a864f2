'use strict';
// Which translation engine `npm run dev` gives the api and the worker when none is configured.
// A demo whose documents all end `failed` shows nothing of what the documents calls are for, so with
// TRANSLATION_ENGINE unset (in the environment and in .env) dev uses Apertium, the one engine that
// runs on this machine with no account and no server: the `apertium` command and its English ⇄ Spanish
// pair, Debian packages that dev installs itself when it runs as root (as the test command does).
// An explicit TRANSLATION_ENGINE, `none` included, is always kept.
const { spawnSync } = require('node:child_process');

/** The Debian packages that give the demo its engine, and the pair the demo's examples use. */
const APERTIUM_PACKAGES = ['apertium', 'apertium-eng-spa'];
const DEMO_PAIR = 'eng-spa';

/** The pairs `apertium -l` lists, or null when the command is not installed. */
function apertiumPairs(command = 'apertium') {
  const r = spawnSync(command, ['-l'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) return null;
  return r.stdout.split(/\s+/).filter(Boolean);
}

function canInstallPackages() {
  return process.getuid?.() === 0 && spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status === 0;
}

function installApertium(say) {
  say(`installing Apertium for the demo's translations (apt-get install ${APERTIUM_PACKAGES.join(' ')})…`);
  const run = spawnSync('sh', ['-c', `apt-get update -qq && apt-get install -y -qq --no-install-recommends ${APERTIUM_PACKAGES.join(' ')}`], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  return run.status === 0;
}

/**
 * Sets env.TRANSLATION_ENGINE for the dev run and says why in one line. Returns what the banner
 * shows: `{ engine, note }`.
 */
function chooseDevTranslation(env, { say, pairs = apertiumPairs, canInstall = canInstallPackages, install = installApertium } = {}) {
  if (env.TRANSLATION_ENGINE !== undefined && env.TRANSLATION_ENGINE !== '') {
    return { engine: env.TRANSLATION_ENGINE, note: 'set by TRANSLATION_ENGINE' };
  }
  let found = pairs();
  if (!found?.includes(DEMO_PAIR) && canInstall()) {
    if (install(say)) found = pairs();
  }
  if (found?.includes(DEMO_PAIR)) {
    env.TRANSLATION_ENGINE = 'apertium';
    return { engine: 'apertium', note: `the apertium command (pairs: ${found.join(', ')})` };
  }
  env.TRANSLATION_ENGINE = 'none';
  return {
    engine: 'none',
    note: `Apertium is not installed, so documents end \`failed\`: apt-get install ${APERTIUM_PACKAGES.join(' ')} (as root), or set TRANSLATION_ENGINE`,
  };
}

module.exports = { chooseDevTranslation, apertiumPairs, APERTIUM_PACKAGES, DEMO_PAIR };
