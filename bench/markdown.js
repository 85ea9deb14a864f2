// The Markdown of each benchmark's results, made from its report alone (the JSON it writes), so
// that a results file can be rendered again: `node bench/markdown.js <name> [results dir]` prints
// <name>.md made from <name>.json. Each function's name is the benchmark's.
'use strict';
const { breakdownMarkdown } = require('./scim-trace');

/** The documents target: under 2 MB (2,000,000 bytes) per concurrent upload, in MiB as the figures are. */
const TARGET_UPLOAD_GROWTH_MIB = 2e6 / 2 ** 20;

function me(report) {
  const { targets: t, ratios, target_met: met, settings: s, request_lines: lines } = report;
  const pct = (x) => `${Math.round(x * 100)}%`;
  const row = (label, r, vsNest, vsNode) =>
    `| ${label} | ${r.rps} | ${r.latency_ms.p50} | ${r.latency_ms.p99} | ${r.non_2xx} | ${vsNest} | ${vsNode} | ${r.cpu_us_per_request} | ${pct(t.bare_nest.cpu_us_per_request / r.cpu_us_per_request)} |`;
  return [
    `- run ${report.date} on ${report.machine.cpus} × ${report.machine.cpu_model}, node ${report.machine.node}, commit ${report.commit ?? '?'}, load average before ${report.machine.load_average_1m_before}`,
    `- ${s.connections} connections, pipelining ${s.pipelining}, HTTPS keep-alive; each target warmed up ${s.warmup_s} s, then ${s.rounds} rounds of ${s.duration_s} s per target, each cut in ${s.slice_s} s slices alternating between the targets in rotating order (one target under load at a time, load generator on the same machine); figures are medians over the rounds`,
    `- api: NODE_ENV=${s.api_node_env}, AUTH_CACHE_TTL_SECONDS=${s.auth_cache_ttl_s}, local Postgres and Redis, stdout to a file; measured at LOG_LEVEL=${s.api_log_level} (the level operators run: one JSON request line per call) and, beside it, at LOG_LEVEL=${s.api_beside_log_level} (no request lines)`,
    '',
    "| target | req/s (median of rounds) | p50 ms | p99 ms | non-2xx | vs bare Nest | vs bare node | CPU µs per request | bare Nest's CPU per request ÷ this one's |",
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    row('bare node:https', t.bare_node, pct(t.bare_node.rps / t.bare_nest.rps), '100%'),
    row('bare NestJS 11 (express, no guard)', t.bare_nest, '100%', pct(t.bare_nest.rps / t.bare_node.rps)),
    row(`**api** at ${s.api_log_level} (bearer guard + GET /v1/me + request line)`, t.api, pct(ratios.api_to_bare_nest), pct(ratios.api_to_bare_node)),
    row(`api at ${s.api_beside_log_level}`, t.api_beside, pct(ratios.api_beside_to_bare_nest), pct(t.api_beside.rps / t.bare_node.rps)),
    '',
    `api (${s.api_log_level}) ÷ bare Nest, round by round: ${ratios.api_to_bare_nest_by_round.map(pct).join(', ')}; api (${s.api_beside_log_level}) ÷ bare Nest: ${ratios.api_beside_to_bare_nest_by_round.map(pct).join(', ')}.`,
    "CPU per request is the server process's own user + system time during its slices (from /proc) over the requests it answered: the load generator and other work on the machine take CPU from whichever target is loaded, so req/s moves with them, while the CPU a request costs the server does not. Bare Nest's CPU per request ÷ a target's is the share of bare Nest's req/s it would reach with a core to itself.",
    `Request lines in the ${s.api_log_level} api's log for GET /v1/me: ${lines.logged} for ${lines.answered} answers (each one logged: ${lines.logged >= lines.answered ? 'yes' : 'NO'}; lines beyond the answers are requests still in flight when a slice's client stopped, answered and logged but not counted by it).`,
    '',
    `Target (api ≥ ${pct(report.target.min_ratio_to_bare_nest)} of bare Nest req/s and p99 < ${report.target.max_p99_ms} ms): **${met ? 'met' : 'not met'}**.`,
    '',
  ].join('\n');
}

function lists(report) {
  const s = report.settings;
  const targetRatio = report.target.max_p50_ratio;
  const [small, large] = report.sizes;
  const lines = [
    `Run ${report.date} on ${report.machine.cpus} × ${report.machine.cpu_model}, node ${report.machine.node}, commit ${report.commit ?? '?'}; load average (1 min) before measuring: ${small.load_average_1m_before} at ${small.cases.toLocaleString('en')}, ${large.load_average_1m_before} at ${large.cases.toLocaleString('en')}.`,
    `One organisation, one conversation per case; ${s.requests} sequential requests per row after ${s.warmup} warm-up, the six URLs of a size called in turn, one keep-alive HTTPS connection, limit ${s.page_size}; api NODE_ENV=${s.api_node_env}, LOG_LEVEL=${s.api_log_level}, local Postgres and Redis.`,
    `"page ${s.follow_pages}" follows next_cursor ${s.follow_pages} pages deep; "middle" starts at the middle row of the list (cursor built from a known row).`,
    '',
    `| list | page | p50 ms at ${small.cases.toLocaleString('en')} | p99 ms at ${small.cases.toLocaleString('en')} | p50 ms at ${large.cases.toLocaleString('en')} | p99 ms at ${large.cases.toLocaleString('en')} | p50 ratio | within ${targetRatio}× |`,
    '|---|---|---:|---:|---:|---:|---:|---|',
  ];
  for (const c of report.comparison) {
    lines.push(
      `| GET /v1/${c.list} | ${c.page} | ${c.small.p50_ms} | ${c.small.p99_ms} | ${c.large.p50_ms} | ${c.large.p99_ms} | ${c.p50_ratio} | ${c.within_target ? 'yes' : '**no**'} |`,
    );
  }
  lines.push('', `Data set up in ${small.insert_s} s and ${large.insert_s} s (insert + VACUUM ANALYZE).`);
  for (const list of Object.keys(report.middle_plans)) {
    const plans = report.sizes.map((z) => `${z.lists[list].middle_plan.execution_ms} ms at ${z.cases.toLocaleString('en')}`).join(', ');
    const plan = report.middle_plans[list];
    lines.push(`Middle page of ${list}: ${plan.node} on ${plan.index} (${plan.rows_removed_by_filter} rows removed by filter); time in Postgres ${plans}.`);
  }
  lines.push(
    '',
    `Target (p50 at ${large.cases.toLocaleString('en')} within ${targetRatio}× of p50 at ${small.cases.toLocaleString('en')}, every row): **${report.target_met ? 'met' : 'not met'}**.`,
    '',
  );
  return lines.join('\n');
}

