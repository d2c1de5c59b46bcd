"""prof.events() and prof.key_averages() for livemon.profiler: a trace's ranges as torch.profiler's
FunctionEvent, summed per name as its FunctionEventAvg, and torch's table of either.

Thread-safety: plain values, built from finished traces; nothing here is shared.

Times are in microseconds, as in torch.profiler. A range's self time is its duration minus the
durations of the ranges directly inside it on its thread. livemon records CPU ranges only: the
device, memory and FLOPs attributes exist (so torch's sort keys and row fields work) and are 0.
As in torch, the step ranges "ProfilerStep#<n>" are named "ProfilerStep*" here (their
``trace_name`` keeps the number), so key_averages() sums them in one row.
"""

import enum

# torch.autograd.DeviceType as torch 2.13 has it (an event's device_type). ORT is torch 1.13's name
# for 8, kept as an alias so 1.13 code that names it runs.
DeviceType = enum.IntEnum("DeviceType", [
    ("CPU", 0), ("CUDA", 1), ("MKLDNN", 2), ("OPENGL", 3), ("OPENCL", 4), ("IDEEP", 5), ("HIP", 6), ("FPGA", 7),
    ("MAIA", 8), ("XLA", 9), ("Vulkan", 10), ("Metal", 11), ("XPU", 12), ("MPS", 13), ("MTIA", 19), ("Meta", 14),
    ("HPU", 15), ("VE", 16), ("Lazy", 17), ("IPU", 18), ("PrivateUse1", 20), ("ORT", 8),
])

# The sort keys of torch.profiler's table: FunctionEventAvg's numeric attributes. torch 2.x reads
# "cuda", "xpu" and "privateuse1" in a key as "device" (so torch 1.13's cuda_* keys still work).
SORT_KEYS = ("cpu_time_total", "self_cpu_time_total", "cpu_time", "count", "device_time_total",
             "self_device_time_total", "device_time", "cpu_memory_usage", "self_cpu_memory_usage",
             "device_memory_usage", "self_device_memory_usage", "flops")
TIME_UNITS = ("s", "ms", "us")
STACK_METRICS = ("self_cpu_time_total", "self_cuda_time_total", "self_xpu_time_total",
                 "self_privateuse1_time_total")

_STEP_PREFIX = "ProfilerStep#"
_SPACING = 2
_NUMBER_WIDTH = 12


class UnknownSortKey(ValueError, AttributeError):
    """An unknown ``sort_by``: a ValueError, and an AttributeError as torch.profiler raises there, so
    code written for torch that catches its error still does."""


def _device_key(key):
    return key.replace("cuda", "device").replace("xpu", "device").replace("privateuse1", "device")


def _format_time(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _format_time_in(us, unit):
    if unit == "s":
        return f"{us / 1e6:.3f}s"
    if unit == "ms":
        return f"{us / 1e3:.3f}ms"
    if unit == "us":
        return f"{us:.3f}us"
    return _format_time(us)


def _format_share(us, total_us):
    return f"{us * 100.0 / total_us:.2f}%" if total_us else "NaN"


class Interval:
    """A range's start and end in microseconds on the steady clock (the trace's ``ts`` values)."""

    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        return self.end - self.start

    def __repr__(self):
        return f"Interval(start={self.start:.3f}, end={self.end:.3f})"


class _Times:
    """torch's FormattedTimesMixin and the attributes livemon always has at 0 (device, memory,
    FLOPs). Subclasses hold ``count``, ``cpu_time_total`` and ``self_cpu_time_total``."""

    device_time_total = self_device_time_total = 0.0
    cpu_memory_usage = self_cpu_memory_usage = device_memory_usage = self_device_memory_usage = 0
    flops = 0
    node_id = -1
    is_async = is_remote = is_legacy = False
    use_device = None
    device_type = DeviceType.CPU
    overload_name = ""
    scope = 0

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def device_time(self):
        return 0.0

    # torch 1.13's names of the device columns, and torch 2.x's other device names for them.
    cuda_time_total = self_cuda_time_total = xpu_time_total = self_xpu_time_total = device_time_total
    privateuse1_time_total = self_privateuse1_time_total = device_time_total
    cuda_time = xpu_time = privateuse1_time = device_time
    cuda_memory_usage = self_cuda_memory_usage = device_memory_usage

    cpu_time_str = property(lambda self: _format_time(self.cpu_time))
    cpu_time_total_str = property(lambda self: _format_time(self.cpu_time_total))
    self_cpu_time_total_str = property(lambda self: _format_time(self.self_cpu_time_total))
    device_time_str = device_time_total_str = self_device_time_total_str = property(lambda self: _format_time(0.0))


class FunctionEvent(_Times):
    """One recorded range, as torch.profiler's FunctionEvent: ``name`` (``key`` too),
    ``trace_name`` (the name in the trace), ``thread`` (the OS thread id), ``time_range``,
    ``cpu_time_total`` (its duration), ``self_cpu_time_total``, ``cpu_parent`` (the range directly
    around it on its thread, when recorded) and ``cpu_children``. ``is_user_annotation`` is False
    for names with ``::`` (PyTorch's operators as livemon.torch_bridge records them)."""

    count = 1

    def __init__(self, id, trace_name, thread, start_ns, end_ns, depth):
        self.id = id
        self.trace_name = trace_name
        self.name = "ProfilerStep*" if trace_name.startswith(_STEP_PREFIX) else trace_name
        self.thread = thread
        self.depth = depth
        self.time_range = Interval(start_ns / 1000.0, end_ns / 1000.0)
        self.cpu_time_total = (end_ns - start_ns) / 1000.0
        self.self_cpu_time_total = self.cpu_time_total
        self.cpu_parent = None
        self.cpu_children = []
        self.is_user_annotation = "::" not in trace_name
        self.input_shapes = []
        self.stack = []

    @property
    def key(self):
        return self.name

    @property
    def top_level(self):
        """Recorded outside any other range."""
        return self.depth == 0

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
                f"cpu_time={self.cpu_time_str} start_us={self.time_range.start:.3f} "
                f"end_us={self.time_range.end:.3f}>")


