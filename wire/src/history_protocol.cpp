// The history protocol's own payloads: a request and the end of an answer (docs/wire-format.md,
// "History"). The answer's other messages are the event messages as they were published.
#include <livemon/transport/wire_format.h>

#include <livemon/detail/msgpack_reader.h>
#include <livemon/detail/msgpack_writer.h>

namespace livemon::transport {

namespace {

using detail::DecodeFailure;
using detail::MsgpackReader;
using detail::MsgpackWriter;

constexpr std::size_t kMaxKeyBytes = 64;
constexpr int kMaxSkipDepth = 16;
constexpr std::size_t kMaxErrorBytes = 256;

// Reads the map header and the leading "v" and "kind" entries; returns the map's entry count.
uint32_t readStart(MsgpackReader& reader, std::string_view kind) {
  const uint32_t entries = reader.mapHeader("payload");
  if (entries < 2 || reader.peekType() != MsgpackReader::Type::Str || reader.str("first key", kMaxKeyBytes) != "v") {
    MsgpackReader::failAt(1, "the payload does not start with the key \"v\"");
  }
  const int64_t version = reader.int64("\"v\"");
  if (version != static_cast<int64_t>(kWireVersion)) {
    throw DecodeFailure{DecodeStatus::UnsupportedVersion, "version " + std::to_string(version)};
  }
  if (reader.str("second key", kMaxKeyBytes) != "kind") reader.fail("the second key is not \"kind\"");
  const std::string_view found = reader.str("\"kind\"", kMaxKeyBytes);
  if (found != kind) {
    throw DecodeFailure{DecodeStatus::UnknownKind, "kind \"" + std::string(found) + "\", expected \"" +
                                                       std::string(kind) + "\""};
  }
  return entries;
}

void writeStart(MsgpackWriter& writer, uint32_t entries, std::string_view kind) {
  writer.mapHeader(entries);
  writer.str("v");
  writer.uint(kWireVersion);
  writer.str("kind");
  writer.str(kind);
}

}  // namespace

std::string encodeHistoryRequest(const HistoryRequest& request) {
  std::string out;
  MsgpackWriter writer(out);
  writeStart(writer, 3, "history-request");
  writer.str("filters");
  writer.arrayHeader(static_cast<uint32_t>(request.filters.size()));
  for (const std::string& filter : request.filters) writer.str(filter);
  return out;
}

DecodeStatus decodeHistoryRequest(std::string_view payload, const WireLimits& limits, HistoryRequest& out,
                                  std::string* error) {
  return detail::decodeGuarded(error, [&] {
    out.filters.clear();
    MsgpackReader reader(payload);
    const uint32_t entries = readStart(reader, "history-request");
    // After "v" and "kind".
    detail::readMapEntries(reader, entries - 2, {"filters"}, "key", kMaxKeyBytes, kMaxSkipDepth, [&](uint32_t) {
      const uint32_t count = reader.arrayHeader("\"filters\"");
      if (count > kMaxHistoryFilters) {
        throw DecodeFailure{DecodeStatus::TooLarge, std::to_string(count) + " filters exceed the limit of " +
                                                        std::to_string(kMaxHistoryFilters)};
      }
      for (uint32_t f = 0; f < count; ++f) out.filters.emplace_back(reader.str("filter", limits.maxTopicBytes));
    });
    if (!reader.atEnd()) reader.fail("bytes follow the payload map");
  });
}

std::string encodeHistoryEnd(const HistoryEnd& end) {
  std::string out;
  MsgpackWriter writer(out);
  writeStart(writer, end.error.empty() ? 5 : 6, "history-end");
  writer.str("messages");
  writer.uint(end.messages);
  writer.str("truncated");
  writer.boolean(end.truncated);
  writer.str("oldest");
  if (end.oldest) {
    writer.sint(toWireTime(*end.oldest));
  } else {
    writer.nil();
  }
  if (!end.error.empty()) {
    writer.str("error");
    writer.str(std::string_view(end.error).substr(0, kMaxErrorBytes));
  }
  return out;
}

DecodeStatus decodeHistoryEnd(std::string_view payload, HistoryEnd& out, std::string* error) {
  return detail::decodeGuarded(error, [&] {
    out = HistoryEnd{};
    MsgpackReader reader(payload);
    const uint32_t entries = readStart(reader, "history-end");
    enum Key : uint32_t { Messages = 1, Truncated = 2, Oldest = 4, Error = 8 };
    const uint32_t seen = detail::readMapEntries(
        reader, entries - 2, {"messages", "truncated", "oldest", "error"}, "key", kMaxKeyBytes, kMaxSkipDepth,
        [&](uint32_t key) {
          switch (uint32_t{1} << key) {
            case Messages: out.messages = reader.uint64("\"messages\""); break;
            case Truncated: out.truncated = reader.boolean("\"truncated\""); break;
            case Oldest:
              if (reader.peekType() == MsgpackReader::Type::Nil) {
                reader.skip(1);
              } else {
                out.oldest = fromWireTime(reader.int64("\"oldest\""));
              }
              break;
            case Error: out.error = reader.str("\"error\"", kMaxErrorBytes); break;
          }
        });
    if (!reader.atEnd()) reader.fail("bytes follow the payload map");
    if ((seen & (Messages | Truncated | Oldest)) != (Messages | Truncated | Oldest)) {
      MsgpackReader::failAt(0, "a history end lacks one of messages, truncated, oldest");
    }
  });
}

}  // namespace livemon::transport
