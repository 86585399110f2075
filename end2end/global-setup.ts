// Waits until the server started by `cargo leptos end-to-end` is ready.
export default async function globalSetup() {
  const base = process.env.E2E_BASE_URL ?? 'http://127.0.0.1:3000';
  const deadline = Date.now() + 180_000;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${base}/readyz`);
      if (res.ok) return;
      last = `status ${res.status}`;
    } catch (e) {
      last = String(e);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`server at ${base} did not become ready: ${last}`);
}
