// A worked adapter: what an orchestrator does around one prompt so that the
// service, not the orchestrator, decides how to recover from a failure.
//
// The "agent" here is scripted: its first attempt fails with Anthropic's
// 529 Overloaded before any output, its second one answers. The adapter
//
//   1. opens a route for a dynamic profile of two candidates (it creates the
//      profile, or uses KANDEV_PROFILE),
//   2. runs the current candidate and reports the failure as an evidence
//      envelope, with its phase,
//   3. does what the decision says: here a retry of the same candidate, so
//      it claims the retry's dispatch when it is due and acknowledges it as
//      soon as the agent has the prompt,
//   4. reports the retry's output (an effect) and its success.
//
// On the way it handles what every adapter must: 409 (the route moved on:
// re-read it and follow it), 429 (wait as long as `retry-after` says) and
// 503 (nothing was changed: send the same request again a little later).
// Anything else ends the program with a message and exit code 1; a route
// that stops for a person ends it with exit code 3.
//
//   KANDEV_SERVER=http://127.0.0.1:3000 KANDEV_TOKEN=… node dist/examples/adapter.js
//
// KANDEV_TOKEN needs `evidence:submit` and `profiles:select` (and
// `profiles:manage` to create the profile). With KANDEV_TEST_CLOCK_TOKEN (an
// admin token of a server started with `--test-clock`) it moves the server's
// clock to the retry's deadline instead of waiting for it: this is how
// `scripts/clients test` runs it.
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import {
  createClient,
  type ApiError,
  type Dispatch,
  type FailureAnswer,
  type RouteSnapshot,
} from "../src/index.js";

const server = process.env.KANDEV_SERVER ?? "http://127.0.0.1:3000";
const token = process.env.KANDEV_TOKEN ?? fail("set KANDEV_TOKEN to an API token");
const clockToken = process.env.KANDEV_TEST_CLOCK_TOKEN;
const api = createClient({ baseUrl: server, token });

/** The route identity every report names: a report for anything else is stale. */
interface Invocation {
  generation: number;
  invocation_id: string;
  prompt_generation: number;
}

class Stopped extends Error {}

function fail(message: string): never {
  throw new Error(message);
}

function log(message: string): void {
  console.error(`adapter.ts: ${message}`);
}

/**
 * Sends a request until it is answered, and returns the answer's body.
 * 429 and 503 are sent again (every report names its route's generation and
 * invocation, so a repeat is harmless). 409 returns the route as it is now,
 * which the error body carries, for the caller to follow; any other error
 * is unexpected.
 */
async function send<T>(
  what: string,
  request: () => Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<{ ok: T } | { conflict: ApiError }> {
  for (let attempt = 1; ; attempt++) {
    const { data, error, response } = await request();
    if (response.ok) return { ok: data as T };
    const status = response.status;
    if (status === 429 && attempt < 10) {
      // Too many reports from this token: nothing was recorded.
      const seconds = Number(response.headers.get("retry-after") ?? "1");
      log(`${what}: 429, sending again in ${seconds} s`);
      await sleep(seconds * 1000);
    } else if (status === 503 && attempt < 10) {
      // The database could not be written: nothing was changed.
      log(`${what}: 503, sending again`);
      await sleep(Math.min(250 * 2 ** attempt, 5000));
    } else if (status === 409) {
      return { conflict: error as ApiError };
    } else {
      fail(`${what}: unexpected HTTP ${status}: ${JSON.stringify(error)}`);
    }
  }
}

/** `send` for requests where a 409 would be a bug of this program. */
async function must<T>(
  what: string,
  request: () => Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  const answer = await send(what, request);
  if ("conflict" in answer) fail(`${what}: unexpected 409: ${JSON.stringify(answer.conflict)}`);
  return answer.ok;
}

async function readRoute(id: string): Promise<RouteSnapshot> {
  return must(`GET route ${id}`, () =>
    api.GET("/api/v1/routes/{id}", { params: { path: { id } } }),
  );
}

/** A profile of two candidates: Claude retries transient failures twice (5 s, 10 s), then Codex. */
async function createProfile(): Promise<string> {
  const transientRetry = {
    retry: { enabled: true, max_retries: 2, initial_interval_seconds: 5 },
    wait_for_reset: { enabled: false, max_wait_seconds: 0 },
    on_exhausted: "skip",
  };
  const skip = {
    retry: { enabled: false, max_retries: 0, initial_interval_seconds: 0 },
    wait_for_reset: { enabled: false, max_wait_seconds: 0 },
    on_exhausted: "skip",
  };
  const profile = await must("create the profile", () =>
    api.POST("/api/v1/profiles", {
      body: {
        name: `adapter.ts example ${randomUUID().slice(0, 8)}`,
        candidates: [
          {
            label: "Claude",
            agent: "claude-code",
            provider_id: "anthropic",
            profile_ref: "claude-sonnet",
            policy: { version: 1, transient: transientRetry, hard: skip },
          },
          {
            label: "Codex",
            agent: "codex",
            provider_id: "openai",
            profile_ref: "codex",
            policy: { version: 1, transient: skip, hard: skip },
          },
        ],
      },
    }),
  );
  log(`created profile ${profile.id} (${profile.candidates.map((c) => c.label).join(", ")})`);
  return profile.id;
}

/** The scripted agent: attempt 1 is overloaded before any output; attempt 2 answers. */
type AgentRun = { ok: true; output: string } | { ok: false; phase: "prompt"; status: number; body: string };

function runAgent(candidate: string, attempt: number): AgentRun {
  log(`running ${candidate}, attempt ${attempt}`);
  if (attempt === 1) {
    return {
      ok: false,
      phase: "prompt", // the prompt was sent and nothing came back yet
      status: 529,
      body: JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }),
    };
  }
  return { ok: true, output: "The failing test passes now." };
}