function consolePage(report) {
  const s = report.settings;
  const { max_p50_ratio: targetRatio, max_p99_ms: targetP99 } = report.target;
  const pages = report.comparison.map((c) => c.page);
  const find = (phase, log, page) => phase.results.find((r) => r.log === log && r.page === page);
  const { small, large } = report.sizes;
  const n = (x) => x.toLocaleString('en');
  const both = report.phases.both;
  const paced = report.phases.paced;
  const alone = report.phases.one_session;
  const lines = [
    `Run ${report.date} on ${report.machine.cpus} × ${report.machine.cpu_model}, node ${report.machine.node}, commit ${report.commit ?? '?'}; load average (1 min) at the start: ${report.machine.load_average_1m_before}; before the closed loop: ${both.load_average_1m_before} (after: ${both.load_average_1m_after}); before the paced run: ${paced.load_average_1m_before} (after: ${paced.load_average_1m_after}). The machine (2 cores) was shared with other work while this ran${report.machine.load_average_1m_before > 2 ? ': a load average above 2 means other processes were taking CPU from the api, Postgres and the load generator' : ''}.`,
    `Two webhooks of one connection, with ${n(small)} and ${n(large)} logged deliveries (${n(small + large)} rows in webhook_deliveries, one attempt each where attempted). Their Deliveries pages (HTML, ${s.page_size} deliveries with their attempts), each signed-in session on its own HTTPS keep-alive connection calling all eight pages in turn (rotating order); api NODE_ENV=${s.api_node_env}, LOG_LEVEL=${s.api_log_level}, local Postgres and Redis; load generator on the same machine.`,
    `"deep" starts ${Math.round(s.deep_fraction * 100)}% of the way down the log (a signed cursor built from a known row, as the Older link would carry); the filtered pages are the first page of state=failed (1 in 20) and of event=user.joined (1 in 4).`,
    '',
    `**Paced (the targets): ${paced.sessions} sessions used as people use the console**, each loading a page, then pausing ${s.think_ms} ms ±${s.think_jitter * 100}% (uniform) before the next; ${paced.seconds} s measured after ${s.paced_warmup_s} s of warm-up; ${paced.pages_per_s} pages/s offered and served.`,
    '',
    `| log | pages measured | p50 ms | p99 ms | max ms |`,
    '|---|---:|---:|---:|---:|',
    ...paced.by_log.map((r) => `| ${n(r.log)} (all four pages) | ${r.requests} | ${r.p50_ms} | ${r.p99_ms} | ${r.max_ms} |`),
    '',
    `| page | p50 ms, ${n(small)} | p99 ms, ${n(small)} | p50 ms, ${n(large)} | p99 ms, ${n(large)} | p50 ratio | within ${targetRatio}× | p99 < ${targetP99} ms | one session alone: p50 ms, ${n(small)} / ${n(large)} |`,
    '|---|---:|---:|---:|---:|---:|---|---|---|',
  ];
  for (const c of report.comparison) {
    lines.push(
      `| ${c.page} | ${c.small.p50_ms} | ${c.small.p99_ms} | ${c.large.p50_ms} | ${c.large.p99_ms} | ${c.p50_ratio} | ${c.within_ratio ? 'yes' : '**no**'} | ${c.p99_met ? 'yes' : '**no**'} | ${find(alone, small, c.page).p50_ms} / ${find(alone, large, c.page).p50_ms} |`,
    );
  }
  lines.push(
    '',
    `**Closed loop (capacity): ${both.sessions} sessions without think time**, each sending its next request the moment the last answer arrives (${both.sessions} requests always in flight, the machine saturated), ${s.rounds} measured rounds after ${s.warmup_rounds} warm-up rounds: **${both.pages_per_s} pages/s**. Its latencies are mostly time spent queueing behind the other ${both.sessions - 1} requests, not the page's cost:`,
    '',
    `| page | p50 ms, ${n(small)} | p99 ms, ${n(small)} | p50 ms, ${n(large)} | p99 ms, ${n(large)} | p50 ratio |`,
    '|---|---:|---:|---:|---:|---:|',
    ...report.comparison.map(
      (c) =>
        `| ${c.page} | ${c.closed_loop.small.p50_ms} | ${c.closed_loop.small.p99_ms} | ${c.closed_loop.large.p50_ms} | ${c.closed_loop.large.p99_ms} | ${c.closed_loop.p50_ratio} |`,
    ),
  );
  const before = report.phases.small_log_alone;
  lines.push(
    '',
    `Before the large log existed, the ${n(small)}-delivery pages in the closed loop measured p50 ${pages.map((p) => find(before, small, p).p50_ms).join(' / ')} ms (${pages.join(' / ')}; load average ${before.load_average_1m_before}).`,
    `Deep page of the ${n(large)} log in Postgres: ${report.deep_plan.node} on ${report.deep_plan.index} (${report.deep_plan.rows_removed_by_filter} rows removed by filter), ${report.deep_plan.execution_ms} ms. Logs grown in ${report.insert_s.small} s and ${report.insert_s.large} s (generate_series + VACUUM ANALYZE).`,
    '',
    `Targets, read on the paced run (first and deep page p50 of the ${n(large)} log within ${targetRatio}× of the ${n(small)} log's; their p99 under ${targetP99} ms with ${s.sessions} concurrent sessions): size **${report.ratio_met ? 'met' : 'not met'}**, p99 **${report.p99_met ? 'met' : 'not met'}**.`,
    '',
  );
  return lines.join('\n');
}

