import { test, expect, Page, Locator } from '@playwright/test';
import { open, policy, uniqueName } from './helpers';

// ---- find ----

function changeRow(page: Page, field: string): Locator {
  return page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: field, exact: true }) });
}

// ---- tests ----

test('two revisions of a profile are compared field by field, and any two can be picked', async ({ page, request }) => {
  const name = uniqueName('E2E revisions');
  const created = await request.post('/api/v1/profiles', {
    data: {
      name,
      candidates: [{ label: 'Claude', agent: 'claude-code', policy: { version: 1, transient: policy(3, 5, 0, 'skip'), hard: policy(0, 0, 0, 'stop') } }],
    },
  });
  expect(created.status()).toBe(201);
  const p1 = await created.json();
  // Revision 2: more retries; revision 3: renamed as well.
  const c2 = structuredClone(p1.candidates);
  c2[0].policy.transient.retry.max_retries = 5;
  const r2 = await request.put(`/api/v1/profiles/${p1.id}`, { data: { name, revision: p1.revision, prefer: p1.prefer, candidates: c2 } });
  expect(r2.status()).toBe(200);
  const p2 = await r2.json();
  const r3 = await request.put(`/api/v1/profiles/${p1.id}`, { data: { name: `${name} renamed`, revision: p2.revision, prefer: p2.prefer, candidates: p2.candidates } });
  expect(r3.status()).toBe(200);

  await open(page, `/profiles/${p1.id}/revisions`);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Revisions');
  // The latest two by default: only the name changed.
  const table = page.getByRole('table');
  await expect(table.locator('caption')).toHaveText('1 change from revision 2 to revision 3');
  await expect(changeRow(page, 'name').getByRole('cell')).toHaveText([`${name}`, `${name} renamed`]);
  // The first against the last: the retry count and the name.
  await page.getByLabel('From', { exact: true }).selectOption('1');
  await expect(table.locator('caption')).toHaveText('2 changes from revision 1 to revision 3');
  await expect(changeRow(page, 'candidates[0].policy.transient.retry.max_retries').getByRole('cell')).toHaveText(['3', '5']);
  // The same revision twice: nothing changed.
  await page.getByLabel('To', { exact: true }).selectOption('1');
  await expect(page.getByText('Revisions 1 and 1 are the same.')).toBeVisible();
  await expect(page.getByLabel('From', { exact: true }).locator('option')).toHaveCount(3);
  await expect(page.getByLabel('From', { exact: true }).locator('option').first()).toContainText('token');
});
