"""bench/recall_locomo.py reads a LoCoMo conversation as the held-out measurement does, and scores as it says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.recall_locomo import Question, load, read_conversation, recall_at, report, score

SAMPLE = {
    "speaker_a": "Evan",
    "speaker_b": "Sam",
    "session_2_date_time": "2:00 pm on 20 May, 2023",
    "session_2": [{"speaker": "Sam", "dia_id": "D2:1", "text": "Jasper was lovely."}],
    "session_10_date_time": "9:00 am on 1 June, 2023",
    "session_10": [{"speaker": "Evan", "dia_id": "D10:1", "text": "Back home."}],
    "session_1_date_time": "1:47 pm on 18 May, 2023",
    "session_1": [
        {"speaker": "Sam", "dia_id": "D1:1", "text": "Hey Evan!"},
        {"speaker": "Evan", "dia_id": "D1:2", "text": "New Prius.", "blip_caption": "a photo of a car"},
    ],
    "session_1_summary": "not a session",
    "qa": [
        {"question": "What car?", "evidence": ["D1:2", "D1:2", "D10:1"], "category": 1},
        {"question": "When Jasper?", "evidence": ["D2:1", "D30:05"], "category": 2},
        {"question": "Unknown only?", "evidence": ["D9:1 D4:4"], "category": 4},
        {"question": "No evidence?", "evidence": [], "category": 3},
        {"question": "Adversarial?", "evidence": ["D1:1"], "category": 5},
    ],
}


def test_every_turn_is_a_note_in_session_order_with_its_date_speaker_and_shared_picture():
    conversation = read_conversation("49", SAMPLE)

    assert conversation.notes == [
        "[1:47 pm on 18 May, 2023] Sam: Hey Evan!",
        "[1:47 pm on 18 May, 2023] Evan: New Prius. (shares a photo of a car)",
        "[2:00 pm on 20 May, 2023] Sam: Jasper was lovely.",
        "[9:00 am on 1 June, 2023] Evan: Back home.",
    ]


def test_only_categories_one_to_four_with_known_evidence_are_asked_each_turn_counted_once():
    conversation = read_conversation(
        "49", {"conversation": {k: v for k, v in SAMPLE.items() if k != "qa"}, "qa": SAMPLE["qa"]}
    )

    assert conversation.questions == [
        Question("What car?", "multi-hop", (1, 3)),
        Question("When Jasper?", "temporal", (2,)),
    ]


def test_evidence_recall_is_the_share_of_the_evidence_in_the_first_k_averaged_per_category():
    first, second = Question("a", "multi-hop", (1, 3)), Question("b", "temporal", (2,))

    recall = score([(first, [1, 0, 2, 3]), (second, [0, 2])])

    assert recall_at([1, 0, 2, 3], (1, 3), 1) == 0.5
    assert recall["multi-hop"][1] == 0.5 and recall["multi-hop"][5] == 1.0
    assert recall["temporal"][1] == 0.0 and recall["temporal"][5] == 1.0
    assert recall["all"][1] == 0.25 and recall["all"][20] == 1.0


def test_without_the_files_the_bench_skips_with_a_line_saying_where_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("MEMORY_LOCOMO_DIR", str(tmp_path))
    (tmp_path / "49.json").write_text(json.dumps(SAMPLE))  # 50.json is missing

    assert load() is None
    assert report(None) == [
        f"LoCoMo dev conversations not found in {tmp_path} (set MEMORY_LOCOMO_DIR): this section is skipped."
    ]
