"""Reads a /metrics scrape on stdin with the Prometheus project's own parser for the
OpenMetrics text format (strict: a malformed line, a missing '# EOF' or a bad type fails it),
and prints every sample as a JSON line: {"family", "type", "name", "labels", "value"}."""

import json
import sys

from prometheus_client.openmetrics.parser import text_string_to_metric_families

for family in text_string_to_metric_families(sys.stdin.read()):
    for sample in family.samples:
        print(json.dumps({
            "family": family.name,
            "type": family.type,
            "name": sample.name,
            "labels": sample.labels,
            "value": sample.value,
        }))
