// Where the benches live and write: the checkout (every child's working directory), each bench's
// scratch directory under .data/, and the results directory.
'use strict';
const path = require('node:path');

/** The checkout: the working directory of every child, of the admin CLI and of swc. */
const root = path.resolve(__dirname, '..', '..');

/** A bench's scratch directory (certificates, logs, its own builds): `.data/<name>`. */
const workDir = (name) => path.join(root, '.data', name);

/** Where results are written: bench/results/, or BENCH_RESULTS_DIR (a quick run's results kept apart). */
const resultsDir = () => path.resolve(root, process.env.BENCH_RESULTS_DIR || path.join('bench', 'results'));

module.exports = { root, workDir, resultsDir };
