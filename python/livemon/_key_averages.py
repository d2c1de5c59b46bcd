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

    def __init__(self, start, end, elapsed=None):
        self.start = start
        self.end = end
        # A range's own duration, exact: end - start of two microsecond times counted from boot
        # loses the last bits (about 1e-5 us after a day of uptime) and would disagree with
        # cpu_time_total.
        self._elapsed = elapsed

    def elapsed_us(self):
        return self._elapsed if self._elapsed is not None else self.end - self.start

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
    input_shapes = stack = ()  # not recorded

    def __init__(self, id, trace_name, thread, start_ns, end_ns, depth):
        self.id = id
        self.trace_name = trace_name
        self.name = _key(trace_name)
        self.thread = thread
        self.depth = depth
        self._start_us = start_ns / 1000.0
        self._end_us = end_ns / 1000.0
        self.cpu_time_total = (end_ns - start_ns) / 1000.0
        self.self_cpu_time_total = self.cpu_time_total
        self.cpu_parent = None
        self.cpu_children = []
        self.is_user_annotation = _is_user_annotation(trace_name)

    @property
    def key(self):
        return self.name

    @property
    def time_range(self):
        return Interval(self._start_us, self._end_us, self.cpu_time_total)

    @property
    def top_level(self):
        """Recorded outside any other range."""
        return self.depth == 0

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
                f"cpu_time={self.cpu_time_str} start_us={self._start_us:.3f} end_us={self._end_us:.3f}>")


class KeyAverage(_Times):
    """One name's ranges, as torch.profiler's FunctionEventAvg: ``key``, ``count``,
    ``cpu_time_total``, ``self_cpu_time_total`` and ``cpu_time`` (the mean), in microseconds."""

    cpu_parent = cpu_children = None
    input_shapes = ""  # as torch's when not grouped by shape
    stack = ()

    def __init__(self, key=None):
        self.key = key
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.top_level = False  # recorded at least once with no enclosing range
        self.is_user_annotation = key is not None and _is_user_annotation(key)

    def add(self, other):
        """Adds a FunctionEvent or KeyAverage of the same key (any key while this one has none)."""
        if self.key is None:
            self.key = other.key
            self.is_user_annotation = other.is_user_annotation
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


def _key(trace_name):
    return "ProfilerStep*" if trace_name.startswith(_STEP_PREFIX) else trace_name


def _is_user_annotation(name):
    return "::" not in name


def _parents(ranges):
    """Per range (a Trace range tuple), the index of the range directly around it on its thread,
    or -1: the latest range opened one level up that encloses it. A parent opened before recording
    started is not in the trace: no parent then."""
    parents = [-1] * len(ranges)
    by_thread = {}
    for index, (_, thread, start, _, depth) in enumerate(ranges):
        by_thread.setdefault(thread, []).append((start, depth, index))
    for entries in by_thread.values():
        entries.sort()
        open_at_depth = []  # open_at_depth[d]: the latest range opened at depth d, or -1
        for _, depth, index in entries:
            if 0 < depth <= len(open_at_depth):
                parent = open_at_depth[depth - 1]
                if parent >= 0 and ranges[parent][3] >= ranges[index][3]:
                    parents[index] = parent
            del open_at_depth[depth:]
            open_at_depth.extend([-1] * (depth - len(open_at_depth)))
            open_at_depth.append(index)
    return parents


def _self_times_us(ranges, parents):
    """Each range's duration minus its direct children's."""
    self_ns = [end - start for (_, _, start, end, _) in ranges]
    for index, parent in enumerate(parents):
        if parent >= 0:
            self_ns[parent] -= ranges[index][3] - ranges[index][2]
    return [max(0, ns) / 1000.0 for ns in self_ns]


def _start_order(ranges):
    """Indexes into ``ranges`` by start, an enclosing range before those inside it."""
    return sorted(range(len(ranges)), key=lambda i: (ranges[i][2], ranges[i][4]))


class EventList(list):
    """A list of FunctionEvent or KeyAverage, as torch.profiler's EventList: ``table()``,
    ``key_averages()``, ``total_average()``, ``self_cpu_time_total`` and ``export_stacks()``."""

    @classmethod
    def from_ranges(cls, ranges):
        """FunctionEvents from Trace ranges ((name, thread_id, start_ns, end_ns, depth) tuples), in
        start order (an enclosing range before those inside it)."""
        ranges = list(ranges)
        parents = _parents(ranges)
        self_us = _self_times_us(ranges, parents)
        events = [FunctionEvent(0, *r) for r in ranges]
        for event, parent, self_time in zip(events, parents, self_us):
            event.self_cpu_time_total = self_time
            if parent >= 0:
                event.cpu_parent = events[parent]
        ordered = EventList(events[i] for i in _start_order(ranges))
        for id, event in enumerate(ordered, 1):
            event.id = id
            if event.cpu_parent is not None:
                event.cpu_parent.cpu_children.append(event)
        return ordered

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
        """From a Trace's ranges: (name, thread_id, start_ns, end_ns, depth) tuples. The same as
        EventList.from_ranges(ranges).key_averages(), without an object per range."""
        ranges = list(ranges)
        self_us = _self_times_us(ranges, _parents(ranges))
        by_name = {}  # a range's name -> its row (the step ranges share one)
        rows = {}  # key -> row, in the order the keys first occur
        for index in _start_order(ranges):
            name, _, start, end, depth = ranges[index]
            row = by_name.get(name)
            if row is None:
                key = _key(name)
                row = by_name[name] = rows.get(key) or rows.setdefault(key, KeyAverage(key))
            row.count += 1
            row.cpu_time_total += (end - start) / 1000.0
            row.self_cpu_time_total += self_us[index]
            if depth == 0:
                row.top_level = True
        return cls(rows.values())
