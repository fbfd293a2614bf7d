"""A test double of DynamoDB's vector indexes on moto (5.2.5 has none): the local stack's and the tests'.

moto answers ``SearchVectors``, and its ``CreateTable``/``UpdateTable``/``DescribeTable`` accept and describe
``VectorIndexes``, as the API reference describes them. The search is exact (every item of the index is
scored), where DynamoDB's is approximate: a test that passes here can only lose recall on AWS, never gain it.
Nothing under layers/ or functions/ imports this module; the Lambda code calls boto3, and boto3 reaches this
double only where moto stands in for DynamoDB.

Sources, named again where each field or message is used:

- [model] botocore 1.44.18's service model for ``dynamodb`` (``SearchVectors``, ``VectorIndex``,
  ``CreateVectorIndexAction``, ``VectorIndexDescription``, ``SearchResultItem``): every request and answer field.
- [API] the API reference, ``SearchVectors``: the score of each distance function and the order of the results.
- [guide] the developer guide, "Creating and searching vector indexes" (on-demand tables only; the index's ARN
  is the table's ``/index/`` name), "Requirements and limitations" (f32 vectors; no paging) and
  "SearchConditionExpression reference" (top-level attributes of the search schema only; ``#name`` and
  ``:value`` placeholders as in ``Query``).
- [trouble] the developer guide, "Troubleshooting vector indexes": the service's own ``ValidationException``
  messages, quoted verbatim where this double raises them.

Where the service refuses something but no page quotes its message, the message here is the double's own and
says so ("(emulated message)"). What the double does not do it refuses rather than answers differently:
a ``SearchConditionExpression`` is a conjunction (``AND``) of equalities; the comparators, ``IN``,
``BETWEEN``, ``OR``, ``NOT`` and functions the newer reference lists are refused (see ``_conditions``).
Not emulated: the refusal of a write whose vector has the wrong length (such an item is left out of the
index instead), ``ConsumedCapacity``, the backfill (an index is ``ACTIVE`` at once) and the 16 MB answer cap.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from decimal import Decimal
from typing import Any
from unittest.mock import patch

import numpy as np

TOP_K = range(1, 101)  # [trouble]: "TopK was outside 1 to 100"
DISTANCES = ("COSINE", "DOT_PRODUCT", "EUCLIDEAN")  # [model] VectorDistanceFunction
PROJECTIONS = ("ALL", "KEYS_ONLY", "INCLUDE")  # [model] ProjectionType

# [trouble], verbatim.
HASH_REQUIRED = "SearchConditionExpression must be provided when SearchSchema has a HASH key"
NOT_DEFINED = "One element in SearchSchema is not defined in attribute definitions"
INVALID_COMPARATOR = "Invalid comparator used in SearchConditionExpression"
TOP_K_RANGE = "Provided TopK value is out of valid range"
NO_INDEX = "The table does not have the specified index: {}"

# The double's own words, for refusals the guide documents without quoting the service's message.
ON_DEMAND_ONLY = "Vector indexes require BillingMode PAY_PER_REQUEST (emulated message)"  # [guide]
WRONG_DIMENSIONS = "SearchVector has {} dimensions; the index {} has {} (emulated message)"  # [model] SearchVector
NOT_IN_SCHEMA = "SearchConditionExpression names {}, which is not in the index's SearchSchema (emulated message)"
NESTED = "{} is a nested attribute path; SearchVectors takes top-level attributes only (emulated message)"  # [guide]
NOT_A_VECTOR = "SearchVector must be a list of numbers (N) (emulated message)"  # [model] "32-bit ... floating point"
NOT_EMULATED = "SearchConditionExpression {} is not emulated locally: only equalities joined by AND are"


def _validation(message: str) -> Exception:
    from moto.dynamodb.exceptions import MockValidationException

    return MockValidationException(message)


def _indexes(table: Any) -> dict[str, dict[str, Any]]:
    """The table's vector indexes, by name, as CreateTable declared them ([model] ``VectorIndex``). Kept on
    moto's Table object, so that its backups, its pickle (local/saved_data.py) and a restore keep them."""
    if not hasattr(table, "vector_indexes"):
        table.vector_indexes = {}
    indexes: dict[str, dict[str, Any]] = table.vector_indexes
    return indexes


