import { expect, Page, Locator, APIRequestContext } from '@playwright/test';

// ---- find ----

export function candidateRow(page: Page, index: number): Locator {
  return page.locator('li.candidate').nth(index);
}

export function classPolicy(row: Locator, title: 'Transient errors' | 'Hard errors'): Locator {
  return row.getByRole('region', { name: title });
}

// ---- act ----

/** Opens a page and waits until it is hydrated (interactive). */
export async function open(page: Page, path: string) {
  await page.goto(path);
  await expect(page.locator('body[data-hydrated="true"]')).toHaveCount(1);
}

export function uniqueName(prefix: string): string {
  return `${prefix} ${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
}

/** Creates a profile through the API and answers its JSON. */
export async function createProfile(request: APIRequestContext, name: string, labels: string[]) {
  const res = await request.post('/api/v1/profiles', {
    data: { name, candidates: labels.map((label, i) => ({ label, agent: `agent-${i}` })) },
  });
  expect(res.status()).toBe(201);
  return res.json();
}

export async function expand(row: Locator) {
  const toggle = row.getByRole('button', { name: /Edit policy|Hide policy/ });
  if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
  await expect(toggle).toHaveAttribute('aria-expanded', 'true');
}

export async function setRetry(policy: Locator, retries: string, initial: string, unit = 'seconds') {
  await policy.getByRole('switch', { name: 'Retry the same candidate' }).check();
  await policy.getByLabel('Maximum retries').fill(retries);
  await policy.getByLabel('Initial interval', { exact: true }).fill(initial);
  await policy.getByLabel('Initial interval unit').selectOption(unit);
}

export async function setWait(policy: Locator, amount: string, unit: string) {
  await policy.getByRole('switch', { name: "Wait for the provider's reset time" }).check();
  await policy.getByLabel('Maximum wait', { exact: true }).fill(amount);
  await policy.getByLabel('Maximum wait unit').selectOption(unit);
}

// ---- check ----

export async function expectPreview(policy: Locator, text: string | RegExp) {
  await expect(policy.locator('.preview-text')).toContainText(text);
}

/** No horizontal document overflow and every visible control ≥ 44 px tall. */
export async function expectPhoneFriendly(page: Page) {
  const overflow = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    inner: window.innerWidth,
  }));
  expect(overflow.scroll).toBeLessThanOrEqual(overflow.inner);
  const small = await page.evaluate(() =>
    Array.from(document.querySelectorAll('input, select, button, textarea, a.button'))
      .map((el) => {
        const r = (el as HTMLElement).getBoundingClientRect();
        const label = el.getAttribute('aria-label') || el.id || (el as HTMLElement).innerText || el.tagName;
        return { label, height: r.height, visible: r.width > 0 && r.height > 0 };
      })
      .filter((c) => c.visible && c.height < 44),
  );
  expect(small, `controls under 44 px: ${JSON.stringify(small)}`).toEqual([]);
}

// ---- routes: find ----

/** The route panel's state heading ("Waiting to retry", "Retrying", …). */
export function routeState(page: Page): Locator {
  return page.locator('section.route-panel').getByRole('heading', { level: 2 });
}

/** The value of one fact of the route panel: Candidate, Cause, Retry, Deadline, Why, Next. */
export function routeFact(page: Page, term: string): Locator {
  return page
    .locator('.route-facts .fact')
    .filter({ has: page.getByRole('term').filter({ hasText: new RegExp(`^${term}$`) }) })
    .getByRole('definition');
}

export function routeAction(page: Page, name: 'Retry now' | 'Skip now' | 'Cancel wait' | 'Stop'): Locator {
  return page.getByRole('group', { name: 'Route actions' }).getByRole('button', { name, exact: true });
}

/** The "Live" / "Reconnecting…" indicator of a route panel. */
export function liveIndicator(page: Page): Locator {
  return page.getByRole('status', { name: 'Connection' });
}

export function actionResult(page: Page): Locator {
  return page.getByRole('status', { name: 'Action result' });
}

export function historyColumn(page: Page, label: string): Locator {
  return page.locator(`table.attempts tbody td[data-label="${label}"]`);
}

// ---- routes: act (through the REST API, as an orchestrator would) ----

export type ClassPolicy = {
  retry: { enabled: boolean; max_retries: number; initial_interval_seconds: number };
  wait_for_reset: { enabled: boolean; max_wait_seconds: number };
  on_exhausted: 'skip' | 'stop';
};

export function policy(retries: number, initialSeconds: number, waitSeconds: number, outcome: 'skip' | 'stop'): ClassPolicy {
  return {
    retry: { enabled: retries > 0, max_retries: retries, initial_interval_seconds: retries > 0 ? initialSeconds : 0 },
    wait_for_reset: { enabled: waitSeconds > 0, max_wait_seconds: waitSeconds },
    on_exhausted: outcome,
  };
}

/** Creates a profile whose candidates carry the given class policies (defaults: skip at once). */
export async function createProfileWithPolicies(
  request: APIRequestContext,
  name: string,
  candidates: { label: string; transient?: ClassPolicy; hard?: ClassPolicy }[],
) {
  const res = await request.post('/api/v1/profiles', {
    data: {
      name,
      candidates: candidates.map((c, i) => ({
        label: c.label,
        agent: `agent-${i}`,
        policy: { version: 1, transient: c.transient ?? policy(0, 0, 0, 'skip'), hard: c.hard ?? policy(0, 0, 0, 'skip') },
      })),
    },
  });
  expect(res.status()).toBe(201);
  return res.json();
}

export async function createRoute(request: APIRequestContext, profileId: string, ref: string) {
  const res = await request.post('/api/v1/routes', { data: { profile_id: profileId, caller: { kind: 'kanban', ref } } });
  expect(res.status()).toBe(201);
  return res.json();
}

/** A 529 Overloaded answer from Anthropic's API. */
export function overloaded() {
  return [{
    kind: 'http', status: 529, headers: {},
    body: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
  }];
}

/** Raw text no catalogue rule knows. */
export const GIBBERISH = 'zorblax quuxified flimflam wibbleplunk frobnitz';

export function gibberish() {
  return [{ kind: 'stderr', lines: [GIBBERISH] }];
}

/** Reports a failure of the route's current invocation; answers {classification, decision, route}. */
export async function reportFailure(request: APIRequestContext, route: any, items: unknown[]) {
  const res = await request.post(`/api/v1/routes/${route.id}/failures`, {
    data: {
      generation: route.generation, invocation_id: route.invocation_id, prompt_generation: route.prompt_generation,
      phase: 'prompt', agent: 'claude-code', provider_id: 'anthropic', items,
    },
  });
  expect(res.status()).toBe(200);
  return res.json();
}

/** Moves the server's test clock forward and fires what is due. */
export async function advanceClock(request: APIRequestContext, seconds: number) {
  const res = await request.post('/api/v1/test/clock', { data: { advance_seconds: seconds } });
  expect(res.status()).toBe(200);
  return res.json();
}

/** Claims the route's one due dispatch and acknowledges delivery; answers the route. */
export async function deliver(request: APIRequestContext, routeId: string) {
  const claim = await request.post('/api/v1/dispatches/claim', {
    data: { route_id: routeId, lease_seconds: 60, wait_seconds: 5 },
  });
  expect(claim.status()).toBe(200);
  const { dispatches } = await claim.json();
  expect(dispatches).toHaveLength(1);
  const ack = await request.post(`/api/v1/dispatches/${dispatches[0].id}/ack`, {
    data: { generation: dispatches[0].generation },
  });
  expect(ack.status()).toBe(200);
  return ack.json();
}

/** Milliseconds since the epoch of an RFC 3339 time with any number of fraction digits. */
export function epochMs(iso: string): number {
  return Date.parse(iso.replace(/(\.\d{3})\d+/, '$1'));
}

// ---- routes: check ----

/** The panel's deadline is the snapshot's absolute deadline. */
export async function expectDeadline(page: Page, deadline: string) {
  await expect(page.locator('time.route-deadline')).toHaveAttribute('datetime', new Date(epochMs(deadline)).toISOString());
}
