"""The notes index and its domain are sized by template parameters (issue 15, "Also"): the domain's nodes,
zones and volume, the index's shards and replicas, and the vectors' size reach every function that needs it."""

from __future__ import annotations

from local.template import load_template

TEMPLATE = load_template()


def _environment(function: str) -> dict[str, object]:
    properties = TEMPLATE["Resources"][function]["Properties"]
    variables: dict[str, object] = properties.get("Environment", {}).get("Variables", {})
    return variables


def test_the_created_domain_takes_its_nodes_and_volume_from_parameters_and_spreads_two_or_more_over_two_zones():
    domain = TEMPLATE["Resources"]["NotesDomain"]["Properties"]

    assert domain["ClusterConfig"]["InstanceCount"] == {"Ref": "NotesDomainInstanceCount"}
    assert domain["ClusterConfig"]["ZoneAwarenessEnabled"] == {"Fn::If": ["NotesDomainMultiNode", True, False]}
    assert domain["ClusterConfig"]["ZoneAwarenessConfig"]["Fn::If"][1] == {"AvailabilityZoneCount": 2}
    assert domain["EBSOptions"]["VolumeSize"] == {"Ref": "NotesDomainVolumeSize"}
    assert TEMPLATE["Conditions"]["NotesDomainMultiNode"] == {
        "Fn::Not": [{"Fn::Equals": [{"Ref": "NotesDomainInstanceCount"}, "1"]}]
    }
    counts = TEMPLATE["Parameters"]["NotesDomainInstanceCount"]["AllowedValues"]
    assert counts[0] == 1 and all(count % 2 == 0 for count in counts[1:])  # two zones: an even count


def test_the_indexer_creates_the_index_with_the_parameters_shards_replicas_and_dimensions():
    indexer = _environment("IndexerFunction")

    assert indexer["MEMORY_OPENSEARCH_SHARDS"] == {"Ref": "NotesIndexShards"}
    assert indexer["MEMORY_OPENSEARCH_REPLICAS"] == {"Ref": "NotesIndexReplicas"}


def test_every_function_given_the_embedding_model_is_given_its_dimensions():
    given = [
        name
        for name, resource in TEMPLATE["Resources"].items()
        if resource["Type"] == "AWS::Serverless::Function" and "MEMORY_EMBEDDING_MODEL" in _environment(name)
    ]

    assert sorted(given) == [
        "ConsolidateFunction",
        "ConsolidateWorkerFunction",
        "FlushFunction",
        "IndexerFunction",
        "ManagementFunction",
        "PlatformFunction",
        "ToolsFunction",
    ]
    for name in given:
        assert _environment(name)["MEMORY_EMBEDDING_DIMENSIONS"] == {"Ref": "EmbeddingDimensions"}, name