def _checked(
    billing: str | None, attributes: list[dict[str, str]], declared: list[dict[str, Any]], existing: set[str]
) -> dict[str, dict[str, Any]]:
    """New indexes, by name, once checked (before anything is changed: a refused request changes nothing):
    [guide] on-demand tables only; [trouble] every SearchSchema attribute in the table's AttributeDefinitions;
    [model] the enums; a name not already the table's."""
    if billing != "PAY_PER_REQUEST":
        raise _validation(ON_DEMAND_ONLY)
    defined = {definition["AttributeName"] for definition in attributes}
    indexes: dict[str, dict[str, Any]] = {}
    for index in declared:
        if any(element["AttributeName"] not in defined for element in index.get("SearchSchema", [])):
            raise _validation(NOT_DEFINED)
        if index["DistanceFunction"] not in DISTANCES:
            raise _validation(f"DistanceFunction must be one of {', '.join(DISTANCES)} (emulated message)")
        if index["Projection"].get("ProjectionType", "ALL") not in PROJECTIONS:
            raise _validation(f"ProjectionType must be one of {', '.join(PROJECTIONS)} (emulated message)")
        if index["IndexName"] in existing or index["IndexName"] in indexes:
            raise _validation(f"Vector index {index['IndexName']} already exists (emulated message)")
        indexes[index["IndexName"]] = {key: index[key] for key in _DECLARED if key in index}
    return indexes


_DECLARED = ("IndexName", "VectorAttribute", "SearchSchema", "Projection", "Dimensions", "DistanceFunction")


def _description(table: Any) -> list[dict[str, Any]]:
    """[model] ``VectorIndexDescription``: the declaration, ``ACTIVE`` and not backfilling at once (the double has
    no backfill), the items it holds now (DynamoDB's ``ItemCount`` lags by up to six hours), and the ARN in the
    format [guide] gives for ``dynamodb:SearchVectors``."""
    return [
        {
            **index,
            "IndexStatus": "ACTIVE",
            "Backfilling": False,
            "IndexSizeBytes": 0,  # as moto's TableSizeBytes
            "ItemCount": sum(1 for _ in _indexed(table, index, None)),
            "IndexArn": f"{table.table_arn}/index/{name}",
        }
        for name, index in _indexes(table).items()
    ]


def _hash_attribute(index: dict[str, Any]) -> str | None:
    return next(
        (e["AttributeName"] for e in index.get("SearchSchema", []) if e["SearchSchemaElementType"] == "HASH"), None
    )


