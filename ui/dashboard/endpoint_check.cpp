#include <livemon/ui/dashboard/endpoint_check.h>

#include <utility>

#include <QHostAddress>
#include <QHostInfo>
#include <QPointer>
#include <QTimer>

namespace livemon::ui {

namespace {

QString tr(const char* text) { return QObject::tr(text); }

// The text of `host:port` after "tcp://" (and after "SOURCE;" when given).
EndpointSyntax checkTcp(const QString& endpoint, QStringView address) {
  EndpointSyntax result;
  if (const qsizetype semicolon = address.lastIndexOf(u';'); semicolon >= 0) address = address.sliced(semicolon + 1);
  const qsizetype colon = address.lastIndexOf(u':');
  if (colon < 0) {
    result.error = tr("%1: no port: write tcp://HOST:PORT, e.g. tcp://127.0.0.1:5555").arg(endpoint);
    return result;
  }
  QStringView host = address.first(colon);
  const QStringView portText = address.sliced(colon + 1);
  bool numeric = false;
  const uint port = portText.toUInt(&numeric);
  if (!numeric || port < 1 || port > 65535 || portText.startsWith(u'+')) {
    result.error = tr("%1: the port must be a number from 1 to 65535").arg(endpoint);
    return result;
  }
  if (host.startsWith(u'[') && host.endsWith(u']')) {
    if (QHostAddress(host.sliced(1, host.size() - 2).toString()).protocol() != QAbstractSocket::IPv6Protocol) {
      result.error = tr("%1: not an IPv6 address in brackets").arg(endpoint);
    }
    return result;
  }
  if (host.isEmpty() || host == u"*") {
    result.error = tr("%1: no host: write tcp://HOST:PORT, e.g. tcp://gpu-node-3:5555").arg(endpoint);
    return result;
  }
  for (const QChar c : host) {
    if (c.isSpace() || c == u'/' || c == u'[' || c == u']' || c == u':' || c.unicode() < 0x20) {
      result.error = tr("%1: \"%2\" is not a host name").arg(endpoint, host.toString());
      return result;
    }
  }
  if (QHostAddress address4(host.toString()); address4.protocol() == QAbstractSocket::IPv4Protocol) return result;
  result.hostToResolve = host.toString();
  return result;
}

}  // namespace

EndpointSyntax checkEndpointSyntax(const QString& endpoint) {
  const qsizetype scheme = endpoint.indexOf(QStringLiteral("://"));
  if (endpoint.trimmed().isEmpty()) return EndpointSyntax{tr("no endpoint given"), {}};
  if (scheme <= 0) {
    return EndpointSyntax{
        tr("%1: no transport: write tcp://HOST:PORT, ipc://PATH or inproc://NAME").arg(endpoint), {}};
  }
  const QStringView transport = QStringView(endpoint).first(scheme);
  const QStringView address = QStringView(endpoint).sliced(scheme + 3);
  if (transport == u"tcp") return checkTcp(endpoint, address);
  if ((transport == u"ipc" || transport == u"inproc") && address.isEmpty()) {
    return EndpointSyntax{tr("%1: no %2 after %3://")
                              .arg(endpoint, transport == u"ipc" ? tr("path") : tr("name"), transport.toString()),
                          {}};
  }
  return {};
}

EndpointChecker::EndpointChecker(std::chrono::milliseconds timeout, Lookup lookup, QObject* parent)
    : QObject(parent), timeout_(timeout), lookup_(lookup ? std::move(lookup) : Lookup(&EndpointChecker::lookUpHost)) {
  timer_ = new QTimer(this);
  timer_->setSingleShot(true);
  connect(timer_, &QTimer::timeout, this, [this] {
    finish(generation_, tr("%1 did not resolve within %2 s").arg(host_).arg(timeout_.count() / 1000.0));
  });
}

EndpointChecker::~EndpointChecker() = default;

EndpointVerdict EndpointChecker::check(const QString& endpoint) {
  cancel();
  const EndpointSyntax syntax = checkEndpointSyntax(endpoint);
  if (!syntax.error.isEmpty()) return EndpointVerdict{EndpointVerdict::State::Refused, syntax.error};
  if (syntax.hostToResolve.isEmpty()) return EndpointVerdict{EndpointVerdict::State::Usable, {}};
  checking_ = endpoint;
  host_ = syntax.hostToResolve;
  const uint64_t generation = ++generation_;
  timer_->start(timeout_);
  // The answer may come after this checker is gone, or after another check began: both ignore it.
  QPointer<EndpointChecker> self(this);
  lookup_(host_, this, [self, generation](const QString& error) {
    if (self) self->finish(generation, error);
  });
  return EndpointVerdict{EndpointVerdict::State::Resolving, {}};
}

void EndpointChecker::cancel() {
  ++generation_;
  timer_->stop();
  checking_.clear();
  host_.clear();
}

void EndpointChecker::finish(uint64_t generation, const QString& error) {
  if (generation != generation_ || checking_.isEmpty()) return;
  const QString endpoint = checking_;
  cancel();
  emit resolved(endpoint, error);
}

void EndpointChecker::lookUpHost(const QString& host, QObject* context, std::function<void(const QString&)> done) {
  QHostInfo::lookupHost(host, context, [host, done = std::move(done)](const QHostInfo& info) {
    if (info.error() != QHostInfo::NoError) {
      done(tr("%1 does not resolve: %2").arg(host, info.errorString()));
    } else if (info.addresses().isEmpty()) {
      done(tr("%1 does not resolve to an address").arg(host));
    } else {
      done({});
    }
  });
}

}  // namespace livemon::ui
