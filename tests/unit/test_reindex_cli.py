"""The reindex command's refusals, which need neither a table nor a node."""

from __future__ import annotations

import pytest

from local import reindex


def test_a_scope_is_required_and_must_be_a_scope_key(capsys):
    with pytest.raises(SystemExit) as missing:
        reindex.main([])
    with pytest.raises(SystemExit) as malformed:
        reindex.main(["--scope", "consolidation"])
    assert missing.value.code == malformed.value.code == 2
    assert "not a scope key" in capsys.readouterr().err


def test_without_an_opensearch_endpoint_there_is_nothing_to_reindex(capsys):
    assert reindex.main(["--scope", "user#u-1", "--check"]) == 2
    assert "OPENSEARCH_ENDPOINT" in capsys.readouterr().err
