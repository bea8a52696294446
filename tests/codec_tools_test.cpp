// Each frame is a standard stream of its codec: the codecs' own tools decode it as it is.
#include <gtest/gtest.h>

#include <cstring>

#include "test_support.hpp"

namespace colflow {
namespace {

struct tool_case {
  codec_id codec;
  int level;
  std::string command;  // {} is replaced by the frame file; prints the payload on stdout
};

// Python's zlib module: a decoder independent of the libraries that wrote the frame.
const std::string python_zlib =
    "python3 -c \"import sys, zlib; "
    "sys.stdout.buffer.write(zlib.decompress(open(sys.argv[1], 'rb').read()))\" {}";

class CodecToolsTest : public ::testing::TestWithParam<tool_case> {};

TEST_P(CodecToolsTest, StandardToolDecodesAFrame) {
  test::temp_dir dir;
  const std::uint64_t rows = 5000;
  test::write_float_store(dir / "f.cf", value_type::float64, rows, 2,
                          {GetParam().codec, GetParam().level, false});
  const store s = store::open(dir / "f.cf");
  std::vector<std::byte> frame, payload(s.entry(0).decoded_size);
  s.read_frame(0, frame);
  s.read_payload(0, payload);
  ASSERT_GT(payload.size(), frame.size()) << "the frame should be compressed";
  const auto frame_file = dir / "frame.bin", out_file = dir / "decoded.bin";
  test::write_file(frame_file, {reinterpret_cast<const char*>(frame.data()),
                                reinterpret_cast<const char*>(frame.data() + frame.size())});
  std::string command = GetParam().command;
  command.replace(command.find("{}"), 2, frame_file.string());
  std::string output;
  const int status = test::run_command(command + " > " + out_file.string(), output);
  ASSERT_EQ(status, 0) << command << ": " << output;
  const auto decoded = test::read_file(out_file);
  ASSERT_EQ(decoded.size(), payload.size());
  EXPECT_EQ(std::memcmp(decoded.data(), payload.data(), payload.size()), 0);
}

INSTANTIATE_TEST_SUITE_P(
    AllCodecs, CodecToolsTest,
    ::testing::Values(tool_case{codec_id::zstd, 3, "zstd -d -q -c {}"},
                      tool_case{codec_id::lz4, 1, "lz4 -d -q -c {}"},
                      tool_case{codec_id::lz4, 9, "lz4 -d -q -c {}"},
                      // Written by libdeflate, at its fastest, default and strongest levels.
                      tool_case{codec_id::zlib, 1, python_zlib},
                      tool_case{codec_id::zlib, 6, python_zlib},
                      tool_case{codec_id::zlib, 9, python_zlib}),
    [](const auto& param_info) {
      return std::string(traits_of(param_info.param.codec).name) +
             std::to_string(param_info.param.level);
    });

}  // namespace
}  // namespace colflow