class KeyAverage(_Times):
    """One name's ranges, as torch.profiler's FunctionEventAvg: ``key``, ``count``,
    ``cpu_time_total``, ``self_cpu_time_total`` and ``cpu_time`` (the mean), in microseconds."""

    def __init__(self, key=None):
        self.key = key
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.top_level = False  # recorded at least once with no enclosing range
        self.is_user_annotation = False
        self.cpu_parent = None
        self.cpu_children = None
        self.input_shapes = ""
        self.stack = []

    def add(self, other):
        """Adds a FunctionEvent or KeyAverage of the same key (any key while this one has none)."""
        if self.key is None:
            self.key = other.key
            self.is_user_annotation = other.is_user_annotation
            self.cpu_parent = other.cpu_parent
            self.cpu_children = other.cpu_children
        elif other.key != self.key:
            raise ValueError(f"cannot add {other.key!r} to the average of {self.key!r}")
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.top_level = self.top_level or other.top_level
        return self

    __iadd__ = add

    def __repr__(self):
        return (f"<KeyAverage key={self.key!r} count={self.count} cpu_time_total={self.cpu_time_total:.3f}us "
                f"self_cpu_time_total={self.self_cpu_time_total:.3f}us>")


# torch.profiler's name for it.
FunctionEventAvg = KeyAverage


def _link(events):
    """Sets cpu_parent, cpu_children and self times: per thread, a range's parent is the latest
    range opened one level up that encloses it."""
    by_thread = {}
    for event in events:
        by_thread.setdefault(event.thread, []).append(event)
    for entries in by_thread.values():
        entries.sort(key=lambda e: (e.time_range.start, e.depth))
        open_at_depth = []  # open_at_depth[d]: the latest range opened at depth d
        for event in entries:
            depth = event.depth
            if 0 < depth <= len(open_at_depth):
                parent = open_at_depth[depth - 1]
                # A parent opened before recording started is not in the trace: no parent then.
                if parent is not None and parent.time_range.end >= event.time_range.end:
                    event.cpu_parent = parent
                    parent.cpu_children.append(event)
                    parent.self_cpu_time_total -= event.cpu_time_total
            del open_at_depth[depth:]
            open_at_depth.extend([None] * (depth - len(open_at_depth)))
            open_at_depth.append(event)
    for event in events:
        event.self_cpu_time_total = max(0.0, event.self_cpu_time_total)


