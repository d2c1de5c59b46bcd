#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

#include <QObject>
#include <QString>

class QTimer;

namespace livemon::ui {

// Thread-safety: a plain value type.
// What an endpoint's text says before anything is connected.
struct EndpointSyntax {
  QString error;           // why it cannot be used; empty when it can
  QString hostToResolve;   // a tcp:// host given by name, to look up first; empty: none
};

// Checks an endpoint to connect to: tcp://HOST:PORT (HOST a name, an IPv4 address or an IPv6
// one in brackets, optionally after "SOURCE;"; PORT 1 to 65535), ipc://PATH, inproc://NAME.
// Other transports are left for ZeroMQ to accept or refuse. Any text is safe to pass.
EndpointSyntax checkEndpointSyntax(const QString& endpoint);

// Thread-safety: a plain value type.
struct EndpointVerdict {
  enum class State {
    Usable,     // connect now
    Refused,    // `error` says why
    Resolving,  // its host is being looked up: EndpointChecker::resolved() follows
  };
  State state = State::Refused;
  QString error;
};

// GUI thread only. Lookups run on Qt's host-lookup threads and answer through
// queued calls.
// Decides whether an endpoint can be connected to before it is: its syntax at once, and a tcp://
// host given by name by looking it up off the GUI thread (ZeroMQ would accept a name that does
// not resolve and retry it silently forever). A lookup that takes longer than `timeout` is given
// up as refused. One check at a time: a new one, cancel() or the checker's end abandons the one
// before, whose answer is then ignored.
class EndpointChecker : public QObject {
  Q_OBJECT

 public:
  // Looks `host` up and calls `done` with an error (empty: it resolves) on the GUI thread, or
  // never. Replaceable for tests.
  using Lookup = std::function<void(const QString& host, QObject* context, std::function<void(const QString& error)> done)>;

  static constexpr std::chrono::milliseconds kDefaultTimeout{10'000};

  explicit EndpointChecker(std::chrono::milliseconds timeout = kDefaultTimeout, Lookup lookup = {},
                           QObject* parent = nullptr);
  ~EndpointChecker() override;

  EndpointVerdict check(const QString& endpoint);
  void cancel();
  bool isChecking() const noexcept { return !checking_.isEmpty(); }
  // The endpoint being checked; empty when none.
  const QString& checking() const noexcept { return checking_; }

  // The system's resolver, through QHostInfo.
  static void lookUpHost(const QString& host, QObject* context, std::function<void(const QString& error)> done);

 signals:
  // The lookup of `endpoint`'s host ended: `error` empty when it resolves.
  void resolved(const QString& endpoint, const QString& error);

 private:
  void finish(uint64_t generation, const QString& error);

  std::chrono::milliseconds timeout_;
  Lookup lookup_;
  QTimer* timer_ = nullptr;
  QString checking_;
  QString host_;
  uint64_t generation_ = 0;  // answers of older checks are ignored
};

}  // namespace livemon::ui
