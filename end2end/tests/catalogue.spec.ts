import { test, expect, request as playwrightRequest } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import { bin } from '../global-setup';
import { createProfile, createRoute, open, reportFailure, uniqueName } from './helpers';

// The Catalogue page: the version in force, the unknown log by count and
// recency with the attempts each failure was seen in (links to the route
// panel), and how many logged unknowns the catalogue in force classifies.
// Every test of the run shares one server (and its unknown log): each
// test's failure carries a word of its own, letters only (the log folds
// digits).

const base = process.env.E2E_BASE_URL ?? 'http://127.0.0.1:3000';

function word(): string {
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  return Array.from({ length: 10 }, () => letters[Math.floor(Math.random() * 26)]).join('');
}

test('the unknown log lists a failure with its attempt, and the version in force', async ({ page, request }) => {
  const text = `the ${word()} capacitor desynchronised`;
  const p = await createProfile(request, uniqueName('E2E catalogue'), ['Claude']);
  const route = await createRoute(request, p.id, 'unknown');
  const answer = await reportFailure(request, route, [{ kind: 'stderr', lines: [text] }]);
  expect(answer.classification.class).toBe('unclassified');
  const current = await (await request.get('/api/v1/catalogue/current')).json();

  await open(page, '/catalogue');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Catalogue');
  const inForce = page.getByRole('region', { name: 'In force' });
  await expect(inForce).toContainText(current.version);
  await expect(inForce).toContainText(`${current.rule_count}`);
  await expect(page.locator('.reclassify-summary')).toContainText(`Catalogue ${current.version} now classifies`);

  const card = page.locator('article.unknown-card').filter({ hasText: text });
  await expect(card).toHaveCount(1);
  await expect(card).toContainText('1 times');
  await expect(card).toContainText('claude-code');
  const id = await card.getAttribute('data-id');
  expect(id).toMatch(/^[0-9a-f]{16}$/);
  await expect(card.locator('.unknown-command')).toHaveText(`kandev-recovery catalogue fixture-from-unknown ${id}`);
  const attempt = card.getByRole('link', { name: `${route.id} #1` });
  await expect(attempt).toHaveAttribute('href', `/routes/${route.id}`);
  // The API answers the same entry with its skeleton.
  const detail = await (await request.get(`/api/v1/catalogue/unknown/${id}`)).json();
  expect(detail.skeleton.items[0]).toMatchObject({ kind: 'stderr', excerpt: text });

  // A second sighting counts up, and the link opens the route panel.
  const again = await createRoute(request, p.id, 'unknown again');
  await reportFailure(request, again, [{ kind: 'stderr', lines: [text] }]);
  await open(page, '/catalogue');
  await expect(card).toContainText('2 times');
  await expect(card.locator('a.unknown-attempt')).toHaveCount(2);
  await card.getByRole('link', { name: `${route.id} #1` }).click();
  await expect(page).toHaveURL(new RegExp(`/routes/${route.id}$`));
});

test.describe('without catalogue:read', () => {
  // Signed in through a link as someone who only selects profiles.
  test.use({ extraHTTPHeaders: {} });

  test('the page says what is missing and the header has no link to it', async ({ page }) => {
    const name = uniqueName('selector');
    const out = execFileSync(
      bin,
      ['user', 'add', name, '--permissions', 'profiles:select', '--url', base, '--database-url', process.env.DATABASE_URL!],
      { encoding: 'utf8' },
    );
    await page.goto(out.trim().split('\n').pop()!.trim());
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.locator('.viewer')).toContainText(`Signed in as ${name}`);
    await expect(page.locator('.viewer').getByRole('link', { name: 'Catalogue' })).toHaveCount(0);
    await page.goto('/catalogue');
    await expect(page.getByRole('alert')).toContainText('catalogue:read');
    await expect(page.locator('article.unknown-card')).toHaveCount(0);
    // The API refuses it as well.
    const api = await playwrightRequest.newContext({ baseURL: base, storageState: await page.context().storageState() });
    expect((await api.get('/api/v1/catalogue/unknown')).status()).toBe(403);
    await api.dispose();
  });
});
