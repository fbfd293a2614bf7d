"""The curated document in DynamoDB: a head item read by every turn, plus one immutable item per version."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from agent_memory.document import EMPTY_DOCUMENT, Author, Document, Reason
from agent_memory.errors import VersionConflict
from agent_memory.scope import Scope
from agent_memory.storage.client import as_unavailable, cancellation_codes
from agent_memory.storage.keys import DOC_HEAD, version_sk


def _document_from_item(item: dict[str, Any]) -> Document:
    return Document(content=item["content"]["S"], version=int(item["version"]["N"]), updated_at=item["updated_at"]["S"])


class DocumentStore:
    """Writes are one transaction: the new version item and the head move together, or not at all."""

    def __init__(self, client: Any, table_name: str) -> None:
        self._client = client
        self._table = table_name

    def current(self, scope: Scope, *, consistent: bool = False) -> Document:
        """The head in one GetItem; version 0 when the scope has no document yet."""
        try:
            answer = self._client.get_item(
                TableName=self._table,
                Key={"pk": {"S": scope.key}, "sk": {"S": DOC_HEAD}},
                ConsistentRead=consistent,
            )
        except ClientError as error:
            raise as_unavailable(error) or error from None
        item = answer.get("Item")
        return _document_from_item(item) if item else EMPTY_DOCUMENT

    def version(self, scope: Scope, version: int) -> tuple[Document, Reason, Author] | None:
        """One saved version as it was, with why and by whom it was saved; None if the scope never had it."""
        try:
            answer = self._client.get_item(
                TableName=self._table, Key={"pk": {"S": scope.key}, "sk": {"S": version_sk(version)}}
            )
        except ClientError as error:
            raise as_unavailable(error) or error from None
        item = answer.get("Item")
        if not item:
            return None
        by = Author(
            **{key: item[f"by_{key}"]["S"] for key in ("user_id", "thread_id", "run_id") if f"by_{key}" in item}
        )
        return _document_from_item(item), item["reason"]["S"], by

    def save(
        self, scope: Scope, content: str, *, expected_version: int, updated_at: str, reason: Reason, by: Author
    ) -> Document:
        """Save ``content`` as version ``expected_version + 1``.

        Raises VersionConflict when the head is no longer at ``expected_version``; nothing is written then.
        """
        document = Document(content=content, version=expected_version + 1, updated_at=updated_at)
        attributes: dict[str, Any] = {
            "pk": {"S": scope.key},
            "content": {"S": content},
            "version": {"N": str(document.version)},
            "updated_at": {"S": updated_at},
            "reason": {"S": reason},
            **{f"by_{key}": {"S": value} for key, value in by.as_dict().items()},
        }
        head_condition: dict[str, Any] = (
            {"ConditionExpression": "attribute_not_exists(sk)"}
            if expected_version == 0
            else {
                "ConditionExpression": "version = :expected",
                "ExpressionAttributeValues": {":expected": {"N": str(expected_version)}},
            }
        )
        items = [
            {
                "Put": {
                    "TableName": self._table,
                    "Item": {**attributes, "sk": {"S": version_sk(document.version)}},
                    "ConditionExpression": "attribute_not_exists(sk)",
                }
            },
            {"Put": {"TableName": self._table, "Item": {**attributes, "sk": {"S": DOC_HEAD}}, **head_condition}},
        ]
        attempts = 0
        while True:
            attempts += 1
            try:
                self._client.transact_write_items(TransactItems=items)
                return document
            except ClientError as error:
                codes = cancellation_codes(error)
                if "ConditionalCheckFailed" in codes:
                    raise VersionConflict(
                        f"the document is no longer at version {expected_version}; read it again and reapply the change"
                    ) from None
                if "TransactionConflict" in codes and attempts < _TRANSACTION_ATTEMPTS:
                    continue  # another transaction held the item; ours did nothing, so trying again is safe
                raise as_unavailable(error) or error from None


_TRANSACTION_ATTEMPTS = 3
