"""prof.key_averages() for livemon.profiler: a trace's ranges summed per name, and torch.profiler's
table of them.

Thread-safety: plain values, built once from a finished trace; nothing here is shared.

Times are in microseconds, as in torch.profiler. A range's self time is its duration minus the
durations of the ranges directly inside it on its thread. livemon records no memory, FLOPs or
CUDA time: those attributes exist (so torch's sort keys work) and are always 0.
"""

# The sort keys torch.profiler's table takes (FunctionEventAvg's numeric attributes).
CPU_SORT_KEYS = ("cpu_time_total", "self_cpu_time_total", "cpu_time", "count")
ZERO_SORT_KEYS = ("cuda_time_total", "self_cuda_time_total", "cuda_time", "cpu_memory_usage",
                  "self_cpu_memory_usage", "cuda_memory_usage", "self_cuda_memory_usage", "flops")
SORT_KEYS = CPU_SORT_KEYS + ZERO_SORT_KEYS

_SPACING = 2
_NUMBER_WIDTH = 12



class UnknownSortKey(ValueError, AttributeError):
    """An unknown ``sort_by``: a ValueError, and an AttributeError as torch.profiler raises there, so
    code written for torch that catches its error still does."""

class KeyAverage:
    """One name's ranges: ``key`` (the name), ``count``, ``cpu_time_total``, ``self_cpu_time_total``
    and ``cpu_time`` (the mean), in microseconds, as torch.profiler's FunctionEventAvg."""

    cuda_time_total = self_cuda_time_total = cuda_time = 0.0
    cpu_memory_usage = self_cpu_memory_usage = cuda_memory_usage = self_cuda_memory_usage = 0
    flops = 0

    def __init__(self, key):
        self.key = key
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.top_level = False  # recorded at least once with no enclosing range

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f"<KeyAverage key={self.key!r} count={self.count} cpu_time_total={self.cpu_time_total:.3f}us "
                f"self_cpu_time_total={self.self_cpu_time_total:.3f}us>")


def _self_times_ns(ranges):
    """Each range's duration minus its direct children's, by index into ``ranges``."""
    self_ns = [end - start for (_, _, start, end, _) in ranges]
    by_thread = {}
    for index, (_, thread, start, _, depth) in enumerate(ranges):
        by_thread.setdefault(thread, []).append((start, depth, index))
    for entries in by_thread.values():
        entries.sort()
        open_at_depth = []  # open_at_depth[d]: the index of the latest range opened at depth d
        for start, depth, index in entries:
            if 0 < depth <= len(open_at_depth):
                parent = open_at_depth[depth - 1]
                # A parent opened before recording started is not in the trace: nothing to subtract from.
                if parent is not None and ranges[parent][3] >= ranges[index][3]:
                    self_ns[parent] -= ranges[index][3] - start
            del open_at_depth[depth:]
            open_at_depth.extend([None] * (depth - len(open_at_depth)))
            open_at_depth.append(index)
    return [max(0, ns) for ns in self_ns]


def _format_time(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _format_share(us, total_us):
    return f"{us * 100.0 / total_us:.2f}%" if total_us else "NaN"


class KeyAverages(list):
    """A list of KeyAverage, one per range name, in the order the names first occur, with
    torch.profiler's ``table()``."""

    @classmethod
    def from_ranges(cls, ranges):
        """From a Trace's ranges: (name, thread_id, start_ns, end_ns, depth) tuples."""
        ranges = list(ranges)
        self_ns = _self_times_ns(ranges)
        averages = {}
        for index in sorted(range(len(ranges)), key=lambda i: ranges[i][2]):
            name, _, start, end, depth = ranges[index]
            average = averages.get(name)
            if average is None:
                average = averages[name] = KeyAverage(name)
            average.count += 1
            average.cpu_time_total += (end - start) / 1000.0
            average.self_cpu_time_total += self_ns[index] / 1000.0
            average.top_level = average.top_level or depth == 0
        return cls(averages.values())

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False):
        """torch.profiler's table: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg,
        # of Calls, and the self CPU time of all rows. ``sort_by`` is one of SORT_KEYS (descending;
        None keeps the order of first occurrence); ``row_limit`` rows at most (negative: all);
        ``top_level_events_only`` keeps the names recorded outside any other range.
        ``max_src_column_width`` and ``max_shapes_column_width`` are accepted for torch's sake:
        livemon records no source locations or input shapes."""
        del max_src_column_width, max_shapes_column_width  # no such columns
        if sort_by is not None and sort_by not in SORT_KEYS:
            raise UnknownSortKey(f"unknown sort_by {sort_by!r}; expected one of: {', '.join(SORT_KEYS)}")
        rows = sorted(self, key=lambda a: getattr(a, sort_by), reverse=True) if sort_by else list(self)
        if top_level_events_only:
            rows = [a for a in rows if a.top_level]
        if row_limit is not None and row_limit >= 0:
            rows = rows[:row_limit]
        self_total = sum(a.self_cpu_time_total for a in self)

        name_width = max([len(a.key) for a in rows] + [len("Name")]) + 4
        if max_name_column_width is not None:
            name_width = min(name_width, max(max_name_column_width, 4))
        headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]
        widths = [name_width] + [_NUMBER_WIDTH] * (len(headers) - 1)
        separator = "".join("-" * w + " " * _SPACING for w in widths)

        def line(cells):
            return "".join(cell.rjust(w) + " " * _SPACING for cell, w in zip(cells, widths))

        lines = []
        if header is not None:
            lines += ["=" * len(separator), header]
        if top_level_events_only:
            lines += ["=" * len(separator), "This report only displays top-level ranges"]
        lines += [separator, line(headers), separator]
        for a in rows:
            name = a.key if len(a.key) <= name_width - 4 else a.key[:max(name_width - 7, 0)] + "..."
            lines.append(line([name, _format_share(a.self_cpu_time_total, self_total),
                               _format_time(a.self_cpu_time_total), _format_share(a.cpu_time_total, self_total),
                               _format_time(a.cpu_time_total), _format_time(a.cpu_time), str(a.count)]))
        lines += [separator, f"Self CPU time total: {_format_time(self_total)}", ""]
        return "\n".join(lines)

    def __str__(self):
        return self.table()
