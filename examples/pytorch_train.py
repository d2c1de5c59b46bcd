#!/usr/bin/python3
"""A real PyTorch training job on the CPU, watched live with livemon.

A small CNN learns to tell ten classes of synthetic 16x16 images apart (noisy, shifted copies of
ten random patterns), for a few minutes. livemon instruments it: the loss, samples/s, step time
(mean, p50, p90, p99), the gradient norm and the learning rate as Stats, an event per epoch with
the validation loss and accuracy, and a WaitCounter around data loading. A livemon Publisher
sends it all to the dashboard:

    /usr/bin/python3 examples/pytorch_train.py                 # publishes on tcp://127.0.0.1:5555
    build/app/livemon/livemon                                  # in another terminal: watch it

With --api torch-monitor the same job is instrumented with torch.monitor instead, and
livemon.torch_bridge forwards those events to the publisher, unchanged: what existing
torch.monitor code looks like on the dashboard. (torch.monitor has no quantiles, so that mode
shows the step time's mean and max.)

With --ops, PyTorch's own operators are timed too, with the training code unchanged: one call
of livemon.torch_bridge.install(ops=True) before training, and every aten:: operator, autograd
node and Optimizer.step# label shows up live in the dashboard's Ranges view as range/<name>
(--ops-sample N times one call in N, to bound the cost on op-heavy models).

Needs Debian's python3-torch, and the livemon module on PYTHONPATH (build/python in a build
tree, or `cmake --install`).
"""

import argparse
import contextlib
import datetime
import math
import sys
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, IterableDataset

IMAGE_SIZE = 16
CLASSES = 10


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--endpoint", default="tcp://127.0.0.1:5555",
                        help="where the publisher binds (default %(default)s; port * picks a free one)")
    parser.add_argument("--run", default="pytorch-cnn", help="run name shown by the dashboard (default %(default)s)")
    parser.add_argument("--api", choices=["livemon", "torch-monitor"], default="livemon",
                        help="instrument with livemon (default) or with torch.monitor forwarded by "
                             "livemon.torch_bridge")
    parser.add_argument("--duration", type=float, default=180.0,
                        help="seconds to train (default %(default)s); 0 = until --epochs are done")
    parser.add_argument("--epochs", type=int, default=0, help="epochs to train (default: until --duration)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--steps-per-epoch", type=int, default=500)
    parser.add_argument("--lr", type=float, default=0.05, help="peak learning rate (default %(default)s)")
    parser.add_argument("--window", type=float, default=1.0, help="Stat window in seconds (default %(default)s)")
    parser.add_argument("--tensorboard", metavar="DIR", help="also write TensorBoard files into DIR")
    parser.add_argument("--trace-dir", metavar="DIR",
                        help="profile steps on a schedule (wait 10, warmup 2, active 5, 3 cycles) and write "
                             "Chrome traces of the data/forward/backward/optimizer ranges into DIR")
    parser.add_argument("--ops", action="store_true",
                        help="also time PyTorch's own operators live (livemon.torch_bridge.install(ops=True))")
    parser.add_argument("--ops-sample", type=int, default=1, metavar="N",
                        help="with --ops, time one operator call in N (default %(default)s: every call)")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (default: torch's choice)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args(argv)
    if args.duration <= 0 and args.epochs <= 0:
        parser.error("give --duration or --epochs")
    if args.batch_size < 1 or args.steps_per_epoch < 1:
        parser.error("--batch-size and --steps-per-epoch must be positive")
    if args.window <= 0:
        parser.error("--window must be positive")
    if args.ops_sample < 1:
        parser.error("--ops-sample must be at least 1")
    return args


class SyntheticImages(IterableDataset):
    """Ten classes of 16x16 images: each class a random smooth pattern, seen shifted by up to 4
    pixels, scaled, and under heavy noise. Every batch is drawn fresh, so the model cannot learn
    the data by heart and the loss falls for the whole run."""

    def __init__(self, batch_size, batches, seed):
        super().__init__()
        self.batch_size = batch_size
        self.batches = batches
        self.generator = torch.Generator().manual_seed(seed)
        patterns = torch.randn(CLASSES, 1, IMAGE_SIZE + 4, IMAGE_SIZE + 4, generator=self.generator)
        patterns = nn.functional.avg_pool2d(patterns, 3, stride=1, padding=1)
        # Every class in each of its 25 positions: [class, shift, 1, 16, 16].
        self.crops = torch.stack([torch.stack([patterns[c, :, dy:dy + IMAGE_SIZE, dx:dx + IMAGE_SIZE]
                                               for dy in range(5) for dx in range(5)]) for c in range(CLASSES)])

    def batch(self, count):
        labels = torch.randint(0, CLASSES, (count,), generator=self.generator)
        shifts = torch.randint(0, 25, (count,), generator=self.generator)
        scale = 0.5 + torch.rand(count, 1, 1, 1, generator=self.generator)
        noise = torch.randn(count, 1, IMAGE_SIZE, IMAGE_SIZE, generator=self.generator)
        return self.crops[labels, shifts] * scale + 1.5 * noise, labels

    def __len__(self):
        return self.batches

    def __iter__(self):
        for _ in range(self.batches):
            yield self.batch(self.batch_size)


def make_model():
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 4 * 4, 64), nn.ReLU(), nn.Linear(64, CLASSES))