function scim(r) {
  const s = r.settings;
  const fmt = (n) => n.toLocaleString('en');
  const p = r.provisioning;
  return [
    `Run ${r.date} on ${r.machine.cpus} × ${r.machine.cpu_model}, node ${r.machine.node}, commit ${r.commit ?? '?'}, load average before ${r.machine.load_average_1m_before}.`,
    `api: NODE_ENV=${s.api_node_env}, LOG_LEVEL=${s.api_log_level}, HTTPS keep-alive, local Postgres and Redis; the load generator on the same machine.`,
    '',
    `**Provisioning**: ${fmt(p.users)} users through \`POST /scim/v2/Users\` (Okta's create body, addresses on a verified domain so each is created, with its welcome email sent to a local SMTP sink), ${s.provisioning_concurrency} concurrent connections: **${p.users_per_second} users/s** (${p.seconds} s); latency p50 ${p.latency.p50_ms} ms, p99 ${p.latency.p99_ms} ms. Welcome mails: ${r.welcome_mails_after_provisioning.received} of ${r.welcome_mails_after_provisioning.expected} received, the last ${r.welcome_mails_after_provisioning.waited_s} s after the last create.`,
    '',
    `| organisation holds | \`userName eq\` lookup p50 ms | p99 ms | mean ms | lookups | first page of the unfiltered list p50 ms | p99 ms |`,
    '|---:|---:|---:|---:|---:|---:|---:|',
    ...r.sizes.map(
      (s) =>
        `| ${fmt(s.users)} users | ${s.lookup.p50_ms} | ${s.lookup.p99_ms} | ${s.lookup.mean_ms} | ${s.lookup.n} | ${s.first_page.p50_ms} | ${s.first_page.p99_ms} |`,
    ),
    '',
    `Lookups: sequential on one connection, random users (half of them with the address upper-cased), ${s.lookup_warmup} warm-up lookups discarded; each answer checked to hold exactly that user. The extra ${fmt(r.total_users - p.users)} users were inserted with SQL (${r.grow.insert_s} s, triggers included), then the tables analysed; the ${fmt(p.users)}-user row is measured right after provisioning, before autovacuum had analysed them (as just after a real import), which is why its unfiltered first page can be slower than the larger one's.`,
    '',
    breakdownMarkdown(r.breakdown, s.provisioning_concurrency),
    '',
  ].join('\n');
}

function scimCompare(report) {
  return [
    `Run ${report.date}, commit ${report.commit ?? '?'}, load average ${report.machine.load_average_1m_before} before and ${report.machine.load_average_1m_after} after; ${report.rounds} rounds of ${report.users_per_slice} creates per build (${report.concurrency} connections), order alternating; then ${report.lookups ?? report.builds[0].lookup.n} \`userName eq\` lookups per build at ${report.users_per_slice * report.rounds} users, alternating likewise.`,
    '',
    '| build | users/s | p50 ms | p99 ms | slices users/s (min–max) | SQL statements per create | server ms | SQL ms | CPU ms per create: api / Postgres / load generator + sink | lookup p50 ms | lookup p99 ms |',
    '|---|---:|---:|---:|---|---:|---:|---:|---|---:|---:|',
    ...report.builds.map(
      (b) =>
        `| ${b.build} (${b.dist}) | ${b.users_per_second} | ${b.latency.p50_ms} | ${b.latency.p99_ms} | ${Math.min(...b.slices_users_per_second)}–${Math.max(...b.slices_users_per_second)} | ${b.sql_statements_per_create} | ${b.server_ms_per_create} | ${b.sql_ms_per_create} | ${b.cpu_ms_per_create.api} / ${b.cpu_ms_per_create.postgres_backends} / ${b.cpu_ms_per_create.load_generator_and_smtp_sink} | ${b.lookup.p50_ms} | ${b.lookup.p99_ms} |`,
    ),
    '',
    `B ÷ A users/s, median over rounds: **${report.median_ratio_b_over_a}** (rounds: ${report.ratios.join(', ')}). Welcome mails: ${report.welcome_mails_after_provisioning.received} of ${report.welcome_mails_after_provisioning.expected} received, the last ${report.welcome_mails_after_provisioning.waited_s} s after the last create.`,
    '',
  ].join('\n');
}

function scimPaging(r) {
  const s = r.settings;
  const fmt = (n) => n.toLocaleString('en');
  const when = (t) => (t ? new Date(t).toISOString().slice(11, 23) : 'never');
  const analysed = (a) => `ANALYZE ${when(a.analysed.last_analyze)}, autovacuum ${when(a.analysed.last_autoanalyze)}`;
  return [
    `Run ${r.date} on ${r.machine.cpus} × ${r.machine.cpu_model}, node ${r.machine.node}, commit ${r.commit ?? '?'}, load average ${r.machine.load_average_1m_before} before and ${r.machine.load_average_1m_after} after.`,
    `api: NODE_ENV=${s.api_node_env}, LOG_LEVEL=${s.api_log_level}, HTTPS keep-alive, local Postgres and Redis, the builds' apis on one database, walking the same organisation page by page (the order swapped every page). ${fmt(s.users)} members inserted with SQL (${r.grow.insert_s} s), then the tables analysed.`,
    '',
    `**A walk through ${fmt(s.users)} users**, \`GET /scim/v2/Users?startIndex=…&count=${s.count}\` until past totalResults; each walk checked to answer every user once, in id order, totalResults ${fmt(s.users)} on every page.`,
    '',
    `| build | pages | p50 of the first ${s.edge_pages} pages, ms | p50 of the last ${s.edge_pages}, ms | last ÷ first | p50 per tenth of the walk, ms | whole walk: p50 / p99 / max ms | walk s |`,
    '|---|---:|---:|---:|---:|---|---|---:|',
    ...r.walks.map(
      (w) =>
        `| ${w.build} (${w.dist}) | ${w.pages} | ${w.first_ten_p50_ms} | ${w.last_ten_p50_ms} | **${w.last_over_first}** | ${w.p50_by_tenth_ms.join(' · ')} | ${w.all.p50_ms} / ${w.all.p99_ms} / ${w.all.max_ms} | ${w.walk_s} |`,
    ),
    '',
    `**After a bulk load**: ${fmt(r.after_bulk_load.users)} members of a second organisation inserted with SQL (${r.after_bulk_load.insert_s} s, done at ${when(r.after_bulk_load.loaded_at)} UTC) and not analysed (people last analysed before: ${analysed({ analysed: r.after_bulk_load.analysed_before })}), then its first page (count=${s.count}) asked ${s.bulk_load_asks} times of each build in turn:`,
    '',
    '| asked of | first page, ms (each ask) | people last analysed, after these asks (UTC) |',
    '|---|---|---|',
    ...r.after_bulk_load.asks.map((a) => `| ${a.build} | ${a.first_page_ms.join(', ')} | ${analysed(a)} |`),
    '',
    'Per-page times of every walk are in the JSON (`walks[].times_ms`).',
    '',
  ].join('\n');
}

