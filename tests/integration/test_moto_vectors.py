"""The tests' and the local stack's moto answer DynamoDB's vector-index API (local/moto_vectors.py) as the API
reference and the developer guide describe it: the shared ``aws`` fixture's moto, and a moto server as
``make run`` embeds it. Names follow the guide's examples (a ``Products`` table, ``Category = :cat``)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from local import moto_vectors
from tests.support.moto_support import atomic_moto_requests

TABLE, INDEX = "Products", "ProductEmbeddingIndex"


def _index(distance: str = "COSINE", projection: dict[str, Any] | None = None, **changes: Any) -> dict[str, Any]:
    return {
        "IndexName": INDEX,
        "VectorAttribute": {"AttributeName": "embedding"},
        "SearchSchema": [
            {"AttributeName": "Category", "SearchSchemaElementType": "HASH"},
            {"AttributeName": "Color", "SearchSchemaElementType": "INLINE_FILTER"},
        ],
        "Projection": projection or {"ProjectionType": "ALL"},
        "Dimensions": 3,
        "DistanceFunction": distance,
        **changes,
    }


SEARCHED = [{"AttributeName": "Category", "AttributeType": "S"}, {"AttributeName": "Color", "AttributeType": "S"}]


def _table(client: Any, *indexes: dict[str, Any], billing: str = "PAY_PER_REQUEST") -> Any:
    return client.create_table(
        TableName=TABLE,
        KeySchema=[{"AttributeName": "ProductId", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "ProductId", "AttributeType": "S"}, *(SEARCHED if indexes else [])],
        BillingMode=billing,
        **(
            {"ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}
            if billing != "PAY_PER_REQUEST"
            else {}
        ),
        **({"VectorIndexes": list(indexes)} if indexes else {}),
    )


PRODUCTS = {  # id: (category, color, embedding)
    "p1": ("shoes", "red", [1.0, 0.0, 0.0]),
    "p2": ("shoes", "blue", [0.0, 1.0, 0.0]),
    "p3": ("shoes", "red", [1.0, 1.0, 0.0]),
    "p4": ("shoes", "red", [2.0, 0.0, 0.0]),
    "p5": ("hats", "red", [1.0, 0.0, 0.0]),  # another partition of the index, nearest of all
}


def _put(client: Any) -> None:
    for product, (category, color, embedding) in PRODUCTS.items():
        item = {
            "ProductId": {"S": product},
            "Category": {"S": category},
            "Color": {"S": color},
            "Name": {"S": f"name of {product}"},
            "Price": {"N": "10"},
            "embedding": {"L": [{"N": str(x)} for x in embedding]},
        }
        client.put_item(TableName=TABLE, Item=item)
    client.put_item(TableName=TABLE, Item={"ProductId": {"S": "p6"}, "Category": {"S": "shoes"}})  # no vector


def _vector(*numbers: float) -> list[dict[str, str]]:
    return [{"N": str(x)} for x in numbers]


def _search(client: Any, vector: list[dict[str, str]] | None = None, top_k: int = 10, **request: Any) -> Any:
    request.setdefault("SearchConditionExpression", "Category = :cat")
    request.setdefault("ExpressionAttributeValues", {":cat": {"S": "shoes"}})
    return client.search_vectors(
        TableName=TABLE, IndexName=INDEX, SearchVector=vector or _vector(1, 0, 0), TopK=top_k, **request
    )


def _refused(client: Any, message: str, **request: Any) -> None:
    with pytest.raises(ClientError) as raised:
        _search(client, **request)
    assert raised.value.response["Error"] == {"Code": "ValidationException", "Message": message}


@pytest.fixture
def products(aws: Any) -> Any:
    _table(aws, _index())
    _put(aws)
    return aws


def test_describe_table_describes_the_index_as_created(aws: Any) -> None:
    included = _index(projection={"ProjectionType": "INCLUDE", "NonKeyAttributes": ["Name"]})
    created = _table(aws, included)
    described = aws.describe_table(TableName=TABLE)["Table"]
    for description in (created["TableDescription"], described):
        (index,) = description["VectorIndexes"]
        assert {key: index[key] for key in moto_vectors._DECLARED} == included
        assert index["IndexStatus"] == "ACTIVE" and index["Backfilling"] is False
        assert index["IndexArn"] == f"{description['TableArn']}/index/{INDEX}"
        assert {a["AttributeName"] for a in description["AttributeDefinitions"]} == {"ProductId", "Category", "Color"}
    _put(aws)
    assert aws.describe_table(TableName=TABLE)["Table"]["VectorIndexes"][0]["ItemCount"] == 5  # p6 has no vector


def test_cosine_scores_and_order(products: Any) -> None:
    """COSINE: 1 - cosine similarity, 0 identical to 2 opposite, smallest first; only the HASH partition's items."""
    results = _search(products, _vector(1, 0, 0))["SearchResults"]
    assert [r["Item"]["ProductId"]["S"] for r in results] == ["p1", "p4", "p3", "p2"]
    assert [r["Score"] for r in results] == pytest.approx([0.0, 0.0, 1 - 1 / math.sqrt(2), 1.0])
    opposite = _search(products, _vector(-1, 0, 0))["SearchResults"]
    assert opposite[0]["Score"] == pytest.approx(1.0) and opposite[-1]["Score"] == pytest.approx(2.0)


