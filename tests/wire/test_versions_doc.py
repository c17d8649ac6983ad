"""docs/wire-protocol.md's "Versions" table says what a broker serves: every row matches what ApiVersions
advertises, and every advertised API has a row."""

from __future__ import annotations

import re
from pathlib import Path

from zkcontroller.broker.kafka_apis import AdminHandlers, KafkaApis

DOC = Path(__file__).resolve().parents[2] / "docs" / "wire-protocol.md"
ROW = re.compile(r"^\| [A-Za-z]+ \((\d+)\) \| ([^|]*) \|", re.MULTILINE)


def _documented() -> dict[int, tuple[int, int] | None]:
    table = DOC.read_text().split("## Versions", 1)[1].split("\n## ", 1)[0]
    served: dict[int, tuple[int, int] | None] = {}
    for key, cell in ROW.findall(table):
        span = re.fullmatch(r"(\d+)(?:–(\d+))?", cell.strip())
        served[int(key)] = (int(span[1]), int(span[2] or span[1])) if span else None
    return served


def test_the_versions_table_says_what_api_versions_advertises() -> None:
    apis = KafkaApis(1, control_handler=lambda: None, metadata_cache=lambda: None, cluster_id=lambda: None,
                     create_topics=object(), delete_topics=object(),  # type: ignore[arg-type]
                     admin=AdminHandlers(*[object()] * 6),  # type: ignore[arg-type]  # as a broker process is given
                     producer_ids=object(), describe_configs=object(),  # type: ignore[arg-type]
                     alter_configs=object())  # type: ignore[arg-type]
    documented = _documented()
    assert documented, "no rows found"
    assert documented == apis.supported_versions()
