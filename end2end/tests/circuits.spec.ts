import { test, expect, APIRequestContext, Page, Locator } from '@playwright/test';
import { createRoute, epochMs, expectPhoneFriendly, open, policy, reportFailure, routeFact } from './helpers';

// Circuits are shared by every route on a resource, and every test of the
// run shares one server: each test names an account of its own.

function account(): string {
  return `team-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
}

/** One candidate on Anthropic's `accountRef` that waits up to two hours for a reset, once. */
async function profileOnAccount(request: APIRequestContext, accountRef: string) {
  const res = await request.post('/api/v1/profiles', {
    data: {
      name: `E2E circuits ${accountRef}`,
      candidates: [{
        label: 'Claude', agent: 'claude-code', provider_id: 'anthropic', account_ref: accountRef,
        policy: { version: 1, transient: policy(0, 0, 0, 'skip'), hard: policy(0, 0, 7200, 'stop') },
      }],
    },
  });
  expect(res.status()).toBe(201);
  return res.json();
}

/** Claude Code's usage limit, resetting an hour after the route's server time. */
function usageLimit(route: any) {
  const reset = Math.floor(epochMs(route.server_time) / 1000) + 3600;
  return [
    { kind: 'stderr', lines: [`Claude AI usage limit reached|${reset}`] },
    { kind: 'process_exit', exit_code: 1, signal: null },
  ];
}

// ---- find ----

function circuitCard(page: Page, label: string): Locator {
  return page.locator('li.circuit-card').filter({ has: page.getByRole('heading', { level: 2, name: label, exact: true }) });
}

function circuitFact(card: Locator, term: string): Locator {
  return card
    .locator('.fact')
    .filter({ has: card.page().getByRole('term').filter({ hasText: new RegExp(`^${term}$`) }) })
    .getByRole('definition');
}

// ---- act ----

/** Two routes hit the account's usage limit: the first opens its circuit, the second waits for it. */
async function pauseAccount(request: APIRequestContext, accountRef: string) {
  const p = await profileOnAccount(request, accountRef);
  const first = await createRoute(request, p.id, 'opener');
  const second = await createRoute(request, p.id, 'waiter');
  await reportFailure(request, first, usageLimit(first));
  const answer = await reportFailure(request, second, usageLimit(second));
  expect(answer.route.pending.circuit.resource).toBe(`anthropic/${accountRef}`);
  return { first, second: answer.route };
}

// ---- tests ----

test('a paused account is listed with its deadline and the routes waiting for it', async ({ page, request }) => {
  const ref = account();
  const { second } = await pauseAccount(request, ref);
  await open(page, '/circuits');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Circuits');
  const card = circuitCard(page, `Anthropic account ${ref}`);
  await expect(card.locator('.state-badge')).toHaveText('Paused');
  await expect(circuitFact(card, 'Waiting')).toHaveText('1 route');
  await expect(circuitFact(card, 'Cause')).toContainText('Usage limit');
  await expect(card.locator('time').first()).toHaveAttribute(
    'datetime',
    new Date(epochMs(second.pending.circuit.until)).toISOString(),
  );
  await page.getByRole('link', { name: 'Circuits' }).click();
  await expect(card).toBeVisible();
});

test("a held route's panel says which circuit it waits for and how many wait with it", async ({ page, request }) => {
  const ref = account();
  const { first, second } = await pauseAccount(request, ref);
  await open(page, `/routes/${second.id}`);
  await expect(routeFact(page, 'Waiting for')).toContainText(`Anthropic account ${ref} paused until`);
  await expect(routeFact(page, 'Waiting for')).toContainText('1 route waiting, one probe at');
  // The route that opened the circuit waits by its own policy: no hold shown.
  await open(page, `/routes/${first.id}`);
  await expect(routeFact(page, 'Deadline')).toBeVisible();
  await expect(routeFact(page, 'Waiting for')).toHaveCount(0);
});

test('the circuits page works on a phone', async ({ page, request }) => {
  const ref = account();
  await pauseAccount(request, ref);
  await page.setViewportSize({ width: 390, height: 844 });
  await open(page, '/circuits');
  await expect(circuitCard(page, `Anthropic account ${ref}`)).toBeVisible();
  await expectPhoneFriendly(page);
});

test('an administrator probes a paused circuit now, then releases it, and the waiting route goes', async ({ page, request }) => {
  const ref = account();
  const { second } = await pauseAccount(request, ref);
  await open(page, '/circuits');
  const card = circuitCard(page, `Anthropic account ${ref}`);
  await expect(circuitFact(card, 'Waiting')).toHaveText('1 route');
  // Probe now: the pause ends and the waiting route goes to be the probe.
  await card.getByRole('button', { name: 'Probe now' }).click();
  await expect(circuitFact(card, 'Waiting')).toHaveText('0 routes');
  // Wait until the route has claimed the probe: between the pause ending and
  // the claim, a Release is refused as stale ("changed meanwhile"), rightly.
  await expect(card.locator('.state-badge')).toHaveText('Probing');
  // Release: closed, nothing waits for it any more, and no controls are left.
  await card.getByRole('button', { name: 'Release' }).click();
  await expect(card.locator('.state-badge')).toHaveText('Working');
  await expect(circuitFact(card, 'Waiting')).toHaveText('0 routes');
  await expect(card.getByRole('button', { name: 'Release' })).toHaveCount(0);
  // Audited with who did it.
  const trail = await request.get(`/api/v1/audit?subject=${encodeURIComponent(`account:anthropic/${ref}`)}`);
  expect(trail.status()).toBe(200);
  const actions = (await trail.json()).map((e: any) => e.action);
  expect(actions).toEqual(['circuit.probed', 'circuit.released']);
  const route = await (await request.get(`/api/v1/routes/${second.id}`)).json();
  expect(route.pending?.circuit).toBeUndefined();
});