def test_euclidean_scores_and_order(aws: Any) -> None:
    _table(aws, _index("EUCLIDEAN"))
    _put(aws)
    results = _search(aws, _vector(2, 0, 0))["SearchResults"]
    assert [r["Item"]["ProductId"]["S"] for r in results] == ["p4", "p1", "p3", "p2"]
    assert [r["Score"] for r in results] == pytest.approx([0.0, 1.0, math.sqrt(2), math.sqrt(5)])


def test_dot_product_scores_highest_first(aws: Any) -> None:
    _table(aws, _index("DOT_PRODUCT"))
    _put(aws)
    results = _search(aws, _vector(1, 0.5, 0))["SearchResults"]
    assert [r["Item"]["ProductId"]["S"] for r in results] == ["p4", "p3", "p1", "p2"]
    assert [r["Score"] for r in results] == pytest.approx([2.0, 1.5, 1.0, 0.5])


def test_vectors_are_compared_at_f32_precision(products: Any) -> None:
    """The guide: vectors are stored in the index at 32-bit precision; a difference below it does not count."""
    (best, *_) = _search(products, _vector(1 + 1e-9, 0, 0))["SearchResults"]
    assert best["Score"] == 0.0


def test_the_hash_condition_is_required(products: Any) -> None:
    _refused(products, moto_vectors.HASH_REQUIRED, SearchConditionExpression="", ExpressionAttributeValues={})
    only_filter = {"SearchConditionExpression": "Color = :c", "ExpressionAttributeValues": {":c": {"S": "red"}}}
    _refused(products, moto_vectors.HASH_REQUIRED, **only_filter)


def test_another_partition_never_answers(products: Any) -> None:
    hats = _search(products, ExpressionAttributeValues={":cat": {"S": "hats"}})["SearchResults"]
    assert [r["Item"]["ProductId"]["S"] for r in hats] == ["p5"]
    assert _search(products, ExpressionAttributeValues={":cat": {"S": "boots"}})["SearchResults"] == []


def test_a_hash_on_the_tables_own_key_reads_its_partition(aws: Any) -> None:
    """An index partitioned by the table's hash key (as a scope's notes are by ``pk``): another partition's
    items, nearer to the vector, never answer; a number equals by value (1 = 1.0)."""
    index = {**_index(), "SearchSchema": [{"AttributeName": "pk", "SearchSchemaElementType": "HASH"}]}
    index["SearchSchema"].append({"AttributeName": "rank", "SearchSchemaElementType": "INLINE_FILTER"})
    definitions = [{"AttributeName": "rank", "AttributeType": "N"}]
    aws.update_table(TableName="MemoryTable", AttributeDefinitions=definitions, VectorIndexUpdates=[{"Create": index}])
    for pk, sk, vector in [("a", "1", [0, 1, 0]), ("a", "2", [1, 1, 0]), ("b", "1", [1, 0, 0])]:
        item = {"pk": {"S": pk}, "sk": {"S": sk}, "rank": {"N": "1"}, "embedding": {"L": _vector(*vector)}}
        aws.put_item(TableName="MemoryTable", Item=item)
    request = {"TableName": "MemoryTable", "IndexName": INDEX, "SearchVector": _vector(1, 0, 0), "TopK": 5}
    condition = {
        "SearchConditionExpression": "pk = :pk AND #rank = :rank",
        "ExpressionAttributeNames": {"#rank": "rank"},
    }
    values = {":pk": {"S": "a"}, ":rank": {"N": "1.0"}}
    results = aws.search_vectors(**request, **condition, ExpressionAttributeValues=values)["SearchResults"]
    assert [(r["Item"]["pk"]["S"], r["Item"]["sk"]["S"]) for r in results] == [("a", "2"), ("a", "1")]
    both = {
        "SearchConditionExpression": "pk = :pk AND pk = :other",
        "ExpressionAttributeValues": {**values, ":other": {"S": "b"}},
    }
    assert aws.search_vectors(**request, **both)["SearchResults"] == []