function documents(run) {
  const s = run.settings;
  return [
    `Run ${run.at} on ${run.machine}, node ${run.node}, commit ${run.commit}, load average ${run.load_average_before} before, ${run.load_average_between} after the worker part, ${run.load_average_after} at the end.`,
    '',
    ...(run.results.length
      ? [
          '### Through the worker',
          '',
          `${s.documents} documents per worker measure (after ${s.warmup} to warm up), ${s.text_chars} characters in three lines each: one LibreTranslate request (q of three) per document. The adapter alone: warmed up ${s.adapter_warmup_s} s, measured ${s.adapter_measure_s} s. ${s.rounds} rounds per concurrency, the adapter and the worker in turn (the order flipped each round); medians, and the range of the rounds' ratios.`,
          'Engine: bench/translation-stand-in.js (node:http, its own process). Worker: NODE_ENV=production, LOG_LEVEL=warn, local Postgres and Redis; jobs queued while it was paused, timed from resume to the last document translated.',
          '',
          '| concurrency | adapter alone (calls/s) | through the worker (documents/s) | worker / adapter | range over the rounds |',
          '|---:|---:|---:|---:|---:|',
          ...run.results.map(
            (r) =>
              `| ${r.concurrency} | ${r.adapter_calls_per_second} | ${r.worker_jobs_per_second} | ${r.worker_vs_adapter} | ${r.worker_vs_adapter_range.join('–')} |`,
          ),
          '',
          `The machine's CPU per document (per call for the adapter alone) over each measure, by process (read from /proc; the worker runs in the bench's own process; Postgres and Redis are every process of the local servers), in the round of median ratio. ${run.machine.split(' ×')[0]} cores: a setup that keeps them all busy makes cores ÷ CPU per item, so adapter ÷ worker CPU per item is the ratio the worker would reach if both kept the machine busy — the most it can reach on a machine where all of these share the cores:`,
          '',
          ...run.results.map((r) => {
            const parts = (by) =>
              Object.entries(by)
                .filter(([, v]) => v >= 0.001)
                .map(([k, v]) => `${k} ${v}`)
                .join(', ');
            const m = r.machine_cpu_ms;
            return (
              `- concurrency ${r.concurrency}: worker **${m.worker.total} ms** per document (${parts(m.worker.by)}), ${m.worker.cores_busy} cores busy; adapter alone **${m.adapter.total} ms** per call (${parts(m.adapter.by)}), ${m.adapter.cores_busy} cores busy; ` +
              `adapter ÷ worker = **${r.cost_ratio}** (${r.cost_ratio_range.join('–')} over the rounds), beside the ${r.worker_vs_adapter} it made.`
            );
          }),
          '',
          ...run.results
            .filter((r) => r.concurrency === 16)
            .map(
              (r) =>
                `Target (the worker ≥ 0.5 of the adapter alone at concurrency 16, median of the rounds): ${r.worker_vs_adapter >= 0.5 ? 'met' : '**not met**'}.`,
            ),
          '',
        ]
      : []),
    ...(run.upload
      ? [
          "### The api's memory per concurrent 1 MiB upload (`POST /v1/documents`, multipart)",
          '',
          `A fresh api process per measure (NODE_ENV=production), warmed up with ${run.upload.settings.warmup_uploads} uploads one at a time, then N uploads at once, each on its own connection; growth = the api's peak RSS during them (VmHWM) minus its RSS just before; ${run.upload.settings.rounds} rounds${run.upload.settings.builds.baseline ? `, the baseline build (${run.upload.settings.builds.baseline}) alternating with the measured one` : ''}. Every upload answered 202 and was stored whole (size and SHA-256 checked).`,
          '',
          '| build | N at once | growth (MiB, median) | per upload (MiB, median) | per upload (MiB, worst round) | RSS before (MiB) |',
          '|---|---:|---:|---:|---:|---:|',
          ...run.upload.results.map(
            (r) =>
              `| ${r.build} | ${r.concurrent_uploads} | ${r.growth_mib_median} | ${r.per_upload_mib_median} | ${r.per_upload_mib_max} | ${r.rss_before_mib_median} |`,
          ),
          '',
          `Target (growth under 2 MB, ${TARGET_UPLOAD_GROWTH_MIB.toFixed(2)} MiB, per concurrent upload, measured build, every N, median): **${
            run.upload.results.filter((r) => r.build === 'measured').every((r) => r.per_upload_mib_median < TARGET_UPLOAD_GROWTH_MIB) ? 'met' : 'not met'
          }**.`,
          '',
        ]
      : []),
  ].join('\n');
}