class EventList(list):
    """A list of FunctionEvent or KeyAverage, as torch.profiler's EventList: ``table()``,
    ``key_averages()``, ``total_average()``, ``self_cpu_time_total`` and ``export_stacks()``."""

    @classmethod
    def from_ranges(cls, ranges):
        """FunctionEvents from Trace ranges ((name, thread_id, start_ns, end_ns, depth) tuples), in
        start order (an enclosing range before those inside it)."""
        events = [FunctionEvent(0, *r) for r in ranges]
        _link(events)
        events.sort(key=lambda e: (e.time_range.start, e.depth))
        for index, event in enumerate(events):
            event.id = index + 1
        return EventList(events)

    @property
    def self_cpu_time_total(self):
        return sum(event.self_cpu_time_total for event in self)

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0, group_by_overload_name=False):
        """The events summed per name, in the order the names first occur (a KeyAverages).
        livemon records no input shapes, stacks or overloads: every grouping is by name alone."""
        del group_by_input_shapes, group_by_stack_n, group_by_overload_name
        averages = {}
        for event in self:
            average = averages.get(event.key)
            if average is None:
                average = averages[event.key] = KeyAverage()
            average.add(event)
        return KeyAverages(averages.values())

    def total_average(self):
        """All events summed in one KeyAverage whose key is "Total" (torch's total_average)."""
        total = KeyAverage("Total")
        for event in self:
            total.count += event.count
            total.cpu_time_total += event.cpu_time_total
            total.self_cpu_time_total += event.self_cpu_time_total
        return total

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Writes the collapsed stacks of flame graph tools (``outer;inner <value>`` per line, one
        per event whose value is above 0). livemon's stacks are the ranges around each event on its
        thread (torch's are Python source lines). ``metric`` is one of STACK_METRICS; the device
        ones are 0 here, so they write no line."""
        if metric not in STACK_METRICS:
            raise ValueError(f"metric should be one of: {list(STACK_METRICS)}")
        metric = _device_key(metric)
        frame = str.maketrans(" ;\t\n", "____")
        with open(path, "w") as f:
            for event in self:
                value = int(getattr(event, metric))
                if value <= 0:
                    continue
                frames = []
                node = event
                while node is not None:
                    frames.append(node.name.translate(frame))
                    node = getattr(node, "cpu_parent", None)
                f.write(";".join(reversed(frames)) + f" {value}\n")

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        """torch.profiler's table: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg,
        # of Calls, and the self CPU time of all rows, laid out as torch 2.13 lays them out.

        ``sort_by``: one of SORT_KEYS, descending (None keeps the order; the device, memory and
        FLOPs keys are 0 here, so rows keep their order); an unknown key raises UnknownSortKey.
        ``row_limit`` rows at most (negative: all); ``top_level_events_only`` keeps the rows
        recorded outside any other range; ``time_unit`` ("s", "ms" or "us") writes every time in
        that unit (None: each in its own; anything else raises ValueError, where torch silently
        falls back). ``max_src_column_width`` and ``max_shapes_column_width`` are accepted for
        torch's sake: livemon records no source locations or input shapes. The table of no event
        is "", as torch's."""
        del max_src_column_width, max_shapes_column_width  # no such columns
        if sort_by is not None and _device_key(sort_by) not in SORT_KEYS:
            raise UnknownSortKey(f"unknown sort_by {sort_by!r}; expected one of: {', '.join(SORT_KEYS)} "
                                 "(or a cuda_/xpu_/privateuse1_ spelling of the device ones)")
        if time_unit is not None and time_unit not in TIME_UNITS:
            raise ValueError(f"unknown time_unit {time_unit!r}; expected one of: {', '.join(TIME_UNITS)}")
        if not self:
            return ""
        rows = list(self)
        if sort_by is not None:
            attribute = _device_key(sort_by)
            rows.sort(key=lambda e: getattr(e, attribute), reverse=True)
        self_total = sum(e.self_cpu_time_total for e in rows)

        name_width = max(len(e.key) for e in rows) + 4
        if max_name_column_width is not None:
            name_width = min(name_width, max_name_column_width)
        headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]
        widths = [name_width] + [_NUMBER_WIDTH] * (len(headers) - 1)
        separator = "".join("-" * w + " " * _SPACING for w in widths)
        line_length = sum(widths) + _SPACING * (len(widths) - 1)

        def line(cells):
            return "".join(f"{cell:>{w}}" + " " * _SPACING for cell, w in zip(cells, widths))

        lines = []
        if header is not None:
            lines += ["=" * line_length, header]
        if top_level_events_only:
            lines += ["=" * line_length, "This report only display top-level ops statistics"]
        lines += [separator, line(headers), separator]
        shown = 0
        for e in rows:
            if shown == row_limit:
                break
            if top_level_events_only and not e.top_level:
                continue
            shown += 1
            name = e.key
            if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
                name = name[:max_name_column_width - 3] + "..."
            lines.append(line([name, _format_share(e.self_cpu_time_total, self_total),
                               _format_time_in(e.self_cpu_time_total, time_unit),
                               _format_share(e.cpu_time_total, self_total),
                               _format_time_in(e.cpu_time_total, time_unit), _format_time_in(e.cpu_time, time_unit),
                               str(e.count)]))
        lines += [separator, f"Self CPU time total: {_format_time_in(self_total, time_unit)}"]
        return "".join(text + "\n" for text in lines)

    def __str__(self):
        return self.table()


class KeyAverages(EventList):
    """prof.key_averages(): a KeyAverage per range name, in the order the names first occur."""

    @classmethod
    def from_ranges(cls, ranges):
        """From a Trace's ranges: (name, thread_id, start_ns, end_ns, depth) tuples."""
        return EventList.from_ranges(ranges).key_averages()
