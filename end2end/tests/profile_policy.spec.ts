import { test, expect } from '@playwright/test';
import {
  candidateRow, classPolicy, createProfile, expand, expectPhoneFriendly, expectPreview, open, setRetry,
  setWait, uniqueName,
} from './helpers';

test('pages load every resource they ask for (no failed requests)', async ({ page }) => {
  const failed: string[] = [];
  page.on('response', (res) => {
    if (res.status() >= 400) failed.push(`${res.status()} ${res.url()}`);
  });
  // A request cut short by the next navigation is not a failure.
  page.on('requestfailed', (req) => {
    if (!req.failure()?.errorText.includes('ERR_ABORTED')) failed.push(`failed ${req.url()}`);
  });
  for (const path of ['/profiles', '/routes']) await open(page, path);
  await expect(page.locator('link[rel="icon"]')).toHaveAttribute('href', '/favicon.svg');
  const icon = await page.request.get('/favicon.svg');
  expect(icon.status()).toBe(200);
  expect(icon.headers()['content-type']).toContain('svg');
  expect(failed).toEqual([]);
});

test('create a profile with two candidates and edit the transient policy', async ({ page }) => {
  const name = uniqueName('E2E desktop');
  await page.setViewportSize({ width: 1280, height: 900 });
  await open(page, '/profiles/new');

  await page.getByLabel('Profile name').fill(name);
  const first = candidateRow(page, 0);
  await first.getByLabel('Label', { exact: true }).fill('Claude Code');
  await first.getByLabel('Agent', { exact: true }).fill('claude-code');
  await page.getByRole('button', { name: 'Add candidate' }).click();
  const second = candidateRow(page, 1);
  await second.getByLabel('Label', { exact: true }).fill('Codex');
  await second.getByLabel('Agent', { exact: true }).fill('codex');

  const transient = classPolicy(first, 'Transient errors');
  await expect(transient).toContainText('529 Overloaded');
  await expect(classPolicy(first, 'Hard errors')).toContainText('5-hour usage limit');
  await setRetry(transient, '3', '5');
  await expectPreview(transient, '5 s, 10 s, 20 s');
  await expectPreview(transient, 'then skip to the next candidate');

  // Out of range: the inline error appears before anything is sent.
  let sent = 0;
  page.on('request', (r) => { if (r.url().includes('/api/v1/profiles') && r.method() !== 'GET') sent++; });
  await transient.getByLabel('Maximum retries').fill('11');
  await expect(transient.getByText('maximum retries must be between 1 and 10')).toBeVisible();
  await expect(transient.getByLabel('Maximum retries')).toHaveAttribute('aria-invalid', 'true');
  await page.getByRole('button', { name: 'Create profile' }).click();
  await expect(page.getByRole('status')).toContainText('need');
  expect(sent).toBe(0);

  await transient.getByLabel('Maximum retries').fill('3');
  await expect(transient.getByLabel('Maximum retries')).toHaveAttribute('aria-invalid', 'false');
  await page.getByRole('button', { name: 'Create profile' }).click();
  await expect(page).toHaveURL(/\/profiles\/[0-9a-f]+$/);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(name);

  // Reload: the values come back from the server.
  await open(page, page.url());
  const saved = candidateRow(page, 0);
  await expect(saved.locator('.candidate-label')).toHaveText('Claude Code');
  await expect(candidateRow(page, 1).locator('.candidate-label')).toHaveText('Codex');
  await expand(saved);
  const savedTransient = classPolicy(saved, 'Transient errors');
  await expect(savedTransient.getByRole('switch', { name: 'Retry the same candidate' })).toBeChecked();
  await expect(savedTransient.getByLabel('Maximum retries')).toHaveValue('3');
  await expect(savedTransient.getByLabel('Initial interval', { exact: true })).toHaveValue('5');
  await expectPreview(savedTransient, 'Retry after 5 s, 10 s, 20 s, then skip to the next candidate.');
});

test('reorder candidates with buttons and save', async ({ page, request }) => {
  const p = await createProfile(request, uniqueName('E2E reorder'), ['Alpha', 'Beta', 'Gamma']);
  await open(page, `/profiles/${p.id}`);
  await page.getByRole('button', { name: 'Move down: Alpha' }).click();
  await expect(candidateRow(page, 1).locator('.candidate-label')).toHaveText('Alpha');
  await page.getByRole('button', { name: 'Move up: Gamma' }).click();
  await page.getByRole('button', { name: 'Remove: Beta' }).click();
  await expect(page.locator('li.candidate .candidate-label')).toHaveText(['Gamma', 'Alpha']);
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status')).toContainText('Saved (revision 2)');
  const res = await request.get(`/api/v1/profiles/${p.id}`);
  const body = await res.json();
  expect(body.candidates.map((c: { label: string }) => c.label)).toEqual(['Gamma', 'Alpha']);
});

