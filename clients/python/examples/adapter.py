"""A worked adapter: what an orchestrator does around one prompt so that the
service, not the orchestrator, decides how to recover from a failure.

The "agent" here is scripted: its first attempt fails with Anthropic's 529
Overloaded before any output, its second one answers. The adapter

  1. opens a route for a dynamic profile of two candidates (it creates the
     profile, or uses KANDEV_PROFILE),
  2. runs the current candidate and reports the failure as an evidence
     envelope, with its phase,
  3. does what the decision says: here a retry of the same candidate, so it
     claims the retry's dispatch when it is due and acknowledges it as soon
     as the agent has the prompt,
  4. reports the retry's output (an effect) and its success.

On the way it handles what every adapter must: 409 (the route moved on:
re-read it and follow it), 429 (wait as long as `retry-after` says) and 503
(nothing was changed: send the same request again a little later). Anything
else ends the program with a message and exit code 1; a route that stops
for a person ends it with exit code 3.

    PYTHONPATH=clients/python/kandev-recovery-client \\
    KANDEV_SERVER=http://127.0.0.1:3000 KANDEV_TOKEN=… python3 clients/python/examples/adapter.py

KANDEV_TOKEN needs `evidence:submit` and `profiles:select` (and
`profiles:manage` to create the profile). With KANDEV_TEST_CLOCK_TOKEN (an
admin token of a server started with `--test-clock`) it moves the server's
clock to the retry's deadline instead of waiting for it: this is how
`scripts/clients test` runs it.
"""

import json
import math
import os
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

import httpx

from kandev_recovery_client import AuthenticatedClient
from kandev_recovery_client.api.dispatches import acknowledge_dispatch, claim_dispatches
from kandev_recovery_client.api.profiles import create_profile
from kandev_recovery_client.api.routes import (
    create_route,
    get_route,
    list_route_attempts,
    report_effect,
    report_failure,
    report_success,
)
from kandev_recovery_client.api.test import advance_test_clock
from kandev_recovery_client.models import (
    AckRequest,
    AdvanceClock,
    ApiError,
    Caller,
    CallerKind,
    CandidatePolicy,
    CandidateWrite,
    ClaimRequest,
    ClassPolicy,
    CreateRoute,
    DecisionKind,
    EffectReport,
    Evidence,
    InvocationReport,
    ProfileWrite,
    RetryPolicy,
    RouteSnapshot,
    RouteState,
    WaitForReset,
)
from kandev_recovery_client.types import Response

T = TypeVar("T")


class Stopped(Exception):
    """The route stopped for a person: nothing more to do automatically."""


class Failed(Exception):
    """Anything this adapter did not expect."""


def log(message: str) -> None:
    print(f"adapter.py: {message}", file=sys.stderr)


SERVER = os.environ.get("KANDEV_SERVER", "http://127.0.0.1:3000")
TOKEN = os.environ.get("KANDEV_TOKEN") or sys.exit("adapter.py: set KANDEV_TOKEN to an API token")
CLOCK_TOKEN = os.environ.get("KANDEV_TEST_CLOCK_TOKEN")
# Claims long-poll for up to 30 s: the HTTP timeout must be longer.
api = AuthenticatedClient(base_url=SERVER, token=TOKEN, timeout=httpx.Timeout(70.0))


def send(what: str, request: Callable[[], Response[Any]]) -> Any:
    """Sends a request until it is answered, and returns the parsed answer.

    429 and 503 are sent again (every report names its route's generation and
    invocation, so a repeat is harmless). A 409 is returned as the ApiError,
    which carries the route as it is now, for the caller to follow; any other
    error is unexpected.
    """
    for attempt in range(1, 11):
        answer = request()
        status = int(answer.status_code)
        if 200 <= status < 300:
            return answer.parsed
        if status == 429:
            # Too many reports from this token: nothing was recorded.
            seconds = float(answer.headers.get("retry-after", "1"))
            log(f"{what}: 429, sending again in {seconds:g} s")
            time.sleep(seconds)
        elif status == 503:
            # The database could not be written: nothing was changed.
            log(f"{what}: 503, sending again")
            time.sleep(min(0.25 * 2**attempt, 5.0))
        elif status == 409 and isinstance(answer.parsed, ApiError):
            return answer.parsed
        else:
            raise Failed(f"{what}: unexpected HTTP {status}: {answer.content.decode(errors='replace')}")
    raise Failed(f"{what}: still refused after 10 tries")


