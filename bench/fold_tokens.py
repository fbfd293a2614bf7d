"""Consolidation by cited edits against the whole-document rewrite: output tokens, input tokens and wall time
per fold, then the model's cost per active user and month (docs/benchmarks.md).

Each fold runs the service's own fold (``consolidation.folding.propose``: the prompt, the tool, the checks and
the application of the edits) against a scripted model, named a fake: asked for edits it answers the minimal
correct ones (one cited ``add`` per note, at the end); asked for the rewrite (it answers text, as a server
without tool calls does) it answers the whole document with the notes' lines. It answers after a latency
proportional to its output tokens (``LATENCY_BASE_S`` plus ``LATENCY_PER_TOKEN_S`` a token) and reports tokens
as about four characters each.

    python -m bench.fold_tokens [--scale 0.1]   # --scale shortens the model's sleeps; times are scaled back
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from typing import Any

from agent_memory.consolidation.folding import propose, rewrite
from agent_memory.domain.document import Document
from agent_memory.domain.fold import DueNote
from agent_memory.providers.chat import Answer, Tool

LATENCY_BASE_S = 0.3
LATENCY_PER_TOKEN_S = 0.010
DOCUMENT_CHARS = (2_000, 10_000, 18_000)
NOTE_COUNTS = (4, 40)

# The cost model: list prices as named parameters (USD per million tokens), and the traffic of one active user
# in a month. Prices: Anthropic Claude Haiku 4.5 on Amazon Bedrock, on-demand, us-east-1, as published from
# October 2025 (aws.amazon.com/bedrock/pricing; not re-checked on the day of a run; Claude 3.5 Haiku, $0.80 /
# $4.00, was retired from Bedrock in June 2026): change them here for another model or a newer price.
CHAT_MODEL = "Claude Haiku 4.5"
PRICE_INPUT_PER_M = 1.00
PRICE_OUTPUT_PER_M = 5.00
FOLDS_PER_MONTH = 30  # one nightly fold of the user's personal scope
FOLD_DOCUMENT_CHARS = 10_000
FOLD_NOTES = 4
FLUSHES_PER_MONTH = 30  # one compaction a day
FLUSH_INPUT_TOKENS = 1_500  # the system prompt and the transcript's end
FLUSH_OUTPUT_TOKENS = 120  # one note of at most 500 characters


def tokens_of(text: str) -> int:
    return (len(text) + 3) // 4


@dataclass
class FakeScriptedFoldModel:
    """The scripted model (a fake: no model runs here). ``scale`` multiplies its sleeps."""

    document: str
    notes: list[DueNote]
    scale: float = 1.0

    def complete(self, *, system: str, prompt: str, max_tokens: int) -> str:
        return self.ask(system=system, prompt=prompt, max_tokens=max_tokens).text

    def ask(self, *, system: str, prompt: str, max_tokens: int, tool: Tool | None = None) -> Answer:
        raise NotImplementedError  # one of the two modes below


class FakeEditingModel(FakeScriptedFoldModel):
    def ask(self, *, system: str, prompt: str, max_tokens: int, tool: Tool | None = None) -> Answer:
        edits = [{"op": "add", "after": None, "text": f"- {n.text}", "notes": [n.id]} for n in self.notes]
        arguments = {"edits": edits}
        return _answered(self.scale, system + prompt, json.dumps(arguments), Answer("", arguments))


class FakeRewritingModel(FakeScriptedFoldModel):
    def ask(self, *, system: str, prompt: str, max_tokens: int, tool: Tool | None = None) -> Answer:
        text = self.document + "\n" + "\n".join(f"- {note.text}" for note in self.notes)
        return _answered(self.scale, system + prompt, text, Answer(text))


def _answered(scale: float, sent: str, said: str, answer: Answer) -> Answer:
    output = tokens_of(said)
    time.sleep((LATENCY_BASE_S + LATENCY_PER_TOKEN_S * output) * scale)
    return Answer(answer.text, answer.arguments, tokens_of(sent), output)


def document_of(chars: int) -> str:
    """A Markdown document of about ``chars`` characters: sections of distinct facts."""
    lines = ["# Memory"]
    fact = 0
    while sum(len(line) + 1 for line in lines) < chars:
        if fact % 20 == 0:
            lines += ["", f"## Topic {fact // 20 + 1}"]
        lines.append(f"- Fact {fact:04d}: the user said something specific about project {fact % 37} and kept it.")
        fact += 1
    return "\n".join(lines)


def notes_of(count: int) -> list[DueNote]:
    return [
        DueNote(
            "u#bench",
            f"note#2026-11-2{i % 8}#{i + 1}",
            f"2026-11-2{i % 8}",
            i + 1,
            f"New fact {i}: prefers option {i}.",
            "",
        )
        for i in range(count)
    ]


@dataclass(frozen=True)
class Fold:
    chars: int
    notes: int
    mode: str
    input_tokens: int
    output_tokens: int
    wall_s: float

    def as_json(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "wall_s": round(self.wall_s, 3),
        }


def measure(scale: float = 1.0) -> list[Fold]:
    folds = []
    for chars in DOCUMENT_CHARS:
        document = document_of(chars)
        for count in NOTE_COUNTS:
            notes = notes_of(count)
            for mode, model_class in (("edits", FakeEditingModel), ("rewrite", FakeRewritingModel)):
                model = model_class(document, notes, scale)
                started = time.perf_counter()
                asked = propose if mode == "edits" else rewrite  # the rewrite as every fold asked for it before
                proposal = asked(model, Document(document, 1, None), notes)
                wall = (time.perf_counter() - started) / scale if scale else 0.0  # scale 0: tokens only
                assert proposal.kind == mode, proposal.kind
                folds.append(Fold(chars, count, mode, proposal.input_tokens, proposal.output_tokens, wall))
    return folds


def as_json(folds: list[Fold]) -> dict[str, dict[str, Any]]:
    """The figures for docs/benchmarks.json, one entry per fold."""
    return {f"fold {f.chars} chars {f.notes} notes {f.mode}": f.as_json() for f in folds}


def cost_per_user_month(
    folds: list[Fold], mode: str, prices: tuple[float, float] = (PRICE_INPUT_PER_M, PRICE_OUTPUT_PER_M)
) -> float:
    """USD per active user and month: the month's folds (at ``FOLD_DOCUMENT_CHARS``, ``FOLD_NOTES``) and flushes,
    at ``prices`` (USD per million input and output tokens)."""
    fold = next(f for f in folds if (f.chars, f.notes, f.mode) == (FOLD_DOCUMENT_CHARS, FOLD_NOTES, mode))
    inputs = FOLDS_PER_MONTH * fold.input_tokens + FLUSHES_PER_MONTH * FLUSH_INPUT_TOKENS
    outputs = FOLDS_PER_MONTH * fold.output_tokens + FLUSHES_PER_MONTH * FLUSH_OUTPUT_TOKENS
    return (inputs * prices[0] + outputs * prices[1]) / 1_000_000


def report(folds: list[Fold], scale: float = 1.0) -> str:
    header = f"{'fold':<26}{'out tok':>9}{'in tok':>9}{'wall s':>9}   {'out / rewrite':>13}{'time / rewrite':>16}"
    lines = [header, "-" * len(header)]
    by_key = {(f.chars, f.notes, f.mode): f for f in folds}
    for fold in folds:
        rewrite = by_key[(fold.chars, fold.notes, "rewrite")]
        ratios = (
            f"{fold.output_tokens / rewrite.output_tokens:>13.3f}{fold.wall_s / rewrite.wall_s:>16.3f}"
            if fold.mode == "edits"
            else ""
        )
        name = f"{fold.chars:,} chars, {fold.notes} notes, {fold.mode}"
        lines.append(f"{name:<26}{fold.output_tokens:>9,}{fold.input_tokens:>9,}{fold.wall_s:>9.2f}   {ratios}")
    edits, rewrite = by_key[(10_000, 4, "edits")], by_key[(10_000, 4, "rewrite")]
    out_ratio, time_ratio = edits.output_tokens / rewrite.output_tokens, edits.wall_s / rewrite.wall_s
    edits_cost, rewrite_cost = cost_per_user_month(folds, "edits"), cost_per_user_month(folds, "rewrite")
    checks = [
        (
            out_ratio <= 0.2,
            f"output tokens at 10,000 chars and 4 notes: {out_ratio:.3f}x the rewrite's (target <= 0.2x)",
        ),
        (
            time_ratio <= 1 / 3,
            f"fold time at 10,000 chars and 4 notes: {time_ratio:.3f}x the rewrite's (target <= 0.333x)",
        ),
        (
            edits_cost <= 0.10,
            f"model cost per active user and month: ${edits_cost:.3f} by edits, ${rewrite_cost:.3f} by rewrite"
            " (target <= $0.10)",
        ),
    ]
    verdicts = [f"{'PASS' if passed else 'FAIL'}  {text}" for passed, text in checks]
    slept = f" (slept at {scale:g}x, times scaled back)" if scale != 1 else ""
    notes = [
        "",
        f"the scripted model answers after {LATENCY_BASE_S:g} s + {LATENCY_PER_TOKEN_S * 1000:g} ms per output token"
        f"{slept}; tokens are about 4 characters;",
        "edits: the minimal cited edits (one add per note); rewrite: the whole document with the notes' lines.",
        f"cost: {FOLDS_PER_MONTH} folds ({FOLD_DOCUMENT_CHARS:,} chars, {FOLD_NOTES} notes) and {FLUSHES_PER_MONTH}"
        f" flushes ({FLUSH_INPUT_TOKENS:,} in, {FLUSH_OUTPUT_TOKENS} out tokens) a month,",
        f"at ${PRICE_INPUT_PER_M:.2f} / ${PRICE_OUTPUT_PER_M:.2f} per million input / output tokens"
        f" ({CHAT_MODEL} on Bedrock, on-demand list price).",
        "",
        *verdicts,
    ]
    return "\n".join(["```text", *lines, *notes, "```"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply the model's sleeps (times are scaled back)")
    args = parser.parse_args()
    print(report(measure(args.scale), args.scale))


if __name__ == "__main__":
    main()
