import { defineConfig } from '@playwright/test';

// `cargo leptos end-to-end` starts the server and then runs these tests;
// global-setup waits until it answers. Browsers come from Debian's
// chromium: Playwright's own download cannot run here.
const baseURL = process.env.E2E_BASE_URL ?? 'http://127.0.0.1:3000';

export default defineConfig({
  testDir: './tests',
  globalSetup: './global-setup.ts',
  timeout: 60_000,
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
});
