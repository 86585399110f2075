import { test, expect, APIRequestContext } from '@playwright/test';
import {
  actionResult, createProfileWithPolicies, createRoute, epochMs, liveIndicator, open, overloaded, policy,
  reportFailure, routeAction, routeFact, routeState, uniqueName,
} from './helpers';

// Retry now and Stop pressed in the browser while a route waits — for a
// retry, and for a provider's reset — and what the server did about it:
// one dispatch at once, or none ever. The waits are an hour and more away
// on the shared test clock (routes.spec.ts moves it by 35 s in all), so no
// timer fires during these tests; the timer's part (a voided schedule
// never fires) is server/tests/it/paths.rs's, which moves its own clock.

/** Claude Code's usage limit, resetting `seconds` after the server's `now`. */
function usageLimitIn(serverTime: string, seconds: number) {
  const reset = Math.floor(epochMs(serverTime) / 1000) + seconds;
  return [
    { kind: 'stderr', lines: [`Claude AI usage limit reached|${reset}`] },
    { kind: 'process_exit', exit_code: 1, signal: null },
  ];
}

/** The route's due dispatches, claimed (with a lease, as a runner would). */
async function claim(request: APIRequestContext, routeId: string) {
  const res = await request.post('/api/v1/dispatches/claim', {
    data: { route_id: routeId, lease_seconds: 60, wait_seconds: 0 },
  });
  expect(res.status()).toBe(200);
  return (await res.json()).dispatches as any[];
}

const waits = [
  { state: 'retry_wait', heading: 'Waiting to retry', reason: 'retry', retry: 'Retry 1 of 3 in progress' },
  {
    state: 'waiting_for_reset', heading: "Waiting for the provider's reset", reason: 'reset_retry',
    retry: "The try after the provider's reset is in progress",
  },
] as const;

/** A fresh route waiting in `state`: an hour's retry, or a reset two hours out. */
async function waitingRoute(request: APIRequestContext, state: (typeof waits)[number]['state']) {
  const p = await createProfileWithPolicies(request, uniqueName(`E2E ${state}`), [
    { label: 'Claude', transient: policy(3, 3600, 0, 'skip'), hard: policy(0, 0, 86_400, 'stop') },
    { label: 'Codex' },
  ]);
  const route = await createRoute(request, p.id, uniqueName('task'));
  const items = state === 'retry_wait' ? overloaded() : usageLimitIn(route.server_time, 7200);
  const answer = await reportFailure(request, route, items);
  expect(answer.route.state).toBe(state);
  return answer.route;
}

for (const wait of waits) {
  test(`Retry now while ${wait.state} starts the attempt at once, dispatched once`, async ({ page, request }) => {
    const route = await waitingRoute(request, wait.state);
    await open(page, `/routes/${route.id}`);
    await expect(liveIndicator(page)).toHaveText('Live');
    await expect(routeState(page)).toHaveText(wait.heading);
    await expect(routeAction(page, 'Stop')).toBeVisible();

    await routeAction(page, 'Retry now').click();
    await expect(routeState(page)).toHaveText('Retrying');
    await expect(actionResult(page)).toHaveText('Retry of Claude requested.');
    await expect(routeFact(page, 'Retry')).toHaveText(wait.retry);
    await expect(page.locator('time.route-deadline')).toHaveCount(0);
    // In flight, the route can still be stopped, and nothing else.
    await expect(routeAction(page, 'Stop')).toBeVisible();
    await expect(routeAction(page, 'Retry now')).toHaveCount(0);

    // The server made exactly one dispatch, for this attempt, at once.
    const now = await (await request.get(`/api/v1/routes/${route.id}`)).json();
    expect([now.state, now.generation, now.pending]).toEqual(['retrying', route.generation + 1, null]);
    const dispatches = await claim(request, route.id);
    expect(dispatches.map((d) => [d.reason, d.generation, d.invocation_id])).toEqual([
      [wait.reason, now.generation, now.invocation_id],
    ]);
    expect(await claim(request, route.id)).toEqual([]);
    // A second tab's stale Retry now (the old generation) is refused.
    const stale = await request.post(`/api/v1/routes/${route.id}/actions`, {
      data: { action: 'retry_now', expected_generation: route.generation },
    });
    expect(stale.status()).toBe(409);
    expect(await claim(request, route.id)).toEqual([]);
  });

  test(`Stop while ${wait.state} stops for you and nothing is dispatched`, async ({ page, request }) => {
    const route = await waitingRoute(request, wait.state);
    await open(page, `/routes/${route.id}`);
    await expect(liveIndicator(page)).toHaveText('Live');
    await expect(routeState(page)).toHaveText(wait.heading);

    await routeAction(page, 'Stop').click();
    await expect(routeState(page)).toHaveText('Stopped: needs you');
    await expect(actionResult(page)).toHaveText('Stopped; the route waits for you.');
    await expect(routeFact(page, 'Why')).toHaveText('Someone stopped the route.');
    await expect(routeFact(page, 'Next')).toHaveText('Nothing happens until you act');
    await expect(page.locator('time.route-deadline')).toHaveCount(0);
    await expect(routeAction(page, 'Stop')).toHaveCount(0);
    await expect(routeAction(page, 'Retry now')).toBeVisible();

    const now = await (await request.get(`/api/v1/routes/${route.id}`)).json();
    expect([now.state, now.reason, now.pending]).toEqual(['action_required', 'stopped_by_user', null]);
    expect(await claim(request, route.id)).toEqual([]);
    // After a reload the page shows the same: the stop is durable.
    await open(page, `/routes/${route.id}`);
    await expect(routeState(page)).toHaveText('Stopped: needs you');
    await expect(routeFact(page, 'Why')).toHaveText('Someone stopped the route.');
  });
}