def test_inline_filter_equality_with_an_alias(products: Any) -> None:
    results = _search(
        products,
        SearchConditionExpression="Category = :cat AND #c = :color",
        ExpressionAttributeNames={"#c": "Color"},
        ExpressionAttributeValues={":cat": {"S": "shoes"}, ":color": {"S": "red"}},
    )["SearchResults"]
    assert [r["Item"]["ProductId"]["S"] for r in results] == ["p1", "p4", "p3"]


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("Category = :cat AND Color <> :c", moto_vectors.INVALID_COMPARATOR),
        ("Category = :cat AND Color IN (:c)", moto_vectors.INVALID_COMPARATOR),
        ("Category = :cat AND Color BETWEEN :c AND :c", moto_vectors.INVALID_COMPARATOR),
        ("Category = :cat OR Color = :c", moto_vectors.NOT_EMULATED.format(repr("Category = :cat OR Color = :c"))),
        ("Category = :cat AND Name = :c", moto_vectors.NOT_IN_SCHEMA.format("Name")),
        ("Category = :cat AND Color.inner = :c", moto_vectors.NESTED.format("Color.inner")),
        ("Category = :cat AND", moto_vectors.NOT_EMULATED.format(repr("Category = :cat AND"))),
    ],
)
def test_conditions_beyond_equalities_are_refused(products: Any, expression: str, message: str) -> None:
    values = {":cat": {"S": "shoes"}, ":c": {"S": "red"}}
    _refused(products, message, SearchConditionExpression=expression, ExpressionAttributeValues=values)


def test_an_undefined_placeholder_is_refused(products: Any) -> None:
    message = "An expression attribute value used in expression is not defined; attribute value: :cat"
    _refused(products, message, ExpressionAttributeValues={":other": {"S": "shoes"}})


def test_wrong_dimensions_are_refused(products: Any) -> None:
    _refused(products, moto_vectors.WRONG_DIMENSIONS.format(2, INDEX, 3), vector=_vector(1, 0))
    _refused(products, moto_vectors.NOT_A_VECTOR, vector=[{"S": "1"}, {"N": "0"}, {"N": "0"}])
    _refused(products, moto_vectors.NOT_A_VECTOR, vector=[{"N": "NaN"}, {"N": "0"}, {"N": "0"}])


def test_top_k_bounds(products: Any) -> None:
    assert len(_search(products, top_k=2)["SearchResults"]) == 2
    assert len(_search(products, top_k=100)["SearchResults"]) == 4
    _refused(products, moto_vectors.TOP_K_RANGE, top_k=101)
    unchecked = boto3.client("dynamodb", config=Config(parameter_validation=False))  # botocore checks the minimum
    _refused(unchecked, moto_vectors.TOP_K_RANGE, top_k=0)


def test_projection_of_the_index_and_of_the_request(aws: Any) -> None:
    _table(aws, _index(projection={"ProjectionType": "KEYS_ONLY"}))
    _put(aws)
    (best, *_) = _search(aws)["SearchResults"]
    assert best["Item"] == {"ProductId": {"S": "p1"}, "Category": {"S": "shoes"}, "Color": {"S": "red"}}
    chosen = _search(aws, ProjectionExpression="#id, Name", ExpressionAttributeNames={"#id": "ProductId"})
    assert chosen["SearchResults"][0]["Item"] == {"ProductId": {"S": "p1"}}  # Name is not in the index
    aws.delete_table(TableName=TABLE)
    _table(aws, _index(projection={"ProjectionType": "INCLUDE", "NonKeyAttributes": ["Name"]}))
    _put(aws)
    assert set(_search(aws)["SearchResults"][0]["Item"]) == {"ProductId", "Category", "Color", "Name"}


def test_a_projected_binary_attribute_is_answered_as_dynamodb_answers_it(products: Any) -> None:
    """A Binary attribute goes over the wire base64-encoded: the double's answer failed to serialise one."""
    key = {"ProductId": {"S": "p1"}}
    products.update_item(
        TableName=TABLE,
        Key=key,
        UpdateExpression="SET Photo = :b",
        ExpressionAttributeValues={":b": {"B": b"\x00\xff"}},
    )

    (best, *_) = _search(products, ProjectionExpression="ProductId, Photo")["SearchResults"]

    assert best["Item"] == {"ProductId": {"S": "p1"}, "Photo": {"B": b"\x00\xff"}}


