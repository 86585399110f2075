import { test, expect } from '@playwright/test';
import {
  actionResult, advanceClock, candidateRow, classPolicy, createProfile, createProfileWithPolicies, createRoute,
  deliver, epochMs, expand, expectDeadline, expectPhoneFriendly, gibberish, GIBBERISH, historyColumn, liveIndicator,
  open, overloaded, policy, reportFailure, routeAction, routeFact, routeState, setRetry, setWait, uniqueName,
} from './helpers';

// One server (and one test clock) serves every test of the run, two at a
// time. Each test has its own profile and route, and asserts against its own
// snapshots' deadlines and server_time. Only scenario 1 moves the clock,
// by 35 s in all; the other tests' waits are long enough not to notice.

test('scenario 1: a capacity error retries after 5, 10 and 20 s live, then switches to the second candidate', async ({ page, request }) => {
  const p = await createProfileWithPolicies(request, uniqueName('E2E scenario 1'), [
    { label: 'Claude', transient: policy(3, 5, 0, 'skip') },
    { label: 'Codex' },
  ]);
  let route = await createRoute(request, p.id, uniqueName('task'));
  await open(page, `/routes/${route.id}`);
  await expect(liveIndicator(page)).toHaveText('Live');
  await expect(routeState(page)).toHaveText('Working');

  for (const [ordinal, delay] of [[1, 5], [2, 10], [3, 20]]) {
    const answer = await reportFailure(request, route, overloaded());
    expect(answer.decision.kind).toBe('retry');
    route = answer.route;
    // The backend owns the deadline: `delay` seconds after it decided.
    const ahead = epochMs(route.pending.deadline) - epochMs(route.server_time);
    expect(ahead).toBeGreaterThan(delay * 1000 - 1000);
    expect(ahead).toBeLessThanOrEqual(delay * 1000);

    // The open panel follows without a reload.
    await expect(routeState(page)).toHaveText('Waiting to retry');
    await expect(routeFact(page, 'Retry')).toHaveText(`Retry ${ordinal} of 3`);
    await expect(routeFact(page, 'Cause')).toContainText('Provider overloaded (529)');
    await expect(routeFact(page, 'Cause')).toContainText('Transient error');
    await expect(routeFact(page, 'Next')).toHaveText('then skip to Codex');
    await expectDeadline(page, route.pending.deadline);
    if (ordinal === 1) {
      await expect(page.locator('.route-countdown')).toHaveText(/^(in [1-5] s|due now)$/);
    }
    await expect(historyColumn(page, 'Decision').first()).toHaveText(`Retry ${ordinal} of 3`);

    await advanceClock(request, delay);
    await expect(routeState(page)).toHaveText('Retrying');
    await expect(routeFact(page, 'Retry')).toHaveText(`Retry ${ordinal} of 3 in progress`);
    await expect(page.locator('time.route-deadline')).toHaveCount(0);
    route = await deliver(request, route.id);
  }

  // The third retry fails too: recovery is exhausted and the route skips.
  const answer = await reportFailure(request, route, overloaded());
  expect(answer.decision.kind).toBe('skip');
  await expect(routeState(page)).toHaveText('Switching to the next candidate');
  await expect(routeFact(page, 'Candidate')).toHaveText('Codex (candidate 2 of 2)');
  await expect(routeFact(page, 'Next')).toHaveText('Waiting for the caller to start Codex');
  await expect(historyColumn(page, 'Decision')).toHaveText(['Skip', 'Retry 3 of 3', 'Retry 2 of 3', 'Retry 1 of 3']);
  await expect(historyColumn(page, 'Outcome').first()).toHaveText('Switched to Codex');
  await expect(historyColumn(page, 'Policy in force').first()).toHaveText(
    'Transient: Retry after 5 s, 10 s, 20 s, then skip to the next candidate.',
  );
  // While the switch is delivered, a person can only stop the route.
  await expect(routeAction(page, 'Stop')).toBeVisible();
  await expect(routeAction(page, 'Retry now')).toHaveCount(0);
  await expect(routeAction(page, 'Skip now')).toHaveCount(0);
  await expect(routeAction(page, 'Cancel wait')).toHaveCount(0);
});