def must(what: str, request: Callable[[], Response[T | ApiError]]) -> T:
    """`send` for requests where a 409 would be a bug of this program."""
    answer = send(what, request)
    if isinstance(answer, ApiError):
        raise Failed(f"{what}: unexpected 409: {answer.to_dict()}")
    return answer


def read_route(route_id: str) -> RouteSnapshot:
    return must(f"GET route {route_id}", lambda: get_route.sync_detailed(route_id, client=api))


def make_profile() -> str:
    """A profile of two candidates: Claude retries transient failures twice (5 s, 10 s), then Codex."""
    no_wait = WaitForReset(enabled=False, max_wait_seconds=0)
    transient_retry = ClassPolicy(
        retry=RetryPolicy(enabled=True, max_retries=2, initial_interval_seconds=5),
        wait_for_reset=no_wait,
        on_exhausted="skip",
    )
    skip = ClassPolicy(
        retry=RetryPolicy(enabled=False, max_retries=0, initial_interval_seconds=0),
        wait_for_reset=no_wait,
        on_exhausted="skip",
    )
    body = ProfileWrite(
        name=f"adapter.py example {uuid.uuid4().hex[:8]}",
        candidates=[
            CandidateWrite(
                label="Claude",
                agent="claude-code",
                provider_id="anthropic",
                profile_ref="claude-sonnet",
                policy=CandidatePolicy(version=1, transient=transient_retry, hard=skip),
            ),
            CandidateWrite(
                label="Codex",
                agent="codex",
                provider_id="openai",
                profile_ref="codex",
                policy=CandidatePolicy(version=1, transient=skip, hard=skip),
            ),
        ],
    )
    profile = must("create the profile", lambda: create_profile.sync_detailed(client=api, body=body))
    log(f"created profile {profile.id} ({', '.join(c.label for c in profile.candidates)})")
    return profile.id


