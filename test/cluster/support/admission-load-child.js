// One cluster-admission instance in a process of its own, for the lock-loss property
// (test/cluster/admission-model-lock-loss.property.spec.ts): it runs the same permit-holding workers as
// the in-process instances and reports how many permits its workers hold, after every change and every
// few milliseconds, so the parent can add them up while it stops this process with SIGSTOP.
// Plain CommonJS on the compiled package (the Jest global setup builds dist/ first).
'use strict';
const { DataSource } = require('typeorm');
const { ClusterInstance } = require('../../../dist/src/cluster/cluster-instance');
const { ClusterAdmissionController } = require('../../../dist/src/admission/cluster/cluster-admission-controller');

const settings = JSON.parse(process.env.LOAD_CHILD_SETTINGS);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const { hold } = settings;
const holdMs = () => (Math.random() < hold.longShare ? hold.longMs / 2 + (Math.random() * hold.longMs) / 2 : 5 + Math.random() * hold.shortMs);
const running = { total: 0, perAgent: {} };
let revoked = 0;
let stopping = false;

function report() {
  if (process.connected) process.send({ type: 'running', total: running.total, perAgent: { ...running.perAgent }, revoked });
}

async function worker(controller, index) {
  while (!stopping) {
    const agent = settings.agents[(index + Math.floor(Math.random() * settings.agents.length)) % settings.agents.length];
    let permit;
    try {
      permit = await controller.acquire(agent, { queueTimeoutMs: 500 });
    } catch {
      await sleep(10);
      continue;
    }
    if (permit.signal.aborted) continue;
    let counted = true;
    running.total++;
    running.perAgent[agent] = (running.perAgent[agent] ?? 0) + 1;
    const stop = () => {
      if (!counted) return;
      counted = false;
      running.total--;
      running.perAgent[agent]--;
      report();
    };
    report();
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, holdMs());
      permit.signal.addEventListener('abort', () => {
        if (counted && permit.signal.reason?.details?.outcome === 'owner_down') revoked++;
        stop();
        clearTimeout(timer);
        resolve();
      }, { once: true });
    });
    stop();
    controller.release(permit);
  }
}

async function main() {
  const dataSource = new DataSource({ type: 'postgres', url: settings.url, extra: { application_name: settings.instanceId, max: 8 } });
  await dataSource.initialize();
  const instance = new ClusterInstance({ dataSource, instanceId: settings.instanceId, lockGraceMs: settings.lockGraceMs, lockGraceMarginMs: settings.lockGraceMarginMs, backoff: settings.backoff });
  await instance.start();
  const controller = new ClusterAdmissionController(settings.config, { instance, reapIntervalMs: settings.reapIntervalMs, listenerBackoff: settings.backoff });
  await controller.start();
  // the lazy lapse check runs before each periodic report: a resumed process reports what it revoked
  const reporter = setInterval(() => {
    controller.status();
    report();
  }, 3);
  const workers = Array.from({ length: settings.workers }, (_, index) => worker(controller, index));
  process.on('message', async (message) => {
    if (message !== 'stop') return;
    stopping = true;
    await Promise.all(workers);
    clearInterval(reporter);
    report();
    await controller.stop();
    await instance.stop();
    await dataSource.destroy();
    process.send({ type: 'stopped' }, () => process.exit(0));
  });
  process.send({ type: 'ready' });
}

main().catch((error) => {
  console.error(error && error.code ? error.code : 'child failed');
  process.exit(1);
});
