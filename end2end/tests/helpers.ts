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