/** The identity of the route's current invocation. */
function current(route: RouteSnapshot | Dispatch): Invocation {
  return {
    generation: route.generation,
    invocation_id: route.invocation_id,
    prompt_generation: route.prompt_generation,
  };
}

/**
 * Waits for the route's next attempt and takes it: claims the dispatch
 * (long-polling), and acknowledges it once the agent has the prompt. Returns
 * the invocation to report under, or the route when it is active again.
 */
async function nextAttempt(route: RouteSnapshot): Promise<Invocation> {
  for (;;) {
    switch (route.state) {
      case "active":
        return current(route);
      case "action_required":
      case "completed":
      case "cancelled":
        throw new Stopped(`the route stopped for a person (${route.state}: ${route.reason ?? "no reason"})`);
    }
    // retry_wait, waiting_for_reset, retrying or switching: a dispatch is
    // (or will be) due. Tests move the server's clock to the deadline.
    if (clockToken && route.pending) {
      const seconds = (Date.parse(route.pending.deadline) - Date.parse(route.server_time)) / 1000;
      await advanceTestClock(Math.max(0, Math.ceil(seconds)));
    }
    const claimed = await must("claim the dispatch", () =>
      api.POST("/api/v1/dispatches/claim", {
        body: { route_id: route.id, lease_seconds: 60, wait_seconds: clockToken ? 1 : 30 },
      }),
    );
    const dispatch = claimed.dispatches[0];
    if (!dispatch) {
      route = await readRoute(route.id); // nothing due yet: look again
      continue;
    }
    log(`claimed dispatch ${dispatch.id} (${dispatch.reason} on ${dispatch.candidate.label})`);
    if (dispatch.resume) fail("this example cannot resume a provider session");
    // A real adapter starts the agent with the prompt here, then acknowledges.
    const acked = await send("acknowledge the dispatch", () =>
      api.POST("/api/v1/dispatches/{id}/ack", {
        params: { path: { id: dispatch.id } },
        body: { generation: dispatch.generation },
      }),
    );
    if ("conflict" in acked) {
      // Withdrawn (a person stopped the route, or its lease ran out): the
      // prompt must not run. Follow the route as it is now.
      log(`the dispatch was withdrawn (${acked.conflict.error}): re-reading the route`);
      route = acked.conflict.route ?? (await readRoute(route.id));
      continue;
    }
    return current(dispatch);
  }
}

async function advanceTestClock(seconds: number): Promise<void> {
  const test = createClient({ baseUrl: server, token: clockToken! });
  await must("advance the test clock", () =>
    test.POST("/api/v1/test/clock", { body: { advance_seconds: seconds } }),
  );
  log(`moved the test clock ${seconds} s forward`);
}

