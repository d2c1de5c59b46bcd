// The CRC-32 of MCAP records (the zlib/ISO-HDLC one) over what a recording checks: a small record,
// a 4 KiB piece and a 1 MiB chunk. zlib's crc32_z beside the reference, the byte-at-a-time table
// livemon computed it with before (kept here, copied as it was), run in the same process.
#include <benchmark/benchmark.h>
#include <zlib.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>

namespace {

// The reference: livemon's former mcap::crc32, polynomial 0xEDB88320, reflected.
uint32_t tableCrc32(std::string_view bytes, uint32_t crc = 0) noexcept {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (unsigned char byte : bytes) crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

uint32_t zlibCrc32(std::string_view bytes, uint32_t crc = 0) noexcept {
  return static_cast<uint32_t>(crc32_z(crc, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
}

const std::string& data(std::size_t size) {
  static std::string bytes = [] {
    std::string random(1 << 20, '\0');
    std::mt19937 generator(42);
    for (char& c : random) c = static_cast<char>(generator());
    // Both must agree before either is timed.
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{63}, std::size_t{4096}, random.size()}) {
      const std::string_view piece(random.data(), n);
      if (tableCrc32(piece) != zlibCrc32(piece) || tableCrc32(piece, 0x1234) != zlibCrc32(piece, 0x1234)) {
        std::fprintf(stderr, "crc32_bench: zlib and the table disagree on %zu bytes\n", n);
        std::abort();
      }
    }
    return random;
  }();
  static std::string piece;
  piece.assign(bytes, 0, size);
  return piece;
}

template <uint32_t (*Crc)(std::string_view, uint32_t) noexcept>
void BM_Crc32(benchmark::State& state) {
  const std::string& bytes = data(static_cast<std::size_t>(state.range(0)));
  uint32_t crc = 0;
  for (auto _ : state) {
    crc = Crc(bytes, 0);
    benchmark::DoNotOptimize(crc);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}

}  // namespace

BENCHMARK_TEMPLATE(BM_Crc32, tableCrc32)->Name("Crc32_Table")->Arg(64)->Arg(4096)->Arg(1 << 20);
BENCHMARK_TEMPLATE(BM_Crc32, zlibCrc32)->Name("Crc32_Zlib")->Arg(64)->Arg(4096)->Arg(1 << 20);

BENCHMARK_MAIN();