class NoMonitor:
    """The same loop with no instrumentation at all (the benchmark's baseline)."""

    def __init__(self, args):
        pass

    def set_step(self, step):
        pass

    def step(self, loss, samples, step_ms, grad_norm, lr):
        pass

    def loading(self):
        return _NullContext()

    def epoch(self, data):
        pass

    def close(self):
        pass


class _NullContext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class LivemonMonitor:
    """livemon's Stats, a WaitCounter and events, published to the dashboard."""

    def __init__(self, args, publish=True):
        import livemon
        self.livemon = livemon
        window = datetime.timedelta(seconds=args.window)
        A = livemon.Aggregation
        self.publisher = livemon.Publisher(args.endpoint, run=args.run, system_stats=True) if publish else None
        self.tensorboard = None
        if args.tensorboard:
            self.tensorboard = livemon.TensorboardEventHandler(args.tensorboard)
            self.tensorboard_handle = livemon.register_event_handler(self.tensorboard)
        self.loss = livemon.Stat("train.loss", [A.MEAN, A.MIN, A.MAX], window)
        self.samples_per_s = livemon.Stat("train.samples_per_s", [A.MEAN], window)
        self.step_ms = livemon.Stat("train.step_time_ms", [A.MEAN, A.P50, A.P90, A.P99], window)
        self.grad_norm = livemon.Stat("train.grad_norm", [A.MEAN, A.MAX], window)
        self.lr = livemon.Stat("train.lr", [A.VALUE], window)
        self.data_loading = livemon.WaitCounter("train.data_loading")

    def set_step(self, step):
        # Every event and Stat window from now on carries this step: the dashboard plots by it.
        self.livemon.set_step(step)

    def step(self, loss, samples, step_ms, grad_norm, lr):
        self.loss.add(loss)
        self.samples_per_s.add(samples * 1000.0 / step_ms)
        self.step_ms.add(step_ms)
        self.grad_norm.add(grad_norm)
        self.lr.add(lr)

    def loading(self):
        return self.data_loading.guard()

    def epoch(self, data):
        self.livemon.log_event(self.livemon.Event("epoch", datetime.datetime.now(), data))

    def close(self):
        for stat in (self.loss, self.samples_per_s, self.step_ms, self.grad_norm, self.lr):
            stat.flush()
        if self.tensorboard is not None:
            self.livemon.unregister_event_handler(self.tensorboard_handle)
            self.tensorboard.close()
        if self.publisher is not None:
            self.publisher.close()


class TorchMonitorMonitor:
    """torch.monitor's Stats and events, forwarded to livemon's publisher by the bridge."""

    def __init__(self, args):
        import livemon
        import livemon.torch_bridge
        import torch.monitor as monitor
        self.monitor = monitor
        self.bridge = livemon.torch_bridge
        self.bridge_step = livemon.set_step
        self.publisher = livemon.Publisher(args.endpoint, run=args.run, system_stats=True)
        self.tensorboard = None
        if args.tensorboard:
            # livemon's handler also takes torch.monitor's events.
            self.tensorboard = livemon.TensorboardEventHandler(args.tensorboard)
            self.tensorboard_handle = monitor.register_event_handler(self.tensorboard)
        self.bridge.install()
        window = datetime.timedelta(seconds=args.window)
        A = monitor.Aggregation
        self.stats = {
            "loss": monitor.Stat("train.loss", [A.MEAN, A.MIN, A.MAX], window),
            "samples_per_s": monitor.Stat("train.samples_per_s", [A.MEAN], window),
            "step_ms": monitor.Stat("train.step_time_ms", [A.MEAN, A.MAX], window),
            "grad_norm": monitor.Stat("train.grad_norm", [A.MEAN, A.MAX], window),
            # torch.monitor's VALUE reports nothing; MAX of one learning rate per step is close.
            "lr": monitor.Stat("train.lr", [A.MAX], window),
        }

    def set_step(self, step):
        # torch.monitor has no step; the bridge's events pass through livemon, which stamps it.
        self.bridge_step(step)

    def step(self, loss, samples, step_ms, grad_norm, lr):
        s = self.stats
        s["loss"].add(loss)
        s["samples_per_s"].add(samples * 1000.0 / step_ms)
        s["step_ms"].add(step_ms)
        s["grad_norm"].add(grad_norm)
        s["lr"].add(lr)

    def loading(self):
        return _NullContext()  # torch.monitor 1.13 has no WaitCounter

    def epoch(self, data):
        # torch.monitor turns bools into floats; this event has none.
        self.monitor.log_event(self.monitor.Event("epoch", datetime.datetime.now(), data))

    def close(self):
        self.stats.clear()  # torch.monitor logs a Stat's open window when it is destroyed
        self.bridge.uninstall()
        if self.tensorboard is not None:
            self.monitor.unregister_event_handler(self.tensorboard_handle)
            self.tensorboard.close()
        self.publisher.close()


