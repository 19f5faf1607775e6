"""The client context's settings read back from the running client (aeron_context_get_*)."""
from __future__ import annotations

import pytest

from aeron_py import Aeron, AeronError, MediaDriver

pytestmark = [pytest.mark.timeout(60), pytest.mark.integration]


def test_settings_and_name_are_what_the_client_runs_with(driver: MediaDriver) -> None:
    with Aeron(driver=driver, client_name="pricing-feed", timeout=7.5, use_conductor_agent_invoker=True,
               idle_sleep_duration_ns=2_000_000, pre_touch_mapped_memory=True) as aeron:
        settings = aeron.settings()
        assert aeron.client_name == "pricing-feed" == settings["client_name"]
        assert settings["dir"] == driver.dir and settings["driver_timeout_ms"] == 7500
        assert settings["idle_sleep_duration_ns"] == 2_000_000 and settings["pre_touch_mapped_memory"] is True
        assert settings["use_conductor_agent_invoker"] is True
        assert settings["keepalive_interval_ns"] > 0 and settings["resource_linger_duration_ns"] > 0
    with pytest.raises(AeronError):
        aeron.settings()


def test_a_client_without_a_name(driver: MediaDriver) -> None:
    with Aeron(driver=driver) as aeron:
        assert aeron.client_name == ""  # Aeron's default: no name
        assert aeron.settings()["use_conductor_agent_invoker"] is False