def _indexed(table: Any, index: dict[str, Any], partition: dict[str, Any] | None) -> Iterator[tuple[Any, list[str]]]:
    """The items in the index (moto's) with their vectors' numbers: those with a vector of the index's length and
    every search-schema attribute ([trouble]: an item without its HASH attribute is no longer returned). With
    the table's own hash key as the index's HASH, only that partition is read. Only the winners are converted
    to attribute-value maps: converting every 384-number vector cost 0.7 ms an item."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    if partition is not None and _hash_attribute(index) == table.hash_key_attr:
        stored = table.items.get(DynamoType(partition))
        partitions = [] if stored is None else [stored]
    else:
        partitions = list(table.items.values())
    vector, dimensions = index["VectorAttribute"]["AttributeName"], index["Dimensions"]
    schema = [element["AttributeName"] for element in index.get("SearchSchema", [])]
    for stored in partitions:
        for item in stored.values() if table.range_key_attr else [stored]:
            value = item.attrs.get(vector)
            if value is None or value.type != "L" or len(value.value) != dimensions:
                continue
            if all(element.type == "N" for element in value.value) and all(name in item.attrs for name in schema):
                yield item, [element.value for element in value.value]


def _f32(numbers: list[str]) -> Any:
    """[guide] "Vector embeddings are stored in the index at 32-bit floating point (f32) precision"."""
    return np.asarray(numbers, dtype=np.float32).astype(np.float64)


def _scores(distance: str, query: Any, vectors: Any) -> Any:
    """[API]: COSINE is 1 - cosine similarity (0 identical to 2 opposite), EUCLIDEAN the distance, DOT_PRODUCT
    the product (higher is closer)."""
    if distance == "EUCLIDEAN":
        return np.linalg.norm(vectors - query, axis=1)
    products = vectors @ query
    if distance == "DOT_PRODUCT":
        return products
    norms = np.linalg.norm(vectors, axis=1) * np.linalg.norm(query)
    return 1.0 - np.divide(products, norms, out=np.zeros_like(products), where=norms > 0)


_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")  # DynamoDB's N: no NaN, no Infinity
_TOKEN = re.compile(r"\s*(<>|<=|>=|[=<>(),]|[#:]?[A-Za-z0-9_.\[\]-]+)")
_COMPARATORS = {"<>", "<", "<=", ">", ">=", "IN", "BETWEEN"}


def _tokens(expression: str) -> list[str]:
    tokens, position = [], 0
    while position < len(expression.rstrip()):
        match = _TOKEN.match(expression, position)
        if match is None:
            raise _validation(f"Invalid SearchConditionExpression near {expression[position:]!r} (emulated message)")
        tokens.append(match.group(1))
        position = match.end()
    return tokens


def _name(token: str, names: dict[str, str]) -> str:
    """A top-level attribute's name, an ``#alias`` resolved ([guide]: the same placeholders as ``Query``; the
    message is DynamoDB's for an undefined alias in any expression)."""
    if token.startswith("#"):
        if token not in names:
            raise _validation(
                f"An expression attribute name used in the document path is not defined; attribute name: {token}"
            )
        return names[token]
    if "." in token or "[" in token:
        raise _validation(NESTED.format(token))
    return token


def _conditions(request: dict[str, Any], schema: set[str]) -> list[tuple[str, dict[str, Any]]]:
    """The ``SearchConditionExpression`` as (attribute, value) pairs, all to hold: equalities joined by ``AND``
    ([model]: "The HASH and INLINE_FILTER attributes support only the equality operator (=)"). Another
    comparator is refused with the service's message ([trouble]); ``OR``, ``NOT``, parentheses and functions,
    which the newer reference admits, are refused as not emulated: never an answer the service would not give."""
    expression = request.get("SearchConditionExpression")
    if not expression:
        return []
    names, values = request.get("ExpressionAttributeNames", {}), request.get("ExpressionAttributeValues", {})
    tokens, conditions = _tokens(expression), []
    for start in range(0, len(tokens), 4):
        clause = tokens[start : start + 4]
        if any(token.upper() in _COMPARATORS for token in clause):
            raise _validation(INVALID_COMPARATOR)
        unsupported = next((t for t in clause if t.upper() in {"OR", "NOT"} or t in {"(", ")", ","}), None)
        if (
            unsupported is not None
            or len(clause) < 3
            or clause[1] != "="
            or (len(clause) == 4 and clause[3].upper() != "AND")
        ):
            raise _validation(NOT_EMULATED.format(repr(expression)))
        if len(clause) == 4 and start + 4 == len(tokens):
            raise _validation(NOT_EMULATED.format(repr(expression)))
        left, right = clause[0], clause[2]
        attribute, placeholder = (left, right) if right.startswith(":") else (right, left)
        if not placeholder.startswith(":") or attribute.startswith(":"):
            raise _validation(NOT_EMULATED.format(repr(expression)))
        if placeholder not in values:
            raise _validation(
                f"An expression attribute value used in expression is not defined; attribute value: {placeholder}"
            )
        name = _name(attribute, names)
        if name not in schema:
            raise _validation(NOT_IN_SCHEMA.format(name))
        conditions.append((name, values[placeholder]))
    return conditions


def _equal(stored: dict[str, Any], wanted: dict[str, Any]) -> bool:
    """Numbers compare as numbers ([guide]: a Number is compared by value); any other type as it is."""
    if "N" in stored and "N" in wanted:
        return bool(Decimal(stored["N"]) == Decimal(wanted["N"]))
    return stored == wanted


