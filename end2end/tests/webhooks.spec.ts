import { test, expect, Page, Locator } from '@playwright/test';
import { open } from './helpers';

// The suite's server runs without --allow-private-webhooks and may have no
// DNS, so the subscription names a public address literally (no lookup).
// Deliveries start only with events committed after it, and this test
// commits none before removing it: nothing is ever sent there.

// ---- find ----

function hookCard(page: Page, url: string): Locator {
  return page.getByRole('listitem', { name: url, exact: true });
}

// ---- tests ----

test('an administrator adds a webhook with events picked from the kinds, sees its log and removes it', async ({ page }) => {
  const url = `https://93.184.215.14/kandev-e2e-${Date.now().toString(36)}`;
  await open(page, '/admin/webhooks');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Webhooks');
  // A bad URL is refused with the field named; nothing is added.
  await page.getByLabel('URL').fill('ftp://hooks.example.com/x');
  await page.getByLabel('Signing secret (16 characters or more)').fill('whsec_e2e_0123456789');
  await page.getByRole('checkbox', { name: 'route.action_required' }).check();
  await page.getByRole('button', { name: 'Subscribe' }).click();
  await expect(page.getByRole('status')).toContainText('url:');
  // A good one is listed with its events.
  await page.getByLabel('URL').fill(url);
  await page.getByRole('checkbox', { name: 'circuit.opened' }).check();
  await page.getByRole('button', { name: 'Subscribe' }).click();
  await expect(page.getByRole('status')).toHaveText(`Subscribed ${url}.`);
  const card = hookCard(page, url);
  await expect(card).toContainText('circuit.opened, route.action_required');
  await card.getByRole('button', { name: 'Delivery log' }).click();
  await expect(card.getByText('No delivery yet.')).toBeVisible();
  // Removed: gone from the page and from the API.
  await card.getByRole('button', { name: 'Remove' }).click();
  await expect(card).toHaveCount(0);
  const left = await (await page.request.get('/api/v1/webhooks')).json();
  expect(left.map((h: any) => h.url)).not.toContain(url);
});