test('an unknown error stops for manual recovery with a generic cause and no raw text', async ({ page, request }) => {
  const p = await createProfileWithPolicies(request, uniqueName('E2E unknown'), [
    { label: 'Claude', transient: policy(3, 5, 0, 'skip'), hard: policy(2, 60, 0, 'skip') },
    { label: 'Codex' },
  ]);
  const ref = uniqueName('unknown-task').replace(' ', '-');
  const route = await createRoute(request, p.id, ref);
  const answer = await reportFailure(request, route, gibberish());
  expect(answer.classification.code).toBe('unknown');

  // Found on the routes list, which links to the panel.
  await open(page, '/routes');
  const link = page.getByRole('link', { name: new RegExp(ref) });
  await expect(link).toContainText('Stopped: needs you');
  await expect(link).toContainText('Unrecognised error');
  await link.click();
  await expect(page).toHaveURL(new RegExp(`/routes/${route.id}$`));
  await expect(routeState(page)).toHaveText('Stopped: needs you');
  await expect(routeFact(page, 'Cause')).toHaveText('Unrecognised error Unclassified');
  await expect(routeFact(page, 'Why')).toHaveText('The error was not recognised, so automatic recovery stopped.');
  await expect(routeFact(page, 'Next')).toHaveText('Nothing happens until you act');
  await expect(routeFact(page, 'Retry')).toHaveCount(0);
  await expect(historyColumn(page, 'Decision')).toHaveText(['Stop: not recognised']);
  await expect(historyColumn(page, 'Policy in force')).toHaveText(['None: no policy applies to this class']);
  // Only the actions the state table allows from manual recovery.
  await expect(routeAction(page, 'Retry now')).toBeVisible();
  await expect(routeAction(page, 'Skip now')).toBeVisible();
  await expect(routeAction(page, 'Cancel wait')).toHaveCount(0);
  await expect(routeAction(page, 'Stop')).toHaveCount(0);
  // None of the provider's words is shown.
  for (const word of GIBBERISH.split(' ')) {
    await expect(page.locator('body')).not.toContainText(word, { useInnerText: true });
  }

  await routeAction(page, 'Skip now').click();
  await expect(routeState(page)).toHaveText('Switching to the next candidate');
  await expect(actionResult(page)).toHaveText('Skipped to Codex.');
});

test('two tabs: Cancel wait in one updates the other live; a stale action answers with the new snapshot', async ({ browser, request }) => {
  const p = await createProfileWithPolicies(request, uniqueName('E2E two tabs'), [
    { label: 'Claude', transient: policy(2, 3600, 0, 'skip') },
    { label: 'Codex' },
  ]);
  const route = await createRoute(request, p.id, uniqueName('task'));
  await reportFailure(request, route, overloaded());
  const path = `/routes/${route.id}`;
  const first = await (await browser.newContext()).newPage();
  const second = await (await browser.newContext()).newPage();
  for (const tab of [first, second]) {
    await open(tab, path);
    await expect(liveIndicator(tab)).toHaveText('Live');
    await expect(routeState(tab)).toHaveText('Waiting to retry');
  }

  await routeAction(first, 'Cancel wait').click();
  await expect(routeState(first)).toHaveText('Stopped: needs you');
  await expect(actionResult(first)).toHaveText('Wait cancelled; the route waits for you.');
  // The other tab follows over the event stream.
  await expect(routeState(second)).toHaveText('Stopped: needs you');
  await expect(routeFact(second, 'Why')).toHaveText('The wait was cancelled.');
  await expect(routeAction(second, 'Cancel wait')).toHaveCount(0);
  await expect(routeAction(second, 'Retry now')).toBeVisible();

  // The second tab loses its event stream and so misses the next change.
  await second.route('**/api/v1/events**', (r) => r.abort());
  await open(second, path);
  await expect(liveIndicator(second)).toHaveText('Reconnecting…');
  await routeAction(first, 'Retry now').click();
  await expect(routeState(first)).toHaveText('Retrying');
  await expect(routeState(second)).toHaveText('Stopped: needs you');

  // Its action names a generation the route has left: the server refuses
  // it and the panel shows where the route is now.
  await routeAction(second, 'Skip now').click();
  await expect(actionResult(second)).toContainText('The route moved on before your action arrived');
  await expect(routeState(second)).toHaveText('Retrying');
  await expect(routeFact(second, 'Candidate')).toContainText('Claude');
  const now = await (await request.get(`/api/v1/routes/${route.id}`)).json();
  expect([now.state, now.candidate.label]).toEqual(['retrying', 'Claude']);

  // The stream comes back by itself (backing off at most 15 s) and the tab
  // is live again.
  await second.unroute('**/api/v1/events**');
  await expect(liveIndicator(second)).toHaveText('Live', { timeout: 20_000 });
  // Retry now from manual recovery began a new cycle: the budget is fresh.
  await reportFailure(request, now, overloaded());
  for (const tab of [first, second]) {
    await expect(routeState(tab)).toHaveText('Waiting to retry');
    await expect(routeFact(tab, 'Retry')).toHaveText('Retry 1 of 2');
  }

  await first.context().close();
  await second.context().close();
});

