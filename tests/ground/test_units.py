"""One table of units and one formatter: every metric's unit is in it, and values read as they always have."""

from __future__ import annotations

from sshbench.model import METRICS
from sshbench.units import FIELD_UNITS, UNITS, format_value, shown, symbol


def test_every_metric_names_a_unit_of_the_table() -> None:
    for metric in METRICS.values():
        unit = UNITS[metric.unit]
        assert (metric.stored_unit, metric.scale) == (unit.stored, unit.scale)
        assert metric.format(1.0) == format_value(metric.unit, 1.0)


def test_values_read_in_the_unit_shown() -> None:
    assert format_value("ms", 0.1234) == "123.4"
    assert format_value("ms", 0.1234, ".0f") == "123"
    assert format_value("MB/s", 987.6) == "988"
    assert format_value("B/s", 12_345_678) == "12.3"
    assert format_value("MiB", 3 * 2**20 + 2**19) == "3.5"
    assert format_value("s/GiB", 1.234) == "1.23"
    assert format_value("share", 0.05) == "5%"
    assert shown("ms", 2.0) == 2000.0 and symbol("B/s") == "MB/s"


def test_what_is_missing_reads_as_missing() -> None:
    assert format_value("ms", None) == "-"
    assert format_value("MB/s", None, missing="n/a") == "n/a"


def test_every_stored_field_says_its_unit() -> None:
    assert {"value", "wall", "client_cpu", "server_cpu", "phases", "client_rss", "nbytes"} <= set(FIELD_UNITS)
