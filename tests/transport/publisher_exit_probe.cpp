// A training job as users write it: a Publisher local to main, ranges timed live, and no
// flushRangeStats() before main returns. publisher_exit_test checks from outside that the range
// Stats' last window still reaches a subscriber.
//
//   publisher_exit_probe ENDPOINT   connects to ENDPOINT, prints "ready", returns on SIGUSR1
#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <cstdio>

#include <livemon/record_function.h>
#include <livemon/transport/publisher.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: publisher_exit_probe ENDPOINT\n");
    return 2;
  }
  // Blocked before any thread starts, so every thread inherits it and sigwait takes it.
  sigset_t go;
  sigemptyset(&go);
  sigaddset(&go, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &go, nullptr);

  livemon::transport::PublisherOptions options;
  options.bind.clear();
  options.connect = {argv[1]};
  options.runName = "exit-probe";
  options.statName.clear();
  options.heartbeatInterval = std::chrono::milliseconds(20);
  options.linger = std::chrono::seconds(5);
  livemon::transport::Publisher publisher(options);
  livemon::setRangeStatsEnabled(true, std::chrono::hours(1));  // the window would stay open all run
  { LIVEMON_RECORD_FUNCTION("exit_probe"); }
  std::printf("ready\n");
  std::fflush(stdout);
  int signal = 0;
  sigwait(&go, &signal);  // the test has seen this publisher: nothing sent from now on is lost
  return 0;               // ~Publisher runs here, before exit
}