def _projected(table: Any, index: dict[str, Any], item: dict[str, Any], wanted: list[str] | None) -> dict[str, Any]:
    """[model] ``Projection`` of the index: ALL, or the table's keys and the search schema's attributes (KEYS_ONLY),
    plus ``NonKeyAttributes`` (INCLUDE). A ``ProjectionExpression`` then keeps the names it lists: "Only
    attributes projected into the vector index can be retrieved" ([model] ``ProjectionExpression``)."""
    projection = index["Projection"]
    if projection.get("ProjectionType", "ALL") != "ALL":
        keep = {table.hash_key_attr, table.range_key_attr, *(e["AttributeName"] for e in index.get("SearchSchema", []))}
        if projection.get("ProjectionType") == "INCLUDE":
            keep.update(projection.get("NonKeyAttributes", []))
        item = {name: value for name, value in item.items() if name in keep}
    if wanted is not None:
        item = {name: item[name] for name in wanted if name in item}
    return item


def search(backend: Any, request: dict[str, Any]) -> dict[str, Any]:
    """``SearchVectors`` over moto's table: the checks in the order the request's members are named in [model]
    (table, index, TopK, vector, condition), then every indexed item scored, best first ([API])."""
    table = backend.get_table(request["TableName"])  # moto's ResourceNotFoundException for a missing table
    index = _indexes(table).get(request["IndexName"])
    if index is None:
        raise _validation(NO_INDEX.format(request["IndexName"]))
    top_k = request["TopK"]
    if top_k not in TOP_K:
        raise _validation(TOP_K_RANGE)
    vector = request["SearchVector"]
    if any(set(element) != {"N"} or not _NUMBER.fullmatch(element["N"].strip()) for element in vector):
        raise _validation(NOT_A_VECTOR)
    if len(vector) != index["Dimensions"]:
        raise _validation(WRONG_DIMENSIONS.format(len(vector), index["IndexName"], index["Dimensions"]))
    schema = {element["AttributeName"] for element in index.get("SearchSchema", [])}
    conditions = _conditions(request, schema)
    hash_attribute = _hash_attribute(index)
    partition = next((value for name, value in conditions if name == hash_attribute), None)
    if hash_attribute is not None and partition is None:
        raise _validation(HASH_REQUIRED)
    names = request.get("ExpressionAttributeNames", {})
    projection = request.get("ProjectionExpression")
    wanted = None if projection is None else [_name(name.strip(), names) for name in projection.split(",")]
    items = [
        (item, numbers)
        for item, numbers in _indexed(table, index, partition)
        if all(_equal(item.attrs[name].to_json(), value) for name, value in conditions)
    ]
    if not items:
        return {"SearchResults": []}
    vectors = np.stack([_f32(numbers) for _, numbers in items])
    scores = _scores(index["DistanceFunction"], _f32([element["N"] for element in vector]), vectors)
    order = np.argsort(-scores if index["DistanceFunction"] == "DOT_PRODUCT" else scores, kind="stable")[:top_k]
    return {
        "SearchResults": [
            {"Item": _projected(table, index, items[i][0].to_json()["Attributes"], wanted), "Score": float(scores[i])}
            for i in order
        ]
    }


