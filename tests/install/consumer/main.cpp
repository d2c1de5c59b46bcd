// Uses the installed headers and library; exits non-zero if a Stat window does not arrive.
#include <livemon/event_handler.h>
#include <livemon/stat.h>

#include <cstdio>

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
  return events == 1 ? 0 : 1;
}
