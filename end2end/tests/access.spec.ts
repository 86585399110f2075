import { test, expect, Page, request as playwrightRequest } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import { bin } from '../global-setup';
import { candidateRow, classPolicy, createProfile, expand, open, setRetry, uniqueName } from './helpers';

// People sign in with a link in the browser: these tests send no token.
test.use({ extraHTTPHeaders: {} });

const base = process.env.E2E_BASE_URL ?? 'http://127.0.0.1:3000';

/** `kandev-recovery user add` on the e2e database: answers the sign-in link (its last line). */
function addUser(name: string, permissions: string): string {
  const out = execFileSync(
    bin,
    ['user', 'add', name, '--permissions', permissions, '--url', base, '--database-url', process.env.DATABASE_URL!],
    { encoding: 'utf8' },
  );
  return out.trim().split('\n').pop()!.trim();
}

/** The suite's admin token, for setting up through the API. */
async function admin() {
  return playwrightRequest.newContext({
    baseURL: base,
    extraHTTPHeaders: { Authorization: `Bearer ${process.env.KANDEV_E2E_TOKEN}` },
  });
}

/** A write from inside the page, as a forged script would send it. */
async function forgedPut(page: Page, id: string, body: unknown, withCsrf: boolean): Promise<number> {
  return page.evaluate(
    async ({ id, body, withCsrf }) => {
      const csrf = document.cookie.split('; ').find((c) => c.startsWith('kandev_csrf='))?.split('=')[1] ?? '';
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (withCsrf) headers['x-csrf-token'] = csrf;
      const res = await fetch(`/api/v1/profiles/${id}`, { method: 'PUT', headers, body: JSON.stringify(body) });
      return res.status;
    },
    { id, body, withCsrf },
  );
}

test('sign in through the link, edit a policy, sign out', async ({ page }) => {
  const csp: string[] = [];
  page.on('console', (m) => { if (m.text().includes('Content Security Policy')) csp.push(m.text()); });
  const api = await admin();
  const p = await createProfile(api, uniqueName('E2E signed in'), ['Claude', 'Codex']);
  const name = uniqueName('editor');
  const link = addUser(name, 'profiles:manage');

  // Before signing in the app asks for a link.
  await page.goto('/profiles');
  await expect(page.getByRole('heading', { name: 'Sign in to Provider Error Recovery' })).toBeVisible();

  // Opening the link uses nothing up: its page has the button that signs in.
  await page.goto(link);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(/\/profiles$/);
  await expect(page.locator('body[data-hydrated="true"]')).toHaveCount(1);
  await expect(page.locator('.viewer')).toContainText(`Signed in as ${name}`);
  const cookies = await page.context().cookies();
  const session = cookies.find((c) => c.name === 'kandev_session')!;
  expect(session.httpOnly).toBe(true);
  expect(session.sameSite).toBe('Strict');
  // The link worked once.
  const code = new URL(link).searchParams.get('code')!;
  const again = await api.post('/sign-in', { form: { code }, maxRedirects: 0 });
  expect(again.status()).toBe(401);

  await open(page, `/profiles/${p.id}`);
  const first = candidateRow(page, 0);
  await expand(first);
  const transient = classPolicy(first, 'Transient errors');
  await setRetry(transient, '3', '5');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.locator('.save-bar [role="status"]')).toContainText('Saved (revision 2)');
  const stored = await (await api.get(`/api/v1/profiles/${p.id}`)).json();
  expect(stored.candidates[0].policy.transient.retry.max_retries).toBe(3);

  // The same session without its CSRF token (a cross-site form or script) is refused.
  expect(await forgedPut(page, p.id, { ...stored, name: 'forged' }, false)).toBe(403);
  expect((await (await api.get(`/api/v1/profiles/${p.id}`)).json()).name).toBe(stored.name);
  expect(csp).toEqual([]);

  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByRole('heading', { name: 'Sign in to Provider Error Recovery' })).toBeVisible();
  expect((await page.request.get('/api/v1/session')).status()).toBe(401);
  await api.dispose();
});

test('a viewer without profiles:manage sees no edit controls, and a forged edit is refused', async ({ page }) => {
  const api = await admin();
  const p = await createProfile(api, uniqueName('E2E viewer'), ['Claude', 'Codex']);
  const name = uniqueName('viewer');
  await page.goto(addUser(name, 'profiles:select'));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.locator('body[data-hydrated="true"]')).toHaveCount(1);
  await expect(page.locator('.viewer')).toContainText(`Signed in as ${name}`);
  await expect(page.getByRole('link', { name: 'New profile' })).toHaveCount(0);

  await open(page, `/profiles/${p.id}`);
  await expect(page.getByRole('note')).toContainText('profiles:manage');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(p.name);
  await expect(page.getByRole('button', { name: 'Save' })).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Add candidate' })).toHaveCount(0);
  await expect(page.getByLabel('Profile name')).toBeDisabled();
  await expect(page.getByRole('button', { name: 'Remove: Claude' })).toBeDisabled();

  // The server refuses it anyway, CSRF token or not.
  const current = await (await api.get(`/api/v1/profiles/${p.id}`)).json();
  expect(await forgedPut(page, p.id, { ...current, name: 'forged' }, true)).toBe(403);
  expect(await forgedPut(page, p.id, { ...current, name: 'forged' }, false)).toBe(403);
  expect((await (await api.get(`/api/v1/profiles/${p.id}`)).json()).revision).toBe(current.revision);

  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByRole('heading', { name: 'Sign in to Provider Error Recovery' })).toBeVisible();
  await api.dispose();
});