@contextmanager
def vector_indexes() -> Iterator[None]:
    """moto's DynamoDB with vector indexes, for the block: ``SearchVectors`` answered, ``VectorIndexes`` in
    CreateTable and DescribeTable, ``VectorIndexUpdates`` in UpdateTable."""
    import moto.backend_index as backend_index
    import moto.dynamodb.urls as dynamodb_urls
    from moto.dynamodb.models.table import Table
    from moto.dynamodb.responses import DynamoHandler, DynamoResult

    create_table, update_table, describe = DynamoHandler.create_table, DynamoHandler.update_table, Table.describe

    def search_vectors(self: DynamoHandler) -> tuple[str, dict[str, str]]:
        from moto.dynamodb.models.utilities import dynamo_json_dump  # a Binary attribute's bytes as base64, as moto's

        return dynamo_json_dump(search(self.dynamodb_backend, self.body)), {}

    def search_only(body: dict[str, Any], declared: list[dict[str, Any]]) -> dict[str, Any]:
        """The request without the attributes only the vector indexes use: moto refuses an AttributeDefinition
        that no key schema names ("Some AttributeDefinitions are not used"); DynamoDB takes it ([trouble])."""
        keys = {key["AttributeName"] for key in body.get("KeySchema", [])}
        for index in [*body.get("GlobalSecondaryIndexes", []), *body.get("LocalSecondaryIndexes", [])]:
            keys.update(key["AttributeName"] for key in index["KeySchema"])
        for update in body.get("GlobalSecondaryIndexUpdates", []):
            keys.update(key["AttributeName"] for key in update.get("Create", {}).get("KeySchema", []))
        searched = {e["AttributeName"] for index in declared for e in index.get("SearchSchema", [])} - keys
        kept = [a for a in body.get("AttributeDefinitions", []) if a["AttributeName"] not in searched]
        return {**body, "AttributeDefinitions": kept} if body.get("AttributeDefinitions") else body

    def with_indexes(self: DynamoHandler, original: Any, declared: list[dict[str, Any]]) -> Any:
        body = self.body
        self.body = search_only(body, declared)
        try:
            only_vectors = not self.body.keys() - {"TableName", "AttributeDefinitions", "VectorIndexUpdates"}
            answer = None if only_vectors else original(self)
        finally:
            self.body = body
        table = self.dynamodb_backend.get_table(body["TableName"])
        known = {definition["AttributeName"] for definition in table.attr}
        table.attr = [
            *table.attr,
            *(a for a in body.get("AttributeDefinitions", []) if a["AttributeName"] not in known),
        ]
        return table, answer

    def create(self: DynamoHandler) -> Any:
        declared = self.body.get("VectorIndexes", [])
        if not declared:
            return create_table(self)
        new = _checked(self.body.get("BillingMode"), self.body["AttributeDefinitions"], declared, set())
        table, _ = with_indexes(self, create_table, declared)
        _indexes(table).update(new)
        return DynamoResult(table.describe())

    def update(self: DynamoHandler) -> Any:
        updates = self.body.get("VectorIndexUpdates", [])
        if not updates:
            return update_table(self)
        table = self.dynamodb_backend.get_table(self.body["TableName"])
        created = [update["Create"] for update in updates if "Create" in update]
        for update in updates:
            if "Delete" in update and update["Delete"]["IndexName"] not in _indexes(table):
                raise _validation(NO_INDEX.format(update["Delete"]["IndexName"]))
        attributes = [*table.attr, *self.body.get("AttributeDefinitions", [])]
        new = _checked(table.billing_mode, attributes, created, set(_indexes(table)))
        with_indexes(self, update_table, created)
        for update in updates:
            if "Delete" in update:
                del _indexes(table)[update["Delete"]["IndexName"]]
        _indexes(table).update(new)
        return DynamoResult(table.describe())

    def describe_with_indexes(self: Table, base_key: str = "TableDescription") -> dict[str, Any]:
        answer: dict[str, Any] = describe(self, base_key)
        if _indexes(self):
            answer[base_key]["VectorIndexes"] = _description(self)
        return answer

    # SearchVectors goes to its own endpoints ([guide] "SearchVectors endpoints"): moto's in-process mock must
    # take them as DynamoDB's (with an endpoint URL set, as the local stack's, botocore sends it there instead).
    search_hosts = [
        r"https?://search-dynamodb\.(.+)\.amazonaws\.com",
        r"https?://(.+)\.search-ddb\.(.+)\.amazonaws\.com",
    ]
    with ExitStack() as stack:
        stack.enter_context(patch.object(DynamoHandler, "search_vectors", search_vectors, create=True))
        stack.enter_context(patch.object(DynamoHandler, "create_table", create))
        stack.enter_context(patch.object(DynamoHandler, "update_table", update))
        stack.enter_context(patch.object(Table, "describe", describe_with_indexes))
        patterns = [*(("dynamodb", re.compile(host)) for host in search_hosts), *backend_index.backend_url_patterns]
        stack.enter_context(patch.object(backend_index, "backend_url_patterns", patterns))
        stack.enter_context(patch.object(dynamodb_urls, "url_bases", [*dynamodb_urls.url_bases, *search_hosts]))
        yield
