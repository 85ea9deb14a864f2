// The benches' harness: everything the *.bench.js scripts share, in one require.
//   built.js      the code under test: the dist builds, the one table of built modules
//   children.js   child processes, the admin CLI, the way out
//   setup.js      dedicated database and Redis prefix, the apps' environment, certificates, ports
//   load.js       requests, autocannon, bounded loops, rates, rotating and alternating orders
//   measure.js    quantiles and medians, CPU and memory from /proc
//   stand-ins.js  the webhook receiver, the translation engine, an SMTP sink
//   results.js    the run's commit and machine, results files
'use strict';
module.exports = {
  ...require('./paths'),
  ...require('./built'),
  ...require('./children'),
  ...require('./setup'),
  ...require('./load'),
  ...require('./measure'),
  ...require('./stand-ins'),
  ...require('./results'),
};
