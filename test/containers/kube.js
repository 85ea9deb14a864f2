#!/usr/bin/env node
// The Kubernetes manifests (deploy/k8s) run with `podman kube play` against the image built by
// scripts/image.sh and this machine's Postgres and Redis (a database and a Redis prefix of its own):
//   scripts/image.sh && node test/containers/kube.js
// podman 4.3 plays Deployments, Pods, ConfigMaps and Secrets; it has no Job, Service or
// PodDisruptionBudget. So the test first checks what podman cannot run, from the manifests
// themselves (the Job's command, the probes' paths and ports, the Service's target, the budgets'
// selectors, the security context, the resources), then plays: the Job's pod template as a Pod (it
// must exit 0), then the ConfigMap, the Secrets and both Deployments, each pod on the host's
// network with the ports moved to free ones. Then the probes as written in the manifests answer 200,
// the pods run as uid 1000 on a read-only root filesystem, and GET /v1/me answers 200 with a key
// made by the admin CLI inside the api pod.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const YAML = require('yaml');
const p = require('./podman');

const DIR = path.join(p.root, 'deploy/k8s');
const SERVER_URL = process.env.TEST_DATABASE_SERVER_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const DATABASE = `integrations_kube_${process.pid}`;
const PREFIX = `iakube${process.pid}`;
const { withDatabase } = p;

const { check, say, passed } = p.checks();

/** The manifests kustomization.yaml lists, in its order, as parsed documents. */
function manifests() {
  const kustomization = YAML.parse(fs.readFileSync(path.join(DIR, 'kustomization.yaml'), 'utf8'));
  return kustomization.resources.flatMap((file) => YAML.parseAllDocuments(fs.readFileSync(path.join(DIR, file), 'utf8')).map((d) => ({ file, ...d.toJS() })));
}

const pods = new Set();
const podmanSecrets = new Set();
const volumes = new Set();
let run;

