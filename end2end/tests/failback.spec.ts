import { test, expect } from '@playwright/test';
import {
  createProfile, createProfileWithPolicies, createRoute, deliver, historyColumn, open, overloaded, policy,
  reportFailure, routeFact, routeState, uniqueName,
} from './helpers';

// Failback in the app: the profile editor's preference (where a route goes
// after a success once it fell back), and a route on a fallback that goes
// back to its first candidate. No test clock: a skip on a 529 holds nothing,
// so the first candidate is eligible again at the route's next invocation.

const preference = (page: import('@playwright/test').Page, value: 'first_eligible' | 'stay') =>
  page.getByRole('group', { name: 'After a fallback' }).locator(`input[name="prefer"][value="${value}"]`);

test('the profile editor shows the preference, saves it and keeps it', async ({ page, request }) => {
  const p = await createProfile(request, uniqueName('E2E prefer'), ['Claude Code', 'Codex']);
  expect(p.prefer).toBe('first_eligible');
  await open(page, `/profiles/${p.id}`);
  const group = page.getByRole('group', { name: 'After a fallback' });
  await expect(group).toContainText('Return to the first eligible candidate');
  await expect(group).toContainText('never in the middle of one');
  await expect(preference(page, 'first_eligible')).toBeChecked();

  await group.getByText('Stay on the candidate that worked').click();
  await expect(preference(page, 'stay')).toBeChecked();
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status')).toContainText('Saved (revision 2)');
  expect((await (await request.get(`/api/v1/profiles/${p.id}`)).json()).prefer).toBe('stay');

  // Reloaded, the editor shows what the profile has, and saving another
  // change keeps it.
  await open(page, `/profiles/${p.id}`);
  await expect(preference(page, 'stay')).toBeChecked();
  await expect(preference(page, 'first_eligible')).not.toBeChecked();
  await page.getByLabel('Profile name').fill(`${p.name} renamed`);
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status')).toContainText('Saved (revision 3)');
  const saved = await (await request.get(`/api/v1/profiles/${p.id}`)).json();
  expect(saved.prefer).toBe('stay');
  expect(saved.name).toBe(`${p.name} renamed`);
});

test('a route on a fallback says so, in its panel and the list, then goes back', async ({ page, request }) => {
  const p = await createProfileWithPolicies(request, uniqueName('E2E failback'), [
    { label: 'Claude', transient: policy(0, 0, 0, 'skip') },
    { label: 'Codex' },
  ]);
  const ref = uniqueName('failback-task').replace(' ', '-');
  let route = await createRoute(request, p.id, ref);
  await open(page, `/routes/${route.id}`);
  await expect(routeState(page)).toHaveText('Working');
  await expect(routeFact(page, 'Fallback')).toHaveCount(0);

  // Claude is overloaded: the route skips to Codex, which takes the prompt.
  const answer = await reportFailure(request, route, overloaded());
  expect(answer.decision.kind).toBe('skip');
  route = await deliver(request, route.id);
  expect(route.candidate.label).toBe('Codex');
  await expect(routeState(page)).toHaveText('Working');
  await expect(routeFact(page, 'Candidate')).toHaveText('Codex (candidate 2 of 2)');
  await expect(routeFact(page, 'Fallback')).toHaveText('On fallback Codex; returns to Claude when eligible');

  // The route list marks it as on a fallback now.
  await open(page, `/routes?ref=${encodeURIComponent(ref)}`);
  const card = page.locator('li.route-card').filter({ hasText: route.id });
  await expect(card).toHaveAttribute('data-fallback', 'true');
  await expect(card.locator('.route-card-fallback')).toHaveText('On fallback Codex; returns to Claude when eligible');

  // Codex succeeds: the next invocation goes back to Claude, and says why.
  await open(page, `/routes/${route.id}`);
  const res = await request.post(`/api/v1/routes/${route.id}/success`, {
    data: { generation: route.generation, invocation_id: route.invocation_id, prompt_generation: route.prompt_generation },
  });
  expect(res.status()).toBe(200);
  const back = await res.json();
  expect(back.candidate.label).toBe('Claude');
  await expect(routeFact(page, 'Candidate')).toHaveText('Claude (candidate 1 of 2)');
  await expect(routeFact(page, 'Fallback')).toHaveCount(0);
  const returned = page.locator('table.attempts tbody tr[data-decision="returned"]');
  await expect(returned).toHaveCount(1);
  await expect(returned.locator('td[data-label="Error"]')).toHaveText('Returned from Codex');
  await expect(returned.locator('td[data-label="Decision"]')).toHaveText(
    "Back to Claude from Codex: first in the profile's order and eligible",
  );
  await expect(historyColumn(page, 'Decision')).toHaveCount(2);

  await open(page, `/routes?ref=${encodeURIComponent(ref)}`);
  await expect(page.locator('li.route-card').filter({ hasText: route.id })).toHaveAttribute('data-fallback', 'false');
});

test('a profile that prefers to stay shows no fallback', async ({ page, request }) => {
  const p = await createProfileWithPolicies(request, uniqueName('E2E stay'), [
    { label: 'Claude', transient: policy(0, 0, 0, 'skip') },
    { label: 'Codex' },
  ]);
  const put = await request.put(`/api/v1/profiles/${p.id}`, {
    data: { name: p.name, revision: p.revision, prefer: 'stay', candidates: p.candidates },
  });
  expect(put.status()).toBe(200);
  let route = await createRoute(request, p.id, uniqueName('stay-task').replace(' ', '-'));
  await reportFailure(request, route, overloaded());
  route = await deliver(request, route.id);
  await open(page, `/routes/${route.id}`);
  await expect(routeFact(page, 'Candidate')).toHaveText('Codex (candidate 2 of 2)');
  await expect(routeFact(page, 'Fallback')).toHaveCount(0);
});