async function main(): Promise<void> {
  const profileId = process.env.KANDEV_PROFILE ?? (await createProfile());

  // 1. Open the route. The Idempotency-Key makes the creation safe to send
  //    again: the same key answers the route it created.
  let route = await must("open the route", () =>
    api.POST("/api/v1/routes", {
      params: { header: { "Idempotency-Key": randomUUID() } },
      body: { profile_id: profileId, caller: { kind: "workflow", ref: "adapter.ts example" } },
    }),
  );
  log(`opened route ${route.id} on ${route.candidate.label} (generation ${route.generation})`);

  const decisions: string[] = [];
  let invocation = current(route);
  for (let attempt = 1; ; attempt++) {
    if (attempt > 5) fail("more attempts than the script has");
    // 2. Run the current candidate.
    const run = runAgent(route.candidate.label, attempt);

    if (run.ok) {
      // 3a. Output arrived: report the effect at once (from now on a failure
      //     of this invocation is not repeated automatically), then success.
      await must("report the effect", () =>
        api.POST("/api/v1/routes/{id}/effects", {
          params: { path: { id: route.id } },
          body: { ...invocation, kind: "agent_message_chunk" },
        }),
      );
      const done = await send("report the success", () =>
        api.POST("/api/v1/routes/{id}/success", { params: { path: { id: route.id } }, body: invocation }),
      );
      if ("conflict" in done) {
        // The route moved on (a person acted): this success is not the
        // route's any more. A real adapter follows the route as it is now.
        route = done.conflict.route ?? (await readRoute(route.id));
        fail(`the success was stale: the route is ${route.state} at generation ${route.generation}`);
      }
      route = done.ok;
      log(`success reported: the route is ${route.state}; the next prompt is invocation ${route.invocation_id}`);
      console.log(run.output);
      break;
    }

    // 3b. A failure: report the evidence envelope. `phase` is what makes
    //     automatic recovery possible (launch, session_init or prompt).
    const answer: FailureAnswer = await must("report the failure", () =>
      api.POST("/api/v1/routes/{id}/failures", {
        params: { path: { id: route.id } },
        body: {
          ...invocation,
          phase: run.phase,
          agent: "claude-code",
          provider_id: "anthropic",
          items: [{ kind: "http", status: run.status, headers: {}, body: run.body }],
        },
      }),
    );
    const decision = answer.decision;
    decisions.push(decision.kind);
    route = answer.route;
    log(
      `classified ${String(answer.classification.code)} (${decision.class ?? "no class"}); decision ${decision.kind}` +
        (decision.delay_seconds != null ? ` in ${decision.delay_seconds} s` : "") +
        `; the route is ${route.state}`,
    );
    // 4. Do what the decision says, and nothing else.
    switch (decision.kind) {
      case "retry":
      case "wait_for_reset":
      case "skip":
        invocation = await nextAttempt(route);
        route = await readRoute(route.id);
        break;
      case "stale":
        // The report named an old invocation: nothing changed. Follow the route.
        route = await readRoute(route.id);
        invocation = await nextAttempt(route);
        break;
      default:
        // stop, unclassified, not_provider, effect_unsafe: a person decides.
        throw new Stopped(`stopped for a person: ${route.reason ?? decision.kind}`);
    }
  }

  // What this script must have led to, when it made the profile itself.
  if (!process.env.KANDEV_PROFILE) {
    const expect = (ok: boolean, what: string) => ok || fail(`unexpected end: ${what}`);
    expect(decisions.join(",") === "retry", `decisions ${decisions.join(",")}, expected one retry`);
    expect(route.state === "active", `state ${route.state}, expected active`);
    expect(route.candidate.label === "Claude", `candidate ${route.candidate.label}, expected Claude`);
    const attempts = await must("read the attempts", () =>
      api.GET("/api/v1/routes/{id}/attempts", { params: { path: { id: route.id } } }),
    );
    expect(
      attempts.some((a) => a.decision === "retry" && a.code === "provider_overloaded"),
      `no retry of provider_overloaded in the attempts: ${JSON.stringify(attempts)}`,
    );
  }
  log("done: one 529, one retry, then success");
}

main().catch((e: unknown) => {
  if (e instanceof Stopped) {
    log(e.message);
    process.exit(3);
  }
  log(`failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
