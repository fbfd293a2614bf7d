"""``POST /v1/extract`` around a chat model that takes 1 second: its latency against its 10-second budget, and
the duplicate's (a repeat of an extraction id asks no model).

Each written call extracts for a user of its own (a fresh scope: no fact is skipped as one the scope holds), with
``events/extract.json``'s three messages and a scripted model that sleeps ``MODEL_S``, then proposes three facts.
``python -m bench.extraction`` runs it alone.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import partial
from typing import Any

from bench.runner import (
    LambdaContext,
    RequestCounter,
    create_tables,
    instrumented_client,
    log,
    moto,
    percentile_ms,
    timed,
)

MODEL_S = 1.0
FACTS = {
    "facts": [
        {"text": "The user is flying to Osaka on March 3rd for two weeks.", "messages": [0]},
        {"text": "The user prefers quiet neighbourhoods over the big shopping streets.", "messages": [2]},
        {"text": "The user plans an itinerary for the Osaka trip.", "messages": [1, 2]},
    ]
}


@dataclass(frozen=True)
class Timing:
    """One kind of call: its DynamoDB requests and its latency."""

    requests: int
    p50_ms: float
    p99_ms: float

    @classmethod
    def of(cls, requests: int, samples_ns: list[int]) -> Timing:
        return cls(requests, percentile_ms(samples_ns, 0.50), percentile_ms(samples_ns, 0.99))

    def as_json(self) -> dict[str, Any]:
        return {"requests": self.requests, "p50_ms": round(self.p50_ms, 3), "p99_ms": round(self.p99_ms, 3)}


@dataclass(frozen=True)
class ExtractionResult:
    calls: int
    written: Timing
    duplicate: Timing

    def as_json(self) -> dict[str, Any]:
        written = {"model_ms": MODEL_S * 1000, "calls": self.calls, **self.written.as_json()}
        return {"extraction_model_1s": written, "extraction_duplicate": self.duplicate.as_json()}


def measure(calls: int = 30, warmup: int = 3) -> ExtractionResult:
    """``warmup`` untimed calls, then ``calls`` timed written calls and as many timed duplicates, on a moto of its
    own, through ToolsFunction's handler."""
    from agent_memory import bootstrap
    from agent_memory.basics.observability import metrics
    from local.template import load_handler
    from tests.support.events import event_body, load_event
    from tests.support.fakes import FakeChatModel
    from tests.support.models import ScriptedChatModels

    with moto():
        counter = RequestCounter()
        create_tables(instrumented_client(counter))
        bootstrap.reset(keep_provided=False)
        model = FakeChatModel(reply=lambda system, prompt: FACTS, delay_s=MODEL_S)
        bootstrap.provide(chat_models=ScriptedChatModels(extraction=model))
        handler, context = load_handler("ToolsFunction"), LambdaContext(function_name="ToolsFunction")
        body = event_body("extract")

        def call(user: str) -> dict[str, Any]:
            event = load_event("extract", {**body, "context": {**body["context"], "user_id": user}})
            elapsed_ns, result = timed(partial(handler, event, context))
            metrics.clear_metrics()
            if result["statusCode"] != 200 or '"status":"failed"' in result["body"].replace(" ", ""):
                raise SystemExit(f"extraction for {user} answered {result}")
            return {"ns": elapsed_ns, "body": result["body"]}

        log(f"timing extraction (model {MODEL_S:.0f} s): {warmup} warm-up + {calls} calls, then {calls} duplicates")
        written: list[int] = []
        duplicates: list[int] = []
        requests = duplicate_requests = 0
        for index in range(warmup + calls):
            counter.take()
            sample = call(f"bench-x-{index}")
            requests = len(counter.take())
            if index >= warmup:
                written.append(sample["ns"])
        for index in range(warmup, warmup + calls):
            counter.take()
            sample = call(f"bench-x-{index}")
            duplicate_requests = len(counter.take())
            if '"duplicate"' not in sample["body"]:
                raise SystemExit(f"the repeat of extraction {index} answered {sample['body']}")
            duplicates.append(sample["ns"])
        bootstrap.reset(keep_provided=False)
    return ExtractionResult(calls, Timing.of(requests, written), Timing.of(duplicate_requests, duplicates))


def report(result: ExtractionResult) -> str:
    written, duplicate = result.written, result.duplicate
    return "\n".join(
        [
            f"{'extraction':<22}{'requests':>9}{'p50 ms':>10}{'p99 ms':>10}{'p50-model':>11}{'calls':>7}",
            f"{'model 1 s, 3 facts':<22}{written.requests:>9}{written.p50_ms:>10.1f}{written.p99_ms:>10.1f}"
            f"{written.p50_ms - MODEL_S * 1000:>11.1f}{result.calls:>7}",
            f"{'duplicate':<22}{duplicate.requests:>9}{duplicate.p50_ms:>10.1f}{duplicate.p99_ms:>10.1f}{'-':>11}"
            f"{result.calls:>7}",
            "",
            f"Its budget is 10 s (the model gets what is left less 2 s): p99 {written.p99_ms / 1e3:.2f} s",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    from bench.runner import main_alone

    options = {"calls": 30, "warmup": 3}
    return main_alone(
        "extraction", __doc__ or "", options, lambda args: [report(measure(args.calls, args.warmup))], argv
    )


if __name__ == "__main__":
    sys.exit(main())