function webhooks(r) {
  const TARGET = r.targets;
  const s = r.settings;
  const ok = (b) => (b ? 'met' : '**not met**');
  const [mainRate, ...extraRates] = s.rates_per_s;
  const lines = [
    `- run ${r.date} on ${r.machine.cpus} × ${r.machine.cpu_model}, node ${r.machine.node}, commit ${r.commit ?? '?'}; load average (1 min) before each worker run: ${r.runs.map((x) => x.load_average_1m_before).join(', ')}`,
    `- receiver: node:https on 127.0.0.1:443 in its own process, answering 204; bare loop: ${s.concurrency} POSTs in flight; worker: NODE_ENV=${s.worker_node_env}, LOG_LEVEL=${s.worker_log_level}, WEBHOOK_CONCURRENCY=${s.worker_concurrency}, DATABASE_POOL_SIZE=${s.worker_db_pool}, ` +
      `WEBHOOK_MAX_IN_FLIGHT_PER_WEBHOOK=${s.max_in_flight_per_webhook}${s.max_in_flight_per_webhook === 10 ? ' (the default)' : ' (raised from the default 10: the bench has one webhook, and the bare loop keeps as many POSTs in flight)'}, local Postgres and Redis; everything on the same machine, shared with other work`,
    `- builds: ${r.builds.map((b) => `**${b.name}** (${b.description})`).join(', ')}; ${s.rounds} round(s), each round starting with the next build in turn; each round measures the bare loop first`,
    '',
    `| round | build | bare undici /s | worker /s | worker / bare | ${s.rates_per_s.map((x) => `p50 / p99 at ${x}/s (ms)`).join(' | ')} | SQL statements / delivery | Redis commands / delivery | worker CPU ms / delivery | machine CPU ms / delivery (bare loop's / POST) | cores busy (bare loop's) |`,
    `|---:|---|---:|---:|---:|${s.rates_per_s.map(() => '---:|').join('')}---:|---:|---:|---:|---:|`,
    ...r.runs.map(
      (x) =>
        `| ${x.round} | ${x.build} | ${x.bare_per_second} | ${x.throughput.per_second} | ${Math.round(x.ratio * 100)}% | ${x.latency.map((l) => `${l.p50_ms} / ${l.p99_ms}`).join(' | ')} | ${x.counts.sql_statements.total} | ${x.counts.redis_commands.total} | ${x.counts.worker_cpu_ms ?? '?'} | ${x.machine_cpu_ms?.total ?? '?'} (${x.bare_machine_cpu_ms?.total ?? '?'}) | ${x.machine_cpu_ms?.cores_busy ?? '?'} (${x.bare_machine_cpu_ms?.cores_busy ?? '?'}) |`,
    ),
    '',
  ];
  for (const b of r.summary) {
    lines.push(
      `**${b.build}** (median, range over ${b.rounds} rounds): worker ${b.worker_per_second.median}/s (${b.worker_per_second.range}), ` +
        `**${Math.round(b.ratio.median * 100)}%** of the bare loop (${b.ratio.range_pct}; target ≥ ${TARGET.min_ratio_to_bare * 100}%: ${ok(b.target_met.ratio)}); ` +
        `event → receipt at ${mainRate}/s p50 ${b.p50_ms.median} ms, **p99 ${b.p99_ms.median} ms** (${b.p99_ms.range}; target < ${TARGET.max_p99_ms}: ${ok(b.target_met.p99)})` +
        `${extraRates.length ? `; at ${extraRates.join(', ')}/s p99 ${b.extra_p99_ms.map((e) => `${e.median} ms (${e.range})`).join(', ')}` : ''}; ` +
        `worker CPU ${b.worker_cpu_ms.median} ms per delivery (${b.worker_cpu_ms.range}).`,
      '',
    );
  }
  lines.push(
    `Per delivery during the ${s.deliveries}-delivery phase (the worker's own clients, counted in its process by bench/webhooks-count.js; relay, queue, attempts, slots, BullMQ housekeeping all included; EVALSHA named by script):`,
    '',
  );
  for (const b of r.summary) {
    const c = b.counts;
    const fmt = (by) =>
      Object.entries(by)
        .map(([k, v]) => `${k.replace(/\|/g, '\\|')} ${v}`)
        .join('; ');
    lines.push(
      `- **${b.build}**: **${c.sql_statements.total} SQL statements** (${fmt(c.sql_statements.by)}), **${c.redis_commands.total} Redis commands** (${fmt(c.redis_commands.by)}); ` +
        `Redis server calls of all clients, commands inside scripts included: ${c.redis_server_calls_all_clients} (the server is shared with other runs on this machine, so read it as an upper bound)`,
    );
  }
  lines.push(
    '',
    `The machine's CPU per delivery during the same phase, by process (read from /proc; Postgres and Redis are every process of the local servers; the bench's part is the events' insert and its polling), and the bare loop's per POST, in the build's median-throughput round. ` +
      `${r.machine.cpus} cores: a setup that keeps them all busy makes cores ÷ CPU per delivery; the worker / bare loop ratio of CPU per delivery is therefore the ratio the worker would reach if both kept the machine busy — the most it can reach on a machine where all of these share the cores:`,
    '',
  );
  const parts = (by) =>
    Object.entries(by)
      .filter(([, v]) => v >= 0.001)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
  for (const b of r.summary) {
    if (!b.machine_cpu_ms) continue;
    const m = b.machine_cpu_ms;
    lines.push(
      `- **${b.build}**: worker path **${m.worker.total} ms** per delivery (${parts(m.worker.by)}), ${m.worker.cores_busy} cores busy; bare loop **${m.bare.total} ms** per POST (${parts(m.bare.by)}), ${m.bare.cores_busy} cores busy; ` +
        `bare ÷ worker = **${Math.round(b.cost_ratio.median * 100)}%** (${b.cost_ratio.range_pct} over the rounds): the worker's ceiling against the bare loop on this machine, beside the ${Math.round(b.ratio.median * 100)}% it made.`,
    );
  }
  lines.push('', `Logged: ${r.checks.attempts_logged} attempts and ${r.checks.delivered} delivered deliveries for ${r.checks.expected} events.`);
  return lines.join('\n');
}