test('phone: edit both class policies, then find and act on a route in one column', async ({ page, request }) => {
  const p = await createProfile(request, uniqueName('E2E phone route'), ['Claude Code (Sonnet 4.5, subscription)', 'Codex']);
  await page.setViewportSize({ width: 390, height: 844 });
  await open(page, `/profiles/${p.id}`);
  const row = candidateRow(page, 0);
  await expand(row);
  const transient = classPolicy(row, 'Transient errors');
  const hard = classPolicy(row, 'Hard errors');
  await setRetry(transient, '2', '1', 'hours');
  await setWait(hard, '2', 'hours');
  await hard.getByText('Stop', { exact: true }).click();
  await expectPhoneFriendly(page);
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status')).toContainText('Saved (revision 2)');

  // A route on this profile fails; the settings page lists it live.
  const ref = uniqueName('phone-task-with-a-long-reference-0123456789abcdef').replace(' ', '-');
  const route = await createRoute(request, p.id, ref);
  await reportFailure(request, route, overloaded());
  const active = page.getByRole('region', { name: 'Active routes using this profile' });
  const link = active.getByRole('link', { name: new RegExp(ref) });
  await expect(link).toContainText('Waiting to retry');
  await expectPhoneFriendly(page);

  await link.click();
  await expect(page).toHaveURL(new RegExp(`/routes/${route.id}$`));
  await expect(routeFact(page, 'Retry')).toHaveText('Retry 1 of 2');
  await expect(routeFact(page, 'Next')).toHaveText('then skip to Codex');
  await expect(page.locator('.route-countdown')).toHaveText(/^in (59 min \d\d s|1 h 00 min)$/);
  await expectPhoneFriendly(page);

  await routeAction(page, 'Skip now').click();
  await expect(routeState(page)).toHaveText('Switching to the next candidate');
  await expect(routeFact(page, 'Candidate')).toHaveText('Codex (candidate 2 of 2)');
  await expect(actionResult(page)).toHaveText('Skipped to Codex.');
  await expectPhoneFriendly(page);
});

test.describe('a browser whose clock is 10 minutes fast', () => {
  test.use({ timezoneId: 'Asia/Kolkata' });

  test('still counts down to the server deadline, shown in local time', async ({ page, request }) => {
    const p = await createProfileWithPolicies(request, uniqueName('E2E skewed clock'), [
      { label: 'Claude', transient: policy(1, 3000, 0, 'stop') },
      { label: 'Codex' },
    ]);
    const route = await createRoute(request, p.id, uniqueName('task'));
    const { route: waiting } = await reportFailure(request, route, overloaded());

    await page.clock.install({ time: new Date(Date.now() + 10 * 60_000) });
    await open(page, `/routes/${route.id}`);
    await expect(liveIndicator(page)).toHaveText('Live');
    await expect(routeFact(page, 'Retry')).toHaveText('Retry 1 of 1');
    await expect(routeFact(page, 'Next')).toHaveText('then stop for you');
    // 50 minutes by the server's clock; a naive page would say 40.
    const countdown = page.locator('.route-countdown');
    await expect(countdown).toHaveText(/^in (49 min \d\d s|50 min 00 s)$/);
    // It ticks (the page's timers run on the skewed clock too).
    const shown = await countdown.textContent();
    await expect(countdown).not.toHaveText(shown ?? '');
    await expect(countdown).toHaveText(/^in 49 min \d\d s$/);
    await expectDeadline(page, waiting.pending.deadline);
    // The absolute deadline in the viewer's own zone (UTC+5:30 here).
    const local = await page.evaluate((ms) => new Date(ms).toTimeString().slice(0, 8), epochMs(waiting.pending.deadline));
    await expect(page.locator('time.route-deadline')).toContainText(`${local} (UTC+5:30)`);
  });
});
