// A training job that only publishes, built against the installed livemon::transport: a Stat's
// window goes out through a Publisher and comes back through a Subscriber in the same process.
// Exits non-zero if it does not.
#include <livemon/event.h>
#include <livemon/event_handler.h>
#include <livemon/transport/publisher.h>
#include <livemon/transport/subscriber.h>

#include <chrono>
#include <cstdio>

int main() {
  using namespace std::chrono_literals;
  using namespace livemon::transport;
  PublisherOptions options;
  options.bind = {"inproc://livemon-consumer"};
  options.connect = {};
  options.statName = "";
  Publisher publisher(options);
  SubscriberOptions subscriberOptions;
  subscriberOptions.connect = {"inproc://livemon-consumer"};
  Subscriber subscriber(subscriberOptions);

  int received = 0;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  // A subscription takes a moment to reach the publisher: log until one event comes back.
  while (received == 0 && std::chrono::steady_clock::now() < deadline) {
    livemon::logEvent(livemon::Event{"consumer.step", std::chrono::system_clock::now(), {{"loss", 0.5}}});
    subscriber.poll(50ms, [&](ReceivedEvent& event) {
      if (event.event.name == "consumer.step") ++received;
    });
  }
  std::printf("publish-only consumer: %s through the installed livemon::transport\n",
              received > 0 ? "an event went out and came back" : "nothing came back");
  return received > 0 ? 0 : 1;
}
