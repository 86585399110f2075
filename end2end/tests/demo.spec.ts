import { test, expect } from '@playwright/test';
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { open } from './helpers';
import { mintToken } from '../global-setup';

// `kandev-recovery demo` on its own port and database, with its simulated
// agents on the real clock: a newcomer's first minute.
const root = path.resolve(__dirname, '../..');
const bin = process.env.KANDEV_BIN ?? path.join(root, 'target/debug/kandev-recovery');
const port = 3000 + 100 + Math.floor(Math.random() * 800);
const base = `http://127.0.0.1:${port}`;
let demo: ChildProcess | undefined;
let dir = '';
let token = '';

test.beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kandev-demo-'));
  demo = spawn(bin, ['demo', '--listen', `127.0.0.1:${port}`, '--database-url', `sqlite://${dir}/demo.db`], {
    env: { ...process.env, LEPTOS_SITE_ROOT: path.join(root, 'target/site'), RUST_LOG: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`${base}/readyz`)).ok) {
        // The demo checks credentials too: a viewer's token on its database.
        token = mintToken(`sqlite://${dir}/demo.db`, 'demo viewer', 'admin');
        return;
      }
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the demo did not start at ${base}`);
});

test.afterAll(async () => {
  demo?.kill('SIGTERM');
  fs.rmSync(dir, { recursive: true, force: true });
});

test('demo: a capacity route passes retry_wait → retrying → active live within a minute', async ({ browser }) => {
  test.setTimeout(90_000);
  const context = await browser.newContext({ extraHTTPHeaders: { Authorization: `Bearer ${token}` } });
  const page = await context.newPage();
  const started = Date.now();
  const left = () => Math.max(1_000, 60_000 - (Date.now() - started));
  await open(page, `${base}/routes`);
  const card = page.getByRole('listitem').filter({ hasText: 'demo: capacity (round 1)' });
  const badge = card.locator('.state-badge');
  await expect(badge).toHaveText('Waiting to retry', { timeout: left() });
  await expect(card).toContainText('Provider overloaded');
  await expect(badge).toHaveText('Retrying', { timeout: left() });
  await expect(badge).toHaveText('Working', { timeout: left() });
  expect(Date.now() - started).toBeLessThan(60_000);
  // The switch scenario switches: Gemini's retries run out and the route
  // moves on to Claude instead of stopping — at once, or after waiting in
  // "Switching" when the capacity scenario's circuit paused Claude a moment
  // before (which of the two depends on how the rounds interleave).
  const switching = page.getByRole('listitem').filter({ hasText: 'demo: switch (round 1)' });
  await expect(switching).toContainText('Claude', { timeout: left() });
  await expect(switching.locator('.state-badge')).toHaveText('Working', { timeout: left() });
  expect(Date.now() - started).toBeLessThan(60_000);
  // The other scenarios are there too, each where docs/design.md says it goes.
  for (const scenario of ['demo: unknown error (round 1)', 'demo: tool activity (round 1)']) {
    await expect(page.getByRole('listitem').filter({ hasText: scenario }).locator('.state-badge'))
      .toHaveText('Stopped: needs you', { timeout: 30_000 });
  }
});