async function main() {
  const unusable = await p.podmanUnusable();
  if (unusable) {
    process.stdout.write(`kube test SKIPPED: podman cannot run here (${unusable})\n`);
    return;
  }
  if ((await p.podman(['image', 'exists', p.IMAGE])).code !== 0) throw new Error(`no image ${p.IMAGE}: build it first with scripts/image.sh`);
  const started = Date.now();
  run = new p.Run('kube');
  const runCleanup = run.cleanup.bind(run);
  run.cleanup = async () => {
    for (const pod of pods) await p.podman(['pod', 'rm', '-f', '-t', '0', pod]);
    pods.clear();
    for (const secret of podmanSecrets) await p.podman(['secret', 'rm', secret]);
    podmanSecrets.clear();
    for (const volume of volumes) await p.podman(['volume', 'rm', '-f', volume]);
    volumes.clear();
    await runCleanup();
    await cleanupServers().catch((err) => process.stderr.write(`cleanup of ${DATABASE} / ${PREFIX}: ${err.message}\n`));
  };
  process.once('exit', () => {
    const { spawnSync } = require('node:child_process');
    if (pods.size) spawnSync('podman', ['pod', 'rm', '-f', '-t', '0', ...pods], { stdio: 'ignore' });
    if (podmanSecrets.size) spawnSync('podman', ['secret', 'rm', ...podmanSecrets], { stdio: 'ignore' });
    if (volumes.size) spawnSync('podman', ['volume', 'rm', '-f', ...volumes], { stdio: 'ignore' });
  });

  const docs = manifests();
  const kind = (k, name) => docs.filter((d) => d.kind === k && (!name || d.metadata.name === name));
  const [settings] = kind('ConfigMap');
  const [api] = kind('Deployment', 'integrations-api');
  const [worker] = kind('Deployment', 'integrations-worker');
  const [job] = kind('Job');
  const [service] = kind('Service');

  // ---- what podman does not play, checked from the manifests ----
  say('the manifests (what podman kube play does not run: Job, Service, PodDisruptionBudget)');
  const container = (d) => d.spec.template.spec.containers[0];
  check(
    JSON.stringify(container(job).args) === '["migrate"]' && job.spec.template.spec.restartPolicy === 'Never',
    'the Job runs the image’s migrate step once (args [migrate], restartPolicy Never)',
  );
  for (const d of [api, worker, job]) {
    const pod = d.spec.template.spec;
    const c = container(d);
    check(
      pod.securityContext.runAsNonRoot === true &&
        pod.securityContext.runAsUser === 1000 &&
        c.securityContext.readOnlyRootFilesystem === true &&
        c.securityContext.allowPrivilegeEscalation === false,
      `${d.metadata.name}: non-root (uid 1000), read-only root filesystem, no privilege escalation`,
    );
    check(c.resources?.requests?.cpu && c.resources?.requests?.memory, `${d.metadata.name}: resource requests`);
    const mounts = c.volumeMounts.map((m) => m.mountPath);
    check(mounts.includes('/app/.data') && mounts.includes('/tmp'), `${d.metadata.name}: writable volumes at DATA_DIR (/app/.data) and /tmp only`, mounts);
    check(
      c.envFrom.some((e) => e.configMapRef?.name === settings.metadata.name) && c.envFrom.some((e) => e.secretRef?.name === 'integrations-secrets'),
      `${d.metadata.name}: settings from the ConfigMap and the Secret`,
    );
  }
  const portOf = (d, name) => container(d).ports.find((port) => port.name === name)?.containerPort;
  for (const [d, scheme, portName, setting] of [
    [api, 'HTTPS', 'https', 'PORT'],
    [worker, 'HTTP', 'health', 'WORKER_HEALTH_PORT'],
  ]) {
    const c = container(d);
    for (const [probe, path_] of [
      ['readinessProbe', '/health/ready'],
      ['livenessProbe', '/health/live'],
    ]) {
      const get = c[probe]?.httpGet;
      check(
        get && get.path === path_ && get.port === portName && (get.scheme ?? 'HTTP') === scheme && portOf(d, portName) === Number(settings.data[setting]),
        `${d.metadata.name}: ${probe} is ${scheme} GET ${path_} on port ${portName} (${setting}=${settings.data[setting]})`,
        get,
      );
    }
    const grace = d.spec.template.spec.terminationGracePeriodSeconds * 1000;
    check(grace > Number(settings.data.SHUTDOWN_GRACE_MS), `${d.metadata.name}: terminationGracePeriodSeconds above SHUTDOWN_GRACE_MS`);
  }
  check(
    service.spec.selector['app.kubernetes.io/name'] === api.spec.template.metadata.labels['app.kubernetes.io/name'] &&
      service.spec.ports[0].targetPort === 'https' &&
      portOf(api, 'https'),
    'the Service selects the api pods and targets their HTTPS port',
  );
  for (const pdb of kind('PodDisruptionBudget')) {
    const target = [api, worker].find((d) => d.metadata.name === pdb.metadata.name);
    check(
      target &&
        JSON.stringify(pdb.spec.selector.matchLabels) === JSON.stringify(target.spec.selector.matchLabels) &&
        pdb.spec.minAvailable < target.spec.replicas,
      `the PodDisruptionBudget ${pdb.metadata.name} selects its Deployment’s pods and leaves room for a voluntary disruption`,
    );
  }

  // ---- played: the Job's pod, then the settings and both Deployments ----
  await p.dropDatabase(SERVER_URL, DATABASE);
  const apiTls = await p.selfSigned('integrations-api.test');
  const [apiPort, metricsPort, healthPort] = await Promise.all([p.freePort(), p.freePort(), p.freePort()]);
  const suffix = `-${process.pid}`;
  const local = (d) => {
    const copy = structuredClone(d);
    delete copy.file;
    delete copy.metadata.namespace;
    copy.metadata.name += suffix;
    return copy;
  };
  const cm = local(settings);
  Object.assign(cm.data, {
    HOST: '127.0.0.1',
    METRICS_HOST: '127.0.0.1',
    PORT: String(apiPort),
    METRICS_PORT: String(metricsPort),
    WORKER_HEALTH_PORT: String(healthPort),
    REDIS_PREFIX: PREFIX,
    PUBLIC_BASE_URL: `https://127.0.0.1:${apiPort}`,
  });
  const secrets = kind('Secret').map(local);
  const appSecret = secrets.find((s) => s.metadata.name.startsWith('integrations-secrets'));
  appSecret.stringData = { DATABASE_URL: withDatabase(SERVER_URL, DATABASE), REDIS_URL };
  const tlsSecret = secrets.find((s) => s.metadata.name.startsWith('integrations-tls'));
  tlsSecret.stringData = { 'tls.crt': apiTls.cert, 'tls.key': apiTls.key };
  // podman 4.3 resolves secretRef to a podman secret holding the Secret's data as JSON (values in
  // base64, as Kubernetes stores them); a Secret document in the played file would be stored as its
  // YAML text, which it then cannot read. So the Secrets are made first, from the manifests.
  for (const s of secrets) {
    s.data = Object.fromEntries(Object.entries(s.stringData).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
    delete s.stringData;
    await p.podman(['secret', 'rm', s.metadata.name]);
    await p.podmanOk(['secret', 'create', s.metadata.name, run.file(`${s.metadata.name}.json`, JSON.stringify(s.data))]);
    podmanSecrets.add(s.metadata.name);
  }
  const onHost = (d) => {
    const copy = local(d);
    const pod = copy.spec.template.spec;
    pod.hostNetwork = true;
    for (const c of pod.containers) {
      c.image = p.IMAGE;
      for (const ref of c.envFrom) {
        if (ref.configMapRef) ref.configMapRef.name += suffix;
        if (ref.secretRef) ref.secretRef.name += suffix;
      }
      // The probes' ports by number: this run moved them (the names are checked above).
      for (const probe of ['readinessProbe', 'livenessProbe']) {
        const get = c[probe]?.httpGet;
        if (get && typeof get.port === 'string') get.port = Number(cm.data[get.port === 'https' ? 'PORT' : 'WORKER_HEALTH_PORT']);
      }
      c.ports = [];
    }
    // podman 4.3 crashes on a secret volume (a nil pointer in VolumeFromSecret): the same files, from
    // the same Secret's values, mounted from this run's directory at the same path instead.
    for (const v of pod.volumes ?? []) {
      // podman 4.3 makes an emptyDir a named volume, named as in the manifest: one per pod here.
      if (v.emptyDir) {
        const name = `${copy.metadata.name}-${v.name}`;
        for (const c of pod.containers) for (const m of c.volumeMounts ?? []) if (m.name === v.name) m.name = name;
        v.name = name;
        volumes.add(name);
        continue;
      }
      if (!v.secret) continue;
      const secret = secrets.find((s) => s.metadata.name === v.secret.secretName + suffix);
      const dir = path.join(run.dir, v.name);
      fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
      for (const [k, b64] of Object.entries(secret.data)) fs.writeFileSync(path.join(dir, k), Buffer.from(b64, 'base64'), { mode: 0o444 });
      delete v.secret;
      v.hostPath = { path: dir, type: 'Directory' };
    }
    if (copy.spec.replicas) copy.spec.replicas = 1;
    return copy;
  };
  const yamlOf = (docsOut) => docsOut.map((d) => YAML.stringify(d)).join('---\n');

  say('podman kube play: the migrate Job’s pod');
  const jobPod = onHost({ ...job, spec: { template: job.spec.template } });
  const migratePod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: jobPod.metadata.name, labels: jobPod.spec.template.metadata.labels },
    spec: jobPod.spec.template.spec,
  };
  const migrateFile = run.file('migrate.yaml', yamlOf([cm, migratePod]));
  pods.add(migratePod.metadata.name);
  const played = await p.podman(['kube', 'play', migrateFile]);
  check(played.code === 0, 'podman kube play takes the ConfigMap and the Job’s pod (the Secrets made from the manifests)', played);
  const migrateContainer = `${migratePod.metadata.name}-migrate`;
  await p.until(120, 'the migrate pod to finish', async () => !(await p.state(migrateContainer)).Running);
  const migrated = await p.state(migrateContainer);
  check(migrated.ExitCode === 0, 'the Job’s container exits 0', { state: migrated, logs: await p.logs(migrateContainer) });
  check(/applied: /.test(await p.logs(migrateContainer)), 'and applied the migrations', await p.logs(migrateContainer));
  await p.podman(['pod', 'rm', '-f', migratePod.metadata.name]);
  pods.delete(migratePod.metadata.name);

  say('podman kube play: the ConfigMap, the Secrets and the api and worker Deployments');
  const deployments = [onHost(api), onHost(worker)];
  const ignored = [service, ...kind('PodDisruptionBudget')].map(local);
  const appFile = run.file('app.yaml', yamlOf([cm, ...deployments, ...ignored]));
  for (const d of deployments) pods.add(`${d.metadata.name}-pod-0`);
  const up = await p.podman(['kube', 'play', appFile]);
  check(up.code === 0, 'podman kube play takes them (the Service and the budgets are not podman’s to run)', up);
  const apiContainer = `${deployments[0].metadata.name}-pod-0-api`;
  const workerContainer = `${deployments[1].metadata.name}-pod-0-worker`;
  const probe = async (d, which) => {
    const get = container(d)[which].httpGet;
    const port = Number(cm.data[get.port === 'https' ? 'PORT' : 'WORKER_HEALTH_PORT']);
    return p.call({ port, path: get.path, tls: (get.scheme ?? 'HTTP') === 'HTTPS', ca: apiTls.cert });
  };
  for (const [d, name] of [
    [api, apiContainer],
    [worker, workerContainer],
  ]) {
    await p.until(120, `${name} ready`, async () => {
      const s = await p.state(name);
      if (!s.Running) throw Object.assign(new Error(`${name} exited ${s.ExitCode}:\n${await p.logs(name)}`), { fatal: true });
      return (await probe(d, 'readinessProbe')).status === 200;
    });
    check(true, `${d.metadata.name}: its readinessProbe, as written, answers 200`);
    check((await probe(d, 'livenessProbe')).status === 200, `${d.metadata.name}: its livenessProbe, as written, answers 200`);
    const pid = await p.nodePid(name);
    const uid = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/^Uid:\s+(\d+)/m)[1];
    check(uid === '1000', `${d.metadata.name}: node runs as uid 1000`, uid);
    const ro = await p.podman(['exec', name, 'sh', '-c', 'touch /app/probe 2>&1; touch "$DATA_DIR/probe" && touch /tmp/probe && echo writable']);
    check(
      /Read-only file system/.test(ro.stdout) && /writable/.test(ro.stdout),
      `${d.metadata.name}: read-only root filesystem; DATA_DIR and /tmp writable`,
      ro,
    );
  }
  const made = await p.podman(['exec', apiContainer, '/app/docker/entrypoint.sh', 'admin', 'demo', 'setup', '--name', `Kube ${process.pid}`, '--json']);
  check(made.code === 0, 'the admin CLI inside the api pod makes a key', made);
  const tenant = JSON.parse(made.stdout);
  const me = await p.call({ port: apiPort, path: '/v1/me', key: tenant.key, ca: apiTls.cert });
  check(me.status === 200 && me.body.data.id === tenant.connection_id, 'GET /v1/me answers 200 through the api pod', me);

  const down = await p.podman(['kube', 'down', appFile]);
  check(down.code === 0, 'podman kube down removes the pods', down);
  for (const d of deployments) pods.delete(`${d.metadata.name}-pod-0`);
  process.stdout.write(`\nkube test: ${passed()} checks passed in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
}

const cleanupServers = () => p.dropServerState({ serverUrl: SERVER_URL, database: DATABASE, redisUrl: REDIS_URL, prefix: PREFIX });

p.runMain(main, () => run);