def run_agent(candidate: str, attempt: int) -> dict[str, Any]:
    """The scripted agent: attempt 1 is overloaded before any output; attempt 2 answers."""
    log(f"running {candidate}, attempt {attempt}")
    if attempt == 1:
        return {
            "ok": False,
            "phase": "prompt",  # the prompt was sent and nothing came back yet
            "status": 529,
            "body": json.dumps({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        }
    return {"ok": True, "output": "The failing test passes now."}


def identity(route: Any) -> dict[str, Any]:
    """The route identity every report names (of a route or a dispatch): a report for anything else is stale."""
    return {
        "generation": route.generation,
        "invocation_id": route.invocation_id,
        "prompt_generation": route.prompt_generation,
    }


def advance_clock(seconds: float) -> None:
    test = AuthenticatedClient(base_url=SERVER, token=CLOCK_TOKEN or "")
    must(
        "advance the test clock",
        lambda: advance_test_clock.sync_detailed(client=test, body=AdvanceClock(advance_seconds=seconds)),
    )
    log(f"moved the test clock {seconds:g} s forward")


def next_attempt(route: RouteSnapshot) -> dict[str, Any]:
    """Waits for the route's next attempt and takes it: claims the dispatch
    (long-polling), and acknowledges it once the agent has the prompt.
    Returns the invocation to report under."""
    while True:
        if route.state == RouteState.ACTIVE:
            return identity(route)
        if route.state in (RouteState.ACTION_REQUIRED, RouteState.COMPLETED, RouteState.CANCELLED):
            raise Stopped(f"the route stopped for a person ({route.state.value}: {route.reason or 'no reason'})")
        # retry_wait, waiting_for_reset, retrying or switching: a dispatch is
        # (or will be) due. Tests move the server's clock to the deadline.
        if CLOCK_TOKEN and route.pending:
            seconds = (route.pending.deadline - route.server_time).total_seconds()
            advance_clock(max(0, math.ceil(seconds)))
        request = ClaimRequest(route_id=route.id, lease_seconds=60, wait_seconds=1 if CLOCK_TOKEN else 30)
        claimed = must("claim the dispatch", lambda: claim_dispatches.sync_detailed(client=api, body=request))
        if not claimed.dispatches:
            route = read_route(route.id)  # nothing due yet: look again
            continue
        dispatch = claimed.dispatches[0]
        log(f"claimed dispatch {dispatch.id} ({dispatch.reason.value} on {dispatch.candidate.label})")
        if dispatch.resume:
            raise Failed("this example cannot resume a provider session")
        # A real adapter starts the agent with the prompt here, then acknowledges.
        acked = send(
            "acknowledge the dispatch",
            lambda: acknowledge_dispatch.sync_detailed(
                dispatch.id, client=api, body=AckRequest(generation=dispatch.generation)
            ),
        )
        if isinstance(acked, ApiError):
            # Withdrawn (a person stopped the route, or its lease ran out): the
            # prompt must not run. Follow the route as it is now.
            log(f"the dispatch was withdrawn ({acked.error}): re-reading the route")
            route = acked.route if isinstance(acked.route, RouteSnapshot) else read_route(route.id)
            continue
        return identity(dispatch)


def main() -> None:
    profile_id = os.environ.get("KANDEV_PROFILE") or make_profile()

    # 1. Open the route. The Idempotency-Key makes the creation safe to send
    #    again: the same key answers the route it created.
    key = str(uuid.uuid4())
    body = CreateRoute(profile_id=profile_id, caller=Caller(kind=CallerKind.WORKFLOW, ref="adapter.py example"))
    route = must("open the route", lambda: create_route.sync_detailed(client=api, body=body, idempotency_key=key))
    log(f"opened route {route.id} on {route.candidate.label} (generation {route.generation})")

    decisions: list[str] = []
    invocation = identity(route)
    for attempt in range(1, 6):
        # 2. Run the current candidate.
        run = run_agent(route.candidate.label, attempt)

        if run["ok"]:
            # 3a. Output arrived: report the effect at once (from now on a
            #     failure of this invocation is not repeated automatically),
            #     then the success.
            effect = EffectReport(**invocation, kind="agent_message_chunk")
            must("report the effect", lambda: report_effect.sync_detailed(route.id, client=api, body=effect))
            report = InvocationReport(**invocation)
            done = send("report the success", lambda: report_success.sync_detailed(route.id, client=api, body=report))
            if isinstance(done, ApiError):
                # The route moved on (a person acted): this success is not the
                # route's any more. A real adapter follows the route as it is now.
                now = done.route if isinstance(done.route, RouteSnapshot) else read_route(route.id)
                raise Failed(f"the success was stale: the route is {now.state.value} at generation {now.generation}")
            route = done
            log(f"success reported: the route is {route.state.value}; the next prompt is invocation {route.invocation_id}")
            print(run["output"])
            break

        # 3b. A failure: report the evidence envelope. `phase` is what makes
        #     automatic recovery possible (launch, session_init or prompt).
        envelope = Evidence.from_dict(
            {
                **invocation,
                "phase": run["phase"],
                "agent": "claude-code",
                "provider_id": "anthropic",
                "items": [{"kind": "http", "status": run["status"], "headers": {}, "body": run["body"]}],
            }
        )
        answer = must("report the failure", lambda: report_failure.sync_detailed(route.id, client=api, body=envelope))
        decision = answer.decision
        decisions.append(decision.kind.value)
        route = answer.route
        delay = f" in {decision.delay_seconds} s" if isinstance(decision.delay_seconds, int) else ""
        log(
            f"classified {answer.classification.code} ({decision.class_ or 'no class'}); "
            f"decision {decision.kind.value}{delay}; the route is {route.state.value}"
        )
        # 4. Do what the decision says, and nothing else.
        if decision.kind in (DecisionKind.RETRY, DecisionKind.WAIT_FOR_RESET, DecisionKind.SKIP):
            invocation = next_attempt(route)
            route = read_route(route.id)
        elif decision.kind == DecisionKind.STALE:
            # The report named an old invocation: nothing changed. Follow the route.
            route = read_route(route.id)
            invocation = next_attempt(route)
        else:
            # stop, unclassified, not_provider, effect_unsafe: a person decides.
            raise Stopped(f"stopped for a person: {route.reason or decision.kind.value}")
    else:
        raise Failed("more attempts than the script has")

    # What this script must have led to, when it made the profile itself.
    if not os.environ.get("KANDEV_PROFILE"):
        if decisions != ["retry"]:
            raise Failed(f"unexpected end: decisions {decisions}, expected one retry")
        if route.state != RouteState.ACTIVE or route.candidate.label != "Claude":
            raise Failed(f"unexpected end: {route.state.value} on {route.candidate.label}, expected active on Claude")
        history = must("read the attempts", lambda: list_route_attempts.sync_detailed(route.id, client=api))
        if not any(a.decision == DecisionKind.RETRY and a.code == "provider_overloaded" for a in history):
            raise Failed(f"unexpected end: no retry of provider_overloaded in the attempts: {history}")
    log("done: one 529, one retry, then success")


if __name__ == "__main__":
    try:
        main()
    except Stopped as e:
        log(str(e))
        sys.exit(3)
    except (Failed, httpx.HTTPError) as e:
        log(f"failed: {e}")
        sys.exit(1)
