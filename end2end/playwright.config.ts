import { defineConfig } from '@playwright/test';
import * as path from 'node:path';

// Playwright starts the server (KANDEV_BIN, by default the debug binary
// `cargo test` built, serving the site `cargo xtask site` put in
// target/site) on DATABASE_URL, then runs these tests; global-setup mints
// their token. With E2E_BASE_URL set it tests that server instead and
// starts nothing. Browsers come from Debian's chromium: Playwright's own
// download cannot run here.
const root = path.resolve(__dirname, '..');
const baseURL = process.env.E2E_BASE_URL ?? 'http://127.0.0.1:3000';
const bin = process.env.KANDEV_BIN ?? path.join(root, 'target/debug/kandev-recovery');

export default defineConfig({
  testDir: './tests',
  globalSetup: './global-setup.ts',
  timeout: 60_000,
  // The whole suite normally takes a minute or two; a hang stops it at
  // 10 minutes with the tests it interrupted named, before CI's limit.
  globalTimeout: 600_000,
  expect: { timeout: 10_000 },
  fullyParallel: true,
  workers: process.env.CI ? 2 : undefined,
  retries: 0,
  forbidOnly: !!process.env.CI,
  reporter: process.env.CI ? [['list']] : [['list'], ['html', { open: 'never' }]],
  use: {
    baseURL,
    // global-setup.ts mints an admin token; the workers read it here.
    extraHTTPHeaders: process.env.KANDEV_E2E_TOKEN
      ? { Authorization: `Bearer ${process.env.KANDEV_E2E_TOKEN}` }
      : {},
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
  projects: [{ name: 'chromium' }],
  webServer: process.env.E2E_BASE_URL
    ? undefined
    : {
        command: `"${bin}" serve --listen 127.0.0.1:3000`,
        cwd: root,
        url: `${baseURL}/readyz`,
        timeout: 120_000,
        reuseExistingServer: false,
        stdout: 'ignore',
        stderr: 'pipe',
        env: { ...process.env, LEPTOS_SITE_ROOT: path.join(root, 'target/site') } as Record<string, string>,
      },
});