test('server field errors appear at the same fields', async ({ page, request }) => {
  const p = await createProfile(request, uniqueName('E2E server errors'), ['Alpha']);
  await open(page, `/profiles/${p.id}`);
  // Stand in for a server whose limits are stricter than this browser build.
  await page.route(`**/api/v1/profiles/${p.id}`, async (route) => {
    if (route.request().method() !== 'PUT') return route.continue();
    await route.fulfill({
      status: 422,
      contentType: 'application/json',
      body: JSON.stringify({
        error: 'validation_failed',
        message: 'Some fields are invalid; nothing was saved.',
        errors: [{ field: 'candidates[0].policy.hard.wait_for_reset.max_wait_seconds', code: 'out_of_range',
                   message: 'maximum wait (seconds) must be between 1 and 60', min: 1, max: 60 }],
      }),
    });
  });
  const row = candidateRow(page, 0);
  await expand(row);
  const hard = classPolicy(row, 'Hard errors');
  await setWait(hard, '5', 'minutes');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(hard.getByText('must be between 1 and 60')).toBeVisible();
  await expect(hard.getByLabel('Maximum wait', { exact: true })).toHaveAttribute('aria-invalid', 'true');
  // Editing the field clears the server's stale verdict.
  await hard.getByLabel('Maximum wait', { exact: true }).fill('1');
  await expect(hard.getByText('must be between 1 and 60')).toHaveCount(0);
});

test('a stale save shows that someone else saved first', async ({ page, request }) => {
  const p = await createProfile(request, uniqueName('E2E stale'), ['Alpha']);
  await open(page, `/profiles/${p.id}`);
  const res = await request.put(`/api/v1/profiles/${p.id}`, { data: { ...p, name: 'Renamed elsewhere' } });
  expect(res.status()).toBe(200);
  await page.getByLabel('Profile name').fill('My rename');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status')).toContainText('Someone else saved this profile');
  await page.getByRole('button', { name: 'Load the current version' }).click();
  await expect(page.getByLabel('Profile name')).toHaveValue('Renamed elsewhere');
});

test('phone: edit both class policies in one column', async ({ page, request }) => {
  const p = await createProfile(request, uniqueName('E2E phone with a long profile name that must wrap'), ['Claude Code (Sonnet 4.5, subscription)', 'Codex']);
  await page.setViewportSize({ width: 390, height: 844 });
  await open(page, `/profiles/${p.id}`);
  await expectPhoneFriendly(page);

  const row = candidateRow(page, 0);
  await expand(row);
  const transient = classPolicy(row, 'Transient errors');
  const hard = classPolicy(row, 'Hard errors');
  await setRetry(transient, '3', '5');
  await expectPreview(transient, '5 s, 10 s, 20 s');
  await transient.getByLabel('Maximum retries').fill('11');
  await expect(transient.getByText('maximum retries must be between 1 and 10')).toBeVisible();
  await transient.getByLabel('Maximum retries').fill('3');
  await setWait(hard, '2', 'hours');
  await hard.getByText('Stop', { exact: true }).click();
  await expectPreview(hard, 'within 2 h');
  await expectPreview(hard, 'stop for manual recovery');

  // One column: the two class sections stack.
  const t = await transient.boundingBox();
  const h = await hard.boundingBox();
  expect(t && h && h.y >= t.y + t.height - 1).toBeTruthy();
  await expectPhoneFriendly(page);

  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status')).toContainText('Saved (revision 2)');
  await open(page, `/profiles/${p.id}`);
  const saved = candidateRow(page, 0);
  await expand(saved);
  await expect(classPolicy(saved, 'Transient errors').getByLabel('Maximum retries')).toHaveValue('3');
  await expect(classPolicy(saved, 'Hard errors').getByLabel('Maximum wait', { exact: true })).toHaveValue('2');
  await expect(classPolicy(saved, 'Hard errors').getByLabel('Maximum wait unit')).toHaveValue('hours');
  await expectPhoneFriendly(page);
});

test('profiles list links to the seeded example', async ({ page }) => {
  await open(page, '/profiles');
  await expect(page.getByRole('heading', { name: 'Dynamic profiles' })).toBeVisible();
  await page.getByRole('link', { name: /Example: Claude then Codex/ }).first().click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Example: Claude then Codex');
});
