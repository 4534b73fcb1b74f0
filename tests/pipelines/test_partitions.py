"""The partition answers a run's steps get from memory (``partitions.remembered``): the
storage's answers, asked once each, and the instance's own methods again after the block."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from pipelines import partitions


def test_remembered_answers_as_the_storage_once_and_restores_the_instance(tmp_path: Path) -> None:
    with dg.DagsterInstance.local_temp(str(tmp_path)) as instance:
        partitions.register(instance, answer_dates=["2026-01-01", "2026-01-02"])
        name = partitions.answer_date.name
        plain = instance.has_dynamic_partition
        with partitions.remembered(instance) as same:
            assert same is instance
            assert instance.has_dynamic_partition(name, "2026-01-01")
            assert not instance.has_dynamic_partition(name, "2026-01-03")
            assert instance.get_dynamic_partitions(name) == ["2026-01-01", "2026-01-02"]
            assert instance.get_existing_dynamic_partitions(
                name, ["2026-01-02", "2026-01-09"]) == {"2026-01-02"}
            # Another process (here: another instance over the same storage) removes a date:
            # within the block the answers already given stand, asked once each.
            with dg.DagsterInstance.from_ref(instance.get_ref()) as other:
                other.delete_dynamic_partition(name, "2026-01-01")
            assert instance.has_dynamic_partition(name, "2026-01-01")
            assert instance.get_dynamic_partitions(name) == ["2026-01-01", "2026-01-02"]
            # Dagster's own lookup through the partitions definition reads the same memory.
            with dg.partition_loading_context(dynamic_partitions_store=instance):
                assert partitions.answer_date.has_partition_key("2026-01-01")
        # After the block the instance asks its storage again.
        assert instance.has_dynamic_partition == plain
        assert not instance.has_dynamic_partition(name, "2026-01-01")
        assert instance.get_dynamic_partitions(name) == ["2026-01-02"]
        assert "has_dynamic_partition" not in vars(instance)