function webhooksCompare(r) {
  const s = r.settings;
  const { A, B, b_over_a: ratio, within_bound: within } = r.summary;
  const pct = (x) => `${x >= 1 ? '+' : ''}${Math.round((x - 1) * 1000) / 10}%`;
  const r3 = (x) => Math.round(x * 1000) / 1000;
  const parts = (by) =>
    Object.entries(by)
      .filter(([, v]) => v >= 0.001)
      .map(([k, v]) => `${k} ${r3(v)}`)
      .join(', ');
  const builds = Object.fromEntries(r.builds.map((b) => [b.name, b.description]));
  return [
    `- run ${r.date} on ${r.machine.cpus} × ${r.machine.cpu_model}, node ${r.machine.node}, commit ${r.commit ?? '?'}; load average (1 min) before the run ${r.machine.load_average_1m_before}, before each worker run ${r.runs.map((x) => x.load_average_1m_before).join(', ')}`,
    `- **A**: ${builds.A}; **B**: ${builds.B}; each on a database of its own migrated by its own admin CLI, one webhook posting to node:https on ${s.receiver_host}:443 in its own process (answers 204)`,
    `- ${s.rounds} rounds taking turns (A then B, then B then A, …), one worker at a time, a fresh one per round: ${s.warmup} warm-up deliveries, then ${s.deliveries} events at once, timed from their insert until the receiver has every one; worker NODE_ENV=${s.worker_node_env}, LOG_LEVEL=${s.worker_log_level}, WEBHOOK_CONCURRENCY=${s.worker_concurrency}, WEBHOOK_MAX_IN_FLIGHT_PER_WEBHOOK=${s.max_in_flight_per_webhook}, DATABASE_POOL_SIZE=${s.worker_db_pool}`,
    `- CPU per delivery: user + system time (/proc) from the insert until Postgres has every delivery recorded, ÷ the deliveries, of the processes a delivery runs through: the worker, the Postgres backends of its database, the receiver and the bench (its insert and polling); the api takes no part in a delivery. Beside it, "all processes" adds every other Postgres process and the Redis server: those servers are shared with whatever else runs on the machine, so that column carries others' work too (the worker's Redis commands per delivery, counted exactly, are in the last column)`,
    '',
    '| round | build | load before | deliveries/s | CPU ms / delivery | of it: worker, its Postgres backends | all processes (Redis server) | worker CPU ms / delivery (its own count) | SQL statements / delivery | Redis commands / delivery |',
    '|---:|---|---:|---:|---:|---|---:|---:|---:|---:|',
    ...r.runs.map(
      (x) =>
        `| ${x.round} | ${x.build} | ${x.load_average_1m_before} | ${x.throughput.per_second} | ${x.own_cpu_ms.total} | ${x.own_cpu_ms.by.worker} / ${x.own_cpu_ms.by.postgres} | ${x.machine_cpu_ms.total} (${x.machine_cpu_ms.by.redis ?? '–'}) | ${x.worker_cpu_ms} | ${x.sql_statements.total} | ${x.redis_commands.total} |`,
    ),
    '',
    '| build | deliveries/s (median, range) | CPU ms / delivery (median, range) | by process (medians) | all processes (median, range) | Redis server (median) | worker CPU ms / delivery |',
    '|---|---:|---:|---|---:|---:|---:|',
    ...[
      ['A', A],
      ['B', B],
    ].map(
      ([n, b]) =>
        `| ${n} | ${r3(b.per_second.median)} (${b.per_second.range}) | ${r3(b.own_cpu_ms.median)} (${b.own_cpu_ms.range}) | ${parts(b.by_part_ms)} | ${r3(b.machine_cpu_ms.median)} (${b.machine_cpu_ms.range}) | ${r3(b.redis_server_cpu_ms)} | ${r3(b.worker_cpu_ms.median)} (${b.worker_cpu_ms.range}) |`,
    ),
    '',
    `B ÷ A, each round's two runs against each other: deliveries/s ${ratio.by_round.map((p) => p.rate).join(', ')}; CPU per delivery ${ratio.by_round.map((p) => p.cpu).join(', ')}; all processes' ${ratio.by_round.map((p) => p.machine_cpu).join(', ')}.`,
    '',
    `**B ÷ A (median of the rounds): deliveries/s ${ratio.rate.median} (${pct(ratio.rate.median)}; rounds ${ratio.rate.range}), CPU per delivery ${ratio.cpu.median} (${pct(ratio.cpu.median)}; rounds ${ratio.cpu.range}).** All processes' CPU per delivery ${ratio.machine_cpu.median} (rounds ${ratio.machine_cpu.range}). ` +
      `Bound (CPU per delivery at most +${Math.round((s.bound.max_cpu_ratio - 1) * 100)}%, deliveries/s at most −${Math.round((1 - s.bound.min_rate_ratio) * 100)}%): CPU ${within.cpu ? 'within' : '**exceeded**'}, deliveries/s ${within.rate ? 'within' : '**exceeded**'}.`,
    '',
    `Per delivery, by statement and command (the worker's own clients, counted in its process by bench/webhooks-count.js), in each build's first round:`,
    '',
    ...['A', 'B'].map((n) => {
      const x = r.runs.find((y) => y.build === n);
      const fmt = (by) =>
        Object.entries(by)
          .map(([k, v]) => `${k.replace(/\|/g, '\\|')} ${v}`)
          .join('; ');
      return `- **${n}**: ${x.sql_statements.total} SQL statements (${fmt(x.sql_statements.by)}); ${x.redis_commands.total} Redis commands (${fmt(x.redis_commands.by)})`;
    }),
    '',
    `Logged: ${Object.entries(r.checks)
      .map(([n, c]) => `${n} ${c.delivered} delivered, ${c.attempts} attempts for ${c.expected} events`)
      .join('; ')}.`,
    '',
  ].join('\n');
}

function webhooksRecover(r) {
  const s = r.settings;
  const x = r.result;
  const c = r.checks;
  return [
    `- run ${r.date} on ${r.machine.cpus} × ${r.machine.cpu_model}, node ${r.machine.node}, commit ${r.commit ?? '?'}; load average (1 min) before the run ${r.machine.load_average_1m_before}, at the first call ${r.machine.load_average_1m_at_first_call}, after ${r.machine.load_average_1m_after}`,
    `- one webhook with ${s.deliveries} given-up deliveries (\`webhook_switched_off\`, seeded with SQL in ${s.seed_s} s, made evenly over the hour before); the api and the worker of the build (entry points, NODE_ENV=${s.node_env}, LOG_LEVEL=${s.log_level}, the product's delivery settings), local Postgres and Redis, node:https receiver on ${s.receiver_host}:443 in its own process answering 204`,
    `- \`POST /v1/webhooks/{id}/recover\` with \`since\` the hour's start, a new \`Idempotency-Key\` each, called again while the answer says \`more\`; times from just before the first call`,
    '',
    '| deliveries | calls | calls done | first call answered | first delivery received | all received | deliveries/s (first to last receipt) | CPU ms / delivery | cores busy | within 60 s |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    `| ${s.deliveries} | ${x.calls} | ${x.calls_done_s} s | ${Math.round(x.first_answer_ms)} ms | ${x.first_delivery_ms} ms | **${x.all_delivered_s} s** | ${x.per_second} | ${x.machine_cpu_ms.total} | ${x.machine_cpu_ms.cores_busy} | ${r.within_bound ? 'yes' : '**no**'} |`,
    '',
    `Each call's answer: median ${Math.round(x.answer_ms.median)} ms, slowest ${Math.round(x.answer_ms.max)} ms; per call (ms after the first call's start → sent, more): ${r.calls.map((k) => `${k.at_ms} → ${k.sent}${k.more ? '' : ' (done)'}`).join(', ')}.`,
    '',
    `CPU over the recovery, per delivery, by process (Postgres: the backends of the bench's database; the Redis server is shared with whatever else runs on the machine): ${Object.entries(
      x.machine_cpu_ms.by,
    )
      .map(([k, v]) => `${k} ${v} ms`)
      .join(', ')} (${x.machine_cpu_ms.cores_busy} cores busy).`,
    '',
    `Checked: the calls took ${c.sent_by_calls}; the receiver got ${c.received} requests with ${c.unique_ids} distinct delivery ids (${c.sent_twice} sent twice, watched ${s.settle_s} s after the last); ${c.delivered_in_new_series} recorded delivered in their new series, ${c.attempts_logged} attempts logged, ${c.deliveries_with_two_attempts} deliveries with two.`,
    '',
  ].join('\n');
}

