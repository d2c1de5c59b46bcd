"""livemon.set_step: the training step every event and Stat window carries."""

import datetime

import pytest

import livemon

A = livemon.Aggregation
HOUR = datetime.timedelta(hours=1)
NOW = datetime.datetime(2025, 3, 4, 5, 6, 7, 891011)


@pytest.fixture(autouse=True)
def no_step():
    """The step is process-wide: every test starts and ends without one."""
    livemon.clear_step()
    yield
    livemon.clear_step()


def test_there_is_no_step_until_one_is_set(collect):
    events = collect("py.step")
    assert livemon.current_step() is None
    livemon.log_event(livemon.Event("py.step.none", NOW, {}))
    assert events.named("py.step.none")[0].step is None


def test_logged_events_carry_the_step_current_then(collect):
    events = collect("py.step")
    livemon.set_step(12)
    assert livemon.current_step() == 12
    mine = livemon.Event("py.step.a", NOW, {"loss": 0.5})
    livemon.log_event(mine)
    livemon.set_step(13)
    livemon.log_event(livemon.Event("py.step.b", NOW, {}))
    assert events.named("py.step.a")[0].step == 12
    assert events.named("py.step.b")[0].step == 13
    assert mine.step is None  # the caller's event is left as it was


def test_an_events_own_step_or_int_step_field_wins(collect):
    events = collect("py.step")
    livemon.set_step(100)
    livemon.log_event(livemon.Event("py.step.own", NOW, {}, step=5))
    livemon.log_event(livemon.Event("py.step.field", NOW, {"step": 7}))
    livemon.log_event(livemon.Event("py.step.float_field", NOW, {"step": 7.0}))
    assert events.named("py.step.own")[0].step == 5
    assert events.named("py.step.field")[0].data["step"] == 7  # states its own step; passed on as it is
    assert events.named("py.step.float_field")[0].step == 100  # only an int field states a step


def test_stated_step_reads_the_step_or_the_int_step_field():
    assert livemon.Event("e", NOW, {}).stated_step is None
    assert livemon.Event("e", NOW, {"step": 7}).stated_step == 7
    assert livemon.Event("e", NOW, {"step": 7.0}).stated_step is None
    assert livemon.Event("e", NOW, {"step": 7}, step=5).stated_step == 5


def test_a_stat_window_carries_the_step_current_when_it_closed(collect):
    events = collect(livemon.STAT_EVENT)
    stat = livemon.Stat("py.step.loss", [A.MEAN], HOUR)
    livemon.set_step(1)
    stat.add(1.0)
    livemon.set_step(2)
    stat.flush()
    (window,) = [e for e in events.named(livemon.STAT_EVENT) if "py.step.loss.mean" in e.data]
    assert window.step == 2


def test_clear_step_ends_it(collect):
    livemon.set_step(3)
    livemon.clear_step()
    assert livemon.current_step() is None


def test_events_differing_only_in_step_differ_and_show_it():
    a = livemon.Event("e", NOW, {"k": 1.0})
    b = livemon.Event("e", NOW, {"k": 1.0}, step=4)
    assert a != b
    assert b == livemon.Event("e", NOW, {"k": 1.0}, step=4)
    assert "step=4" in repr(b)
    assert "step" not in repr(a)


def test_bad_steps_are_refused():
    with pytest.raises(TypeError):
        livemon.set_step("7")
    with pytest.raises(TypeError):
        livemon.set_step(1.5)
    with pytest.raises(TypeError):
        livemon.Event("e", NOW, {}, step="x")
