// Uses the installed headers and libraries; exits non-zero if something does not work.
#include <livemon/event_handler.h>
#include <livemon/stat.h>

#include <cstdio>

#if LIVEMON_CONSUMER_TRANSPORT
#include <livemon/transport/wire_format.h>
#endif

int main() {
  using namespace std::chrono_literals;
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
  std::printf("consumer: %d Stat event(s) from the installed livemon::core\n", events);
  if (events != 1) return 1;
#if LIVEMON_CONSUMER_TRANSPORT
  livemon::transport::SourceInfo source;
  source.run = "consumer";
  source.instanceId = 1;
  const std::string payload = livemon::transport::encodeEventsPayload(
      source, 0, "consumer", {livemon::Event{"consumer", std::chrono::system_clock::now(), {{"x", 1.0}}}});
  livemon::transport::WireMessage message;
  if (livemon::transport::decodeMessage("consumer", payload, {}, message) != livemon::transport::DecodeStatus::Ok) {
    return 1;
  }
  std::printf("consumer: a wire payload round trip through the installed livemon::transport\n");
#endif
  return 0;
}