function fairness(r) {
  const TARGET = r.targets;
  const s = r.settings;
  const ok = (b) => (b ? 'met' : '**not met**');
  const row = (x) =>
    `| ${x.name} (cap ${x.cap}) | ${x.fast_arrived} of ${x.fast_events} | ${x.fast_latency.p50_ms ?? '–'} | ${x.fast_latency.p99_ms ?? '–'} | ${x.fast_latency.max_ms ?? '–'} | ${x.fast_latency_first_5_s.p99_ms ?? '–'} | ${x.fast_attempt_duration.p50_ms ?? '–'} / ${x.fast_attempt_duration.p99_ms ?? '–'} | ${x.fast_parked_most_sampled} | ${x.hang_max_in_flight} | ${x.hang_requests} | ${x.hang_parked_at_end} |`;
  return [
    `- run ${r.date} on ${r.machine.cpus} × ${r.machine.cpu_model}, node ${r.machine.node}, commit ${r.commit ?? '?'}, load average before ${r.machine.load_average_1m_before}`,
    `- one worker: NODE_ENV=${s.worker_node_env}, LOG_LEVEL=${s.worker_log_level}, WEBHOOK_CONCURRENCY=${s.concurrency}, local Postgres and Redis; two receivers in one process on 127.0.0.1:443: one holds every request ${s.hang_ms / 1000} s (the worker gives up at 10 s), one answers 204 at once; everything on the same machine`,
    `- each run: ${s.hanging_deliveries} events at once for the hanging receiver; once the relay has made their deliveries (queued), events for the fast one at ${s.fast_rate_per_s}/s; latency is event (\`occurred_at\`, Postgres) → receipt (receiver clock)`,
    '',
    '| run | fast deliveries arrived | p50 ms | p99 ms | max ms | p99 ms, events of the first 5 s | fast: attempt p50 / p99 ms | fast: most parked (sampled) | hanging: most in flight | hanging: requests | hanging: parked at the end |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...r.runs.map(row),
    '',
    `Fast receiver's p99 with the cap: **${r.runs[0].fast_latency.p99_ms} ms** (target < ${TARGET.max_fast_p99_ms}: ${ok(r.target_met.fast_p99)}); ` +
      `the hanging receiver never held more than **${r.runs[0].hang_max_in_flight}** requests (cap ${r.runs[0].cap}); the relay made its ${s.hanging_deliveries} deliveries in ${r.runs[0].hang_backlog_relayed_after_ms} ms, admitting ${r.runs[0].cap} and parking the rest (all parked after ${r.runs[0].hang_backlog_parked_after_ms ?? '?'} ms).`,
    r.runs[1]
      ? `Control without a reachable cap: ${r.runs[1].fast_arrived} of ${r.runs[1].fast_events} fast deliveries arrived within ${s.control_wait_s} s of the last event (the hanging receiver held up to ${r.runs[1].hang_max_in_flight} of the worker's ${s.concurrency} slots).`
      : '',
  ].join('\n');
}

function soak(report) {
  const s = report.settings;
  const ok = (b) => (b === null ? 'not judged (fewer than 3 minutes)' : b ? 'met' : '**not met**');
  const t = report.totals;
  return [
    `Commit ${report.commit}, ${report.date}; ${report.machine.cpus} × ${report.machine.cpu_model}, Node ${report.machine.node}; load average ${report.machine.load_average_at_start} at the start.`,
    `api and worker as deployed (NODE_ENV=${s.node_env}, LOG_LEVEL=${s.log_level}: a request line per call), local Postgres and Redis, receiver on ${report.receiver_host ?? '127.0.0.2'}:443; ${s.minutes} minutes of ${Object.entries(
      s.rates_per_s,
    )
      .map(([k, v]) => `${v}/s ${k}`)
      .join(', ')} (events are inserted into the outbox with SQL, as the domain does).`,
    '',
    '| minute | calls | errors | p50 ms | p99 ms | max ms | api RSS MiB | worker RSS MiB |',
    '|---|---|---|---|---|---|---|---|',
    ...report.per_minute.map(
      (m) => `| ${m.minute} | ${m.calls} | ${m.errors} | ${m.p50_ms} | ${m.p99_ms} | ${m.max_ms} | ${m.rss_api_mib} | ${m.rss_worker_mib} |`,
    ),
    '',
    `- error rate ${t.error_rate} (${t.errors} of ${t.calls}): ${ok(report.target_met.no_errors)}`,
    `- p99 last minute / second minute = ${report.p99_ratio_last_to_second} (≤ ${s.max_p99_ratio}): ${ok(report.target_met.p99_stable)}`,
    `- RSS growth after warm-up (second minute to last): api ${(report.rss_growth.api * 100).toFixed(1)}%, worker ${(report.rss_growth.worker * 100).toFixed(1)}% (< ${s.max_rss_growth * 100}%): ${ok(report.target_met.rss_flat)}`,
    `- deliveries: ${t.events} events, ${t.received} received (${t.received_unique} distinct), ${t.delivered} delivered, ${t.attempts} attempts logged: ${ok(report.target_met.every_event_once)}`,
    '',
  ].join('\n');
}

