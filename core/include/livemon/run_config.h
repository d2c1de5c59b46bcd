#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <livemon/event.h>

// A run's configuration: the hyperparameters and settings that tell one run of an experiment from
// another (learning rate, batch size, optimizer, seed), as W&B's `config` and TensorBoard's hparams
// hold them. Runs are compared by it (the dashboard's Runs panel, `livemonctl runs`).
namespace livemon {

// Thread-safety: a plain value type.
// Keys are flat and dotted ("optimizer.lr"); Python's set_run_config flattens nested dicts so.
using RunConfig = std::map<std::string, DataValue>;

// The event that carries a run's config: one data field per key, logged by setRunConfig.
// Publishers keep the newest one of each source through history trimming, and send it again
// to a reader that joins late; recordings hold it like any event.
inline constexpr std::string_view kRunConfigEventName = "livemon.run_config";

// What a config may hold: the wire's limits for one event (docs/wire-format.md, "Limits").
inline constexpr std::size_t kMaxRunConfigKeys = 1024;
inline constexpr std::size_t kMaxRunConfigKeyBytes = 1024;
inline constexpr std::size_t kMaxRunConfigStringBytes = 65536;

// Thread-safe: may be called from any thread, also from inside an event handler.
//
// Sets the process's run config (replacing the one set before) and logs it as a
// kRunConfigEventName event at once, with the current step. A Publisher created later sends the
// current config when it starts, so the order of the two does not matter. Throws
// std::invalid_argument, naming the key, for an empty key, a key "step" (it would read as the
// event's step), a key or string longer than the limits above or more than kMaxRunConfigKeys
// keys; nothing is set then.
void setRunConfig(RunConfig config);

// The event setRunConfig logs for `config`, stamped now with the current step, neither logged nor
// set as the process's config: for a publisher that speaks for another source
// (transport::Publisher::publishRunConfig). Throws as setRunConfig does.
Event makeRunConfigEvent(RunConfig config);

// The config set last, or none when setRunConfig was never called (or since clearRunConfig).
std::optional<RunConfig> currentRunConfig();

// The event setRunConfig logged for the current config (with the time it was set), or none.
std::optional<Event> currentRunConfigEvent();

// Back to no config (tests, and a process that starts a second run).
void clearRunConfig();

// The config an event of kRunConfigEventName carries: its data, "step" left out. None for an event
// of another name.
std::optional<RunConfig> runConfigOf(const Event& event);

}  // namespace livemon
