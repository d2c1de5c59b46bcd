"""livemon.enable_system_stats: the process's system Stats, switched on in core without a Publisher."""

import datetime

import pytest

import livemon


def stat_keys(events):
    return {key for event in events for key in event.data}


def test_the_stats_are_logged_while_a_handle_is_open(collect):
    events = collect(livemon.STAT_EVENT)
    with livemon.enable_system_stats(window_size=datetime.timedelta(milliseconds=50)) as handle:
        assert handle.active
        assert isinstance(handle.gpu_status, str)
        assert events.wait_for(lambda got: "system.rss_bytes.value" in stat_keys(got))
    assert not handle.active
    assert handle.gpu_status == ""
    handle.close()  # a second close does nothing


def test_handles_share_the_processs_one_sampler():
    first = livemon.enable_system_stats(window_size=0.05)
    second = livemon.enable_system_stats(window_size=10)
    try:
        assert first.active and second.active
        assert first.gpu_status == second.gpu_status
        first.close()
        assert second.active, "the second handle keeps it on"
    finally:
        first.close()
        second.close()


def test_a_window_below_a_millisecond_is_refused():
    with pytest.raises(ValueError, match="window"):
        livemon.enable_system_stats(window_size=datetime.timedelta(microseconds=10))
