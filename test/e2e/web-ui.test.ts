import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { Browser, chromium } from 'playwright-core';
import { repoRoot } from '../../starter/local/paths';
import { readState, temporalUiUrl } from '../../starter/local/stack';
import { eventually, freshNamespace, testClusterAccess, uniqueName } from '../support/cluster';
import { listPods, mergePatch, testRest } from '../support/kube';
import { ManagerProcess, startManagerProcess } from '../support/manager';
import { TEST_DATA_DIR } from '../support/stack';

/**
 * What a user does in the Temporal Web UI, in a real browser (Debian's Chromium driven by
 * playwright-core): find a ReplicaSet's workflow by its search attributes, open its history, and
 * read the createPods / deletePods activities with the reasons the controller gave them.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = path.join(repoRoot, 'test-artifacts');
const rest = testRest(testClusterAccess());
const taskQueue = uniqueName('webui-e2e');
let manager: ManagerProcess;
let browser: Browser;
let ns: string;

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: install Debian's chromium package (.ci/run does) or set CHROMIUM_PATH`);
  ns = await freshNamespace(testClusterAccess(), 'webui');
  manager = await startManagerProcess(taskQueue, ['--controllers', 'replicaset']);
  // flags that keep Chromium from reaching for the network this machine does not have
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});

afterAll(async () => {
  await browser?.close();
  await rest.request('DELETE', `/apis/apps/v1/namespaces/${ns}/replicasets`, { body: { propagationPolicy: 'Background' } }).catch(() => undefined);
  await rest.request('DELETE', `/api/v1/namespaces/${ns}/pods`).catch(() => undefined);
  await manager?.kill();
});

test('a ReplicaSet\'s workflow is found by its search attributes and its history shows createPods and deletePods with their reasons', async () => {
  await rest.request('POST', `/apis/apps/v1/namespaces/${ns}/replicasets`, { body: {
    apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'shop' },
    spec: { replicas: 2, selector: { matchLabels: { app: 'shop' } },
      template: { metadata: { labels: { app: 'shop' } }, spec: { containers: [{ name: 'c', image: 'registry.invalid/shop:1' }] } } },
  } });
  const podsAre = (n: number) => eventually(`${n} pods`, async () => (await listPods(rest, ns, 'app=shop')).filter((p) => !p.metadata.deletionTimestamp).length === n, 60_000);
  await podsAre(2);
  await mergePatch(rest, `/apis/apps/v1/namespaces/${ns}/replicasets/shop`, { spec: { replicas: 1 } });
  await podsAre(1);

  const ui = temporalUiUrl(readState(TEST_DATA_DIR)!);
  const page = await browser.newPage({ viewport: { width: 1600, height: 1200 } });
  const workflowId = `replicaset/${ns}/shop`;
  const query = `KcmKind='ReplicaSet' AND KcmNamespace='${ns}' AND KcmName='shop'`;
  // visibility trails the start by a moment: reload until the list has it
  await eventually('workflow listed in the UI', async () => {
    await page.goto(`${ui}/namespaces/default/workflows?query=${encodeURIComponent(query)}`);
    return page.getByRole('link', { name: workflowId }).waitFor({ state: 'visible', timeout: 5000 }).then(() => true, () => false);
  }, 60_000, 1000);
  await page.getByRole('link', { name: workflowId }).click();
  await page.waitForURL(/\/history/);

  // the replicaset controller calls the API from local activities: the UI lists each as "Local
  // Activity" with its type, and its result holds the input the worker echoed (local-io.ts)
  const scheduled = (activity: string) => page.locator('tr', { hasText: 'Local Activity' }).filter({ hasText: activity });
  await scheduled('deletePods').first().waitFor({ timeout: 30_000 });
  expect(await scheduled('createPods').count()).toBeGreaterThanOrEqual(1);

  // expanding one shows the input the worker echoed with its result, and the input says why
  await scheduled('deletePods').first().click();
  await page.getByText(/scale down 2->1: 1 chosen by upstream's deletion order/).first().waitFor({ timeout: 10_000 });
  await scheduled('createPods').last().click();
  await page.getByText(/scale up 0->2: 2 in slow-start batches of 1, 1/).first().waitFor({ timeout: 10_000 });

  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const shot = path.join(ARTIFACTS, 'web-ui-replicaset-history.png');
  await page.screenshot({ path: shot, fullPage: true });
  expect(fs.statSync(shot).size).toBeGreaterThan(10_000);

  // the summary the informer set at start, which the UI lists under User Metadata
  const connection = await Connection.connect({ address: `127.0.0.1:${readState(TEST_DATA_DIR)!.ports.temporal}` });
  try {
    const described = await new Client({ connection }).workflow.getHandle(workflowId).describe();
    expect(await described.staticSummary()).toBe(`ReplicaSet ${ns}/shop (replicaset)`);
  } finally {
    await connection.close();
  }
}, 180_000);
