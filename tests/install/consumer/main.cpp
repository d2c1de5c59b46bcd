// A tool built against the installed livemon::recording, exporters and analysis (and, through
// them, core, wire and transport): a Stat window, a wire payload round trip, a recording written
// and read back, the Prometheus text of an event and an alert rule applied. Exits non-zero if
// something does not work.
#include <livemon/alert_rules.h>
#include <livemon/event_handler.h>
#include <livemon/stat.h>
#include <livemon/transport/metrics_exporter.h>
#include <livemon/transport/recorded_event.h>
#include <livemon/transport/recording.h>
#include <livemon/transport/wire_format.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace {

bool check(bool ok, const char* what) {
  std::printf("consumer: %s: %s\n", what, ok ? "ok" : "FAILED");
  return ok;
}

}  // namespace

int main() {
  using namespace std::chrono_literals;
  using namespace livemon::transport;
  bool ok = true;

  int events = 0;
  auto handle = livemon::registerEventHandler([&](const livemon::Event& e) {
    if (e.name == livemon::kStatEventName && e.data.count("consumer.sum")) ++events;
  });
  {
    livemon::Stat stat("consumer", {livemon::Aggregation::Sum}, 1h);
    stat.add(2);
    stat.add(3);
  }
  livemon::unregisterEventHandler(handle);
  ok = check(events == 1, "a Stat window from livemon::core") && ok;

  SourceInfo source;
  source.run = "consumer";
  source.instanceId = 1;
  const livemon::Event event{"consumer", std::chrono::system_clock::now(), {{"x", 1.0}}};
  const std::string payload = encodeEventsPayload(source, 0, "consumer", {event});
  WireMessage message;
  ok = check(decodeMessage("consumer", payload, {}, message) == DecodeStatus::Ok, "a wire payload round trip (wire)") &&
       ok;

  const std::filesystem::path path = std::filesystem::temp_directory_path() / "livemon_consumer.mcap";
  {
    RecordingWriter writer(path.string());
    ReceivedEvent received;
    received.event = event;
    received.source = std::make_shared<const SourceInfo>(source);
    received.receivedAt = std::chrono::system_clock::now();
    recordEvent(writer, received);
    writer.close();
  }
  std::size_t read = 0;
  {
    RecordingReader reader(path.string());
    RecordedEventDecoder decoder(path.string());
    reader.forEachMessage([&](const RecordedMessage& recorded) {
      ReceivedEvent back;
      if (decoder.decode(recorded, back) && back.event.data.at("x") == livemon::DataValue(1.0)) ++read;
      return true;
    });
  }
  std::filesystem::remove(path);
  ok = check(read == 1, "a recording written and read back (recording)") && ok;

#if LIVEMON_CONSUMER_PROMETHEUS
  MetricsExporterOptions metricsOptions;
  metricsOptions.serve = false;
  MetricsExporter exporter(metricsOptions);
  exporter.observe(source, livemon::Event{std::string(livemon::kStatEventName), std::chrono::system_clock::now(),
                                          {{"loss.mean", 2.5}}});
  ok = check(exporter.text().find("livemon_stat{") != std::string::npos, "a Prometheus exposition (exporters)") && ok;
#endif

  livemon::AlertEngine engine({livemon::parseAlertRuleOrThrow("nan")});
  std::vector<livemon::Alert> alerts;
  livemon::AlertSource alertSource;
  alertSource.run = "consumer";
  engine.observeEvent(alertSource, livemon::Event{"consumer", std::chrono::system_clock::now(), {{"x", std::nan("")}}},
                      alerts);
  ok = check(alerts.size() == 1, "a NaN alert (analysis)") && ok;
  return ok ? 0 : 1;
}
