import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

// The kandev-recovery binary the suite runs against (scripts/test sets it).
export const root = path.resolve(__dirname, '..');
export const bin = process.env.KANDEV_BIN ?? path.join(root, 'target/debug/kandev-recovery');

/** Runs `kandev-recovery token create` on a database; answers the secret (its last line). */
export function mintToken(databaseUrl: string, name: string, permissions: string): string {
  const out = execFileSync(bin, ['token', 'create', '--name', name, '--permissions', permissions, '--database-url', databaseUrl], {
    encoding: 'utf8',
  });
  return out.trim().split('\n').pop()!.trim();
}

// Waits until the server Playwright started (playwright.config.ts) is ready,
// then mints the suite's admin token on its database: the server checks
// credentials as in production. Workers inherit it through the environment
// (playwright.config.ts sends it with every request).
export default async function globalSetup() {
  const base = process.env.E2E_BASE_URL ?? 'http://127.0.0.1:3000';
  const deadline = Date.now() + 180_000;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${base}/readyz`);
      if (res.ok) {
        const db = process.env.DATABASE_URL;
        if (!db) throw new Error('DATABASE_URL must name the e2e server database (scripts/test sets it)');
        process.env.KANDEV_E2E_TOKEN = mintToken(db, `e2e admin ${Date.now()}`, 'admin');
        return;
      }
      last = `status ${res.status}`;
    } catch (e) {
      if (e instanceof Error && e.message.startsWith('DATABASE_URL')) throw e;
      last = String(e);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`server at ${base} did not become ready: ${last}`);
}