def test_a_missing_index_or_table(products: Any) -> None:
    with pytest.raises(ClientError) as raised:
        products.search_vectors(TableName=TABLE, IndexName="Other", SearchVector=_vector(1, 0, 0), TopK=1)
    assert raised.value.response["Error"]["Message"] == moto_vectors.NO_INDEX.format("Other")
    with pytest.raises(ClientError) as raised:
        products.search_vectors(TableName="Absent", IndexName=INDEX, SearchVector=_vector(1, 0, 0), TopK=1)
    assert raised.value.response["Error"]["Code"] == "ResourceNotFoundException"


def test_create_table_refusals_change_nothing(aws: Any) -> None:
    unknown = _index(SearchSchema=[{"AttributeName": "Brand", "SearchSchemaElementType": "HASH"}])
    dot = "DistanceFunction must be one of COSINE, DOT_PRODUCT, EUCLIDEAN (emulated message)"
    for index, billing, message in [
        (unknown, "PAY_PER_REQUEST", moto_vectors.NOT_DEFINED),
        (_index(), "PROVISIONED", moto_vectors.ON_DEMAND_ONLY),
        (_index(DistanceFunction="MANHATTAN"), "PAY_PER_REQUEST", dot),
    ]:
        with pytest.raises(ClientError) as raised:
            _table(aws, index, billing=billing)
        assert raised.value.response["Error"] == {"Code": "ValidationException", "Message": message}
        assert TABLE not in aws.list_tables()["TableNames"]


def test_update_table_adds_an_index_over_existing_items_and_deletes_it(aws: Any) -> None:
    _table(aws)
    _put(aws)
    assert "VectorIndexes" not in aws.describe_table(TableName=TABLE)["Table"]
    aws.update_table(TableName=TABLE, AttributeDefinitions=SEARCHED, VectorIndexUpdates=[{"Create": _index()}])
    with pytest.raises(ClientError) as raised:  # a second index of the same name changes nothing
        aws.update_table(TableName=TABLE, VectorIndexUpdates=[{"Create": _index(DistanceFunction="EUCLIDEAN")}])
    assert raised.value.response["Error"]["Message"] == f"Vector index {INDEX} already exists (emulated message)"
    assert aws.describe_table(TableName=TABLE)["Table"]["VectorIndexes"][0]["DistanceFunction"] == "COSINE"
    assert [r["Item"]["ProductId"]["S"] for r in _search(aws, top_k=1)["SearchResults"]] == ["p1"]
    aws.update_table(TableName=TABLE, VectorIndexUpdates=[{"Delete": {"IndexName": INDEX}}])
    assert "VectorIndexes" not in aws.describe_table(TableName=TABLE)["Table"]
    with pytest.raises(ClientError) as raised:
        _search(aws)
    assert raised.value.response["Error"]["Message"] == moto_vectors.NO_INDEX.format(INDEX)


@pytest.fixture
def moto_server() -> Iterator[Any]:
    """A moto server as the local stack runs it (local.environment.start_embedded_dynamodb), its client at it."""
    from moto.server import ThreadedMotoServer

    with atomic_moto_requests():
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        host, port = server.get_host_and_port()
        try:
            yield boto3.client("dynamodb", endpoint_url=f"http://{host}:{port}", region_name="us-east-1")
        finally:
            server.stop()


def test_the_local_stacks_server_answers_search_vectors(moto_server: Any) -> None:
    """botocore sends SearchVectors to its own endpoint unless one is set, as the local stack sets one."""
    _table(moto_server, _index())
    _put(moto_server)
    results = _search(moto_server)["SearchResults"]
    assert [r["Item"]["ProductId"]["S"] for r in results] == ["p1", "p4", "p3", "p2"]


def test_no_lambda_code_imports_the_double() -> None:
    """A test double of the AWS API: the functions and their layer reach it only through boto3, never by import."""
    root = Path(__file__).resolve().parents[2]
    sources = [*(root / "layers").rglob("*.py"), *(root / "functions").rglob("*.py")]
    assert sources
    assert [path for path in sources if "moto_vectors" in path.read_text()] == []


def test_the_local_stacks_snapshot_keeps_the_index(products: Any) -> None:
    """local/saved_data.py pickles moto's tables: the index is kept on the table, so a restart still searches."""
    import pickle

    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.dynamodb.models import dynamodb_backends

    backend = dynamodb_backends[DEFAULT_ACCOUNT_ID][products.meta.region_name]
    backend.tables[TABLE] = pickle.loads(pickle.dumps(backend.tables[TABLE]))  # noqa: S301 - written just above
    assert [r["Item"]["ProductId"]["S"] for r in _search(products, top_k=1)["SearchResults"]] == ["p1"]