function startup(report) {
  const s = report.settings;
  const label = {
    api: '**api** (spawn → `GET /health/ready` 200 over HTTPS)',
    worker: '**worker** (spawn → `GET /health/ready` 200 on WORKER_HEALTH_PORT)',
    api_baseline: `api of the baseline build (${report.builds.baseline})`,
    worker_baseline: `worker of the baseline build (${report.builds.baseline})`,
    node_itself: '`node -e 0` (node itself)',
    api_require_only: "api's imports required, main() not run",
    worker_require_only: "worker's imports required, main() not run",
  };
  const met = report.target_met;
  return [
    `Run ${report.date} on ${report.machine.cpus} × ${report.machine.cpu_model}, node ${report.machine.node}, commit ${report.commit}, load average ${report.machine.load_average_1m_before} before, ${report.machine.load_average_1m_after} after.`,
    `${s.rounds} starts of each (after one not counted), in rotating order; NODE_ENV=production, LOG_LEVEL=${s.log_level}, migrated database, local Redis; probed every ${s.probe_every_ms} ms.`,
    '',
    '| process | p50 ms | max ms | min ms |',
    '|---|---:|---:|---:|',
    ...Object.entries(report.results).map(([k, r]) => `| ${label[k]} | ${r.p50_ms} | ${r.max_ms} | ${r.min_ms} |`),
    '',
    `Target (each ready in under ${report.target_ms} ms, every start): api **${met.api ? 'met' : 'not met'}**, worker **${met.worker ? 'met' : 'not met'}**.`,
    '',
  ].join('\n');
}

function replicas(report) {
  return (
    `| events | webhooks | deliveries | all delivered after | received before the restart | attempts in flight at the SIGKILL, sent twice |\n` +
    `|---|---|---|---|---|---|\n` +
    `| ${report.burst} | ${report.webhooks} | ${report.deliveries} | ${report.seconds.toFixed(1)} s | ${report.receivedBeforeRestart} | ${report.inFlightAtKill} |\n\n` +
    `Commit ${report.commit}, ${report.at}, load average ${report.load_average_before} before the run, ${report.machine.cpus} cores. ` +
    `Every other delivery arrived exactly once; "all delivered after" includes BullMQ's lock expiry (up to 30 s) ` +
    `before the killed worker's in-flight jobs are taken up again.\n`
  );
}

function containers(r) {
  const i = r.image;
  const m = r.rss_mib;
  return [
    `- run ${r.date} on ${r.machine.cpus} × ${r.machine.cpu_model}, ${r.podman} (runc, host network), commit ${r.commit ?? '?'}, load average before ${r.machine.load_average_at_start}`,
    `- image \`${i.tag}\` on the local base \`${i.base}\` (Debian bookworm minbase + Node + npm, made by scripts/image.sh)`,
    '',
    '| what | figure |',
    '|---|---:|',
    `| image size | ${i.mb} MB |`,
    `| of which the base | ${i.base_mb} MB |`,
    `| added by the Dockerfile | ${i.added_mb} MB |`,
    `| build time (${i.built_now ? 'no layer cache, base kept' : 'from an earlier run'}) | ${i.build_s} s |`,
    `| api: \`podman run\` to /health/ready 200 | ${r.ready_ms.api} ms |`,
    `| worker: \`podman run\` to /health/ready 200 | ${r.ready_ms.worker} ms |`,
    `| api RSS at idle | ${m.idle.api} MiB |`,
    `| worker RSS at idle | ${m.idle.worker} MiB |`,
    `| api RSS under the soak mix, mean / max | ${m.under_load_mean.api} / ${m.under_load_max.api} MiB |`,
    `| worker RSS under the soak mix, mean / max | ${m.under_load_mean.worker} / ${m.under_load_max.worker} MiB |`,
    '',
    `The soak mix for ${r.load.seconds} s: ${Object.entries(r.load.rates_per_s)
      .map(([k, v]) => `${v}/s ${k}`)
      .join(
        ', ',
      )}; ${r.load.calls} calls, ${r.load.errors} errors; ${r.load.events} events, ${r.load.received_unique} delivered (${r.load.received} receipts).`,
    ...(r.load.error_samples?.length ? ['', 'Errors (first ten):', '', ...r.load.error_samples.map((e) => `- \`${e.replace(/`/g, "'")}\``)] : []),
    '',
    'What takes the space the Dockerfile adds (`du` inside the image; it counts disk blocks, so many small files weigh more than their bytes, and the rows add up to more than the added size):',
    '',
    '| path | MB |',
    '|---|---:|',
    ...i.largest.map((x) => `| ${x.path} | ${x.mb} |`),
    '',
  ].join('\n');
}

/** Each benchmark's renderer, by its results file's name, with the title its file carries. */
const RENDER = {
  me: [me, 'GET /v1/me benchmark'],
  lists: [lists, 'List latency as data grows'],
  console: [consolePage, "The console's Deliveries page as the log grows"],
  scim: [scim, 'SCIM provisioning and lookups'],
  'scim-compare': [scimCompare, 'SCIM: two builds side by side'],
  'scim-paging': [scimPaging, 'SCIM paging through 100,000 users'],
  'scim-compare-provisioning-log': [scimCompare, 'SCIM: provisioning without (A) and with (B) the provisioning log'],
  documents: [documents],
  webhooks: [(r) => `${webhooks(r)}\n`],
  'webhooks-compare': [webhooksCompare, 'Webhook deliveries: two builds side by side'],
  'webhooks-recover': [webhooksRecover, 'Webhook recovery after an outage'],
  fairness: [(r) => `${fairness(r)}\n`],
  soak: [soak, 'Soak'],
  startup: [startup, 'Start-up benchmark'],
  replicas: [replicas, 'Replicas: a burst with a worker killed (bench/replicas.bench.js)'],
  containers: [containers, 'The containers: image, start-up and memory (bench/containers.bench.js)'],
};

/** `name`'s results written: `report` as JSON, its Markdown beside it. */
function writeReport(name, report) {
  const [render, title] = RENDER[name];
  const md = render(report);
  require('./harness/results').writeResults(name, report, md, title);
  return md;
}

module.exports = { RENDER, writeReport };

if (require.main === module) {
  const [name, dir = require('node:path').join(__dirname, 'results')] = process.argv.slice(2);
  if (!RENDER[name]) throw new Error(`usage: node bench/markdown.js ${Object.keys(RENDER).join('|')} [results dir]`);
  const [render, title] = RENDER[name];
  const report = JSON.parse(require('node:fs').readFileSync(require('node:path').join(dir, `${name}.json`), 'utf8'));
  process.stdout.write(title ? `# ${title}\n\n${render(report)}` : render(report));
}