def evaluate(model, data):
    model.eval()
    with torch.no_grad():
        images, labels = data
        logits = model(images)
        loss = nn.functional.cross_entropy(logits, labels).item()
        accuracy = (logits.argmax(dim=1) == labels).float().mean().item()
    model.train()
    return loss, accuracy


def train(args, monitor, log=print):
    """Trains until --duration or --epochs; returns every step's time in milliseconds."""
    from livemon import profiler
    torch.manual_seed(args.seed)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    data = SyntheticImages(args.batch_size, args.steps_per_epoch, args.seed)
    val_data = data.batch(2000)
    loader = DataLoader(data, batch_size=None)  # the dataset hands out whole batches
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    steps_per_epoch = len(loader)
    deadline = time.monotonic() + args.duration if args.duration > 0 else math.inf
    # Cosine decay over the planned run: over the epochs given, or over the time given.
    planned = args.epochs * steps_per_epoch if args.epochs > 0 else None
    started = time.monotonic()
    step_times = []
    step = 0
    epoch = 0
    done = False
    # The ranges below are timed live as range/<name> Stats (livemon mode) and, with --trace-dir,
    # written as Chrome traces for some steps.
    if args.api == "livemon":
        profiler.set_range_stats_enabled(True, datetime.timedelta(seconds=args.window))
    tracing = (profiler.profile(schedule=profiler.schedule(wait=10, warmup=2, active=5, repeat=3),
                                on_trace_ready=profiler.chrome_trace_handler(args.trace_dir))
               if args.trace_dir else contextlib.nullcontext())
    with tracing as prof:
        while not done:
            done, step, epoch, lr = train_epoch(args, monitor, log, prof, loader, model, optimizer, val_data,
                                                step, epoch, planned, started, deadline, step_times)
    if args.api == "livemon":
        profiler.set_range_stats_enabled(False)
        profiler.flush_range_stats()
    return step_times


def train_epoch(args, monitor, log, prof, loader, model, optimizer, val_data, step, epoch, planned, started,
                deadline, step_times):
    """One epoch; returns (done, step, epoch, lr)."""
    from livemon import profiler
    done = False
    steps_per_epoch = len(loader)
    lr = args.lr
    epoch += 1
    epoch_start = time.monotonic()
    epoch_loss = 0.0
    batches = iter(loader)
    for _ in range(steps_per_epoch):
        t0 = time.perf_counter_ns()
        monitor.set_step(step)
        # The whole step as a range too: the Ranges view gives every other range's share of it.
        with profiler.record_function("train_step"):
            with profiler.record_function("data"), monitor.loading():
                images, labels = next(batches)
            progress = step / planned if planned else (time.monotonic() - started) / args.duration
            lr = args.lr * 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))
            for group in optimizer.param_groups:
                group["lr"] = lr
            optimizer.zero_grad(set_to_none=True)
            with profiler.record_function("forward"):
                loss = nn.functional.cross_entropy(model(images), labels)
            with profiler.record_function("backward"):
                loss.backward()
            with profiler.record_function("optimizer"):
                grad_norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=10.0).item()
                optimizer.step()
        loss_value = loss.item()
        step_ms = (time.perf_counter_ns() - t0) / 1e6
        step_times.append(step_ms)
        monitor.step(loss_value, len(labels), step_ms, grad_norm, lr)
        epoch_loss += loss_value
        step += 1
        if prof is not None:
            prof.step()
        if time.monotonic() >= deadline:
            done = True
            break
    val_loss, val_accuracy = evaluate(model, val_data)
    steps_done = step - (epoch - 1) * steps_per_epoch
    monitor.epoch({"epoch": epoch, "step": step, "train_loss": epoch_loss / max(1, steps_done),
                   "val_loss": val_loss, "val_accuracy": val_accuracy,
                   "seconds": time.monotonic() - epoch_start})
    if log:
        log(f"epoch {epoch:3d}  step {step:6d}  train loss {epoch_loss / max(1, steps_done):.3f}  "
            f"val loss {val_loss:.3f}  val accuracy {val_accuracy:.3f}  lr {lr:.4f}")
    if args.epochs > 0 and epoch >= args.epochs:
        done = True
    return done, step, epoch, lr


def main(argv=None):
    args = parse_args(argv)
    if args.api == "livemon":
        monitor = LivemonMonitor(args)
    else:
        monitor = TorchMonitorMonitor(args)
    log = None if args.quiet else (lambda line: print(line, flush=True))
    if log:
        where = ", ".join(monitor.publisher.endpoints)
        log(f"{args.run}: training on {torch.get_num_threads()} CPU thread(s), publishing on {where} "
            f"({'torch.monitor through livemon.torch_bridge' if args.api == 'torch-monitor' else 'livemon'})")
    if args.ops:
        # The zero-code path: nothing in the training loop changes.
        import livemon.torch_bridge
        livemon.torch_bridge.install(ops=True, ops_sample=args.ops_sample)
    try:
        train(args, monitor, log)
    except KeyboardInterrupt:
        pass
    finally:
        if args.ops:
            livemon.torch_bridge.uninstall()
        monitor.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
