"""``make bench``: what one call of each route costs, against what DynamoDB alone would cost.

``bench.run`` measures, per operation, the DynamoDB requests one call makes, its in-process handler
latency on moto next to a floor of the bare boto3 calls it needs, and the cold import time of the
function that serves it; it prints a table with the targets and merges the numbers into
``docs/benchmarks.json``, where later operations add their own keys.
"""

from __future__ import annotations
