// graph_tests.cpp — conformance of stream capture into graphs (plugin.h ABI 1.1, "graphs"):
// captured work does not run at capture time; a replay gives bitwise what direct launches of the
// same descriptors give on the buffers' current contents, replay after replay; what a capturing
// stream refuses (FAILED_PRECONDITION, the capture goes on); a failed enqueue spoils the capture;
// a graph replays only on its own stream and outlives it; a kernel's data error inside a replay is
// reported by the next synchronize; kernels that use the stream's scratch replay correctly after a
// larger direct launch has re-grown it. Every test skips with the reason where the device has no
// graphs (Device::SupportsGraphs: the plugin leaves the four slots NULL).
//
// Must not compare against a reference: the direct launch of the same descriptors on the same
// device is the expectation (each kernel's own suite checks it against the CPU reference).
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "conformance_fixture.h"
#include "hwinfer/tensor_view.h"
#include "reference/quantize_blocks.h"

namespace hwinfer::conformance {
namespace {

using GraphTest = ConformanceTest;

// True when |device| captures graphs; otherwise records a skip with the reason.
bool RequireGraphs(const Device& device) {
  if (device.SupportsGraphs()) return true;
  [&] {
    GTEST_SKIP() << device.id()
                 << " has no graphs: its plugin leaves the four capture slots "
                    "(stream_begin_capture .. graph_destroy) NULL";
  }();
  return false;
}

std::vector<float> RandomFloats(size_t n, std::mt19937_64& rng, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> values(n);
  for (float& v : values) v = dist(rng);
  return values;
}

template <typename T>
std::vector<uint8_t> AsBytes(const std::vector<T>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// A buffer holding |bytes| (uploaded and synchronized).
StatusOr<Buffer> BufferWith(Device& device, Stream& stream, const std::vector<uint8_t>& bytes) {
  StatusOr<Buffer> buffer = device.Allocate(bytes.size());
  if (!buffer.ok()) return buffer.status();
  HWINFER_RETURN_IF_ERROR(Upload(stream, *buffer, bytes));
  return buffer;
}

testing::AssertionResult HasCode(const Status& status, StatusCode code, const char* what) {
  if (status.code() == code) return testing::AssertionSuccess();
  return testing::AssertionFailure()
         << what << ": expected " << StatusCodeName(code) << ", got " << status.ToString();
}

// A decode-step-like chain on real buffers, F32 throughout:
//   normed = rms_norm(x) * norm_weight             x, normed: [kTokens, kDim]
//   gate_up = normed @ w^T                         w: [2 kFfn, kDim] (b_transposed), gate_up:
//                                                  [kTokens, 2 kFfn]
//   gate_up_copy = gate_up                         copy_d2d
//   out = silu(gate_up_copy[:, :kFfn]) * gate_up_copy[:, kFfn:]    out: [kTokens, kFfn]
struct Chain {
  static constexpr int64_t kTokens = 3, kDim = 64, kFfn = 40;
  static constexpr uint64_t kXBytes = kTokens * kDim * 4;
  static constexpr uint64_t kGateUpBytes = kTokens * 2 * kFfn * 4;
  static constexpr uint64_t kOutBytes = kTokens * kFfn * 4;

  Buffer x, norm_weight, normed, w, gate_up, gate_up_copy, out;
  hwinfer_rms_norm_desc norm{};
  hwinfer_gemm_desc gemm{};
  hwinfer_silu_mul_desc silu{};

  // Allocates the buffers (weights random, the rest poisoned) and fills the descriptors.
  Status Create(Device& device, Stream& stream, std::mt19937_64& rng) {
    HWINFER_ASSIGN_OR_RETURN(x, FilledBuffer(device, stream, kXBytes, kPoisonByte));
    HWINFER_ASSIGN_OR_RETURN(
        norm_weight, BufferWith(device, stream, AsBytes(RandomFloats(kDim, rng, 0.5f, 1.5f))));
    HWINFER_ASSIGN_OR_RETURN(normed, FilledBuffer(device, stream, kXBytes, kPoisonByte));
    HWINFER_ASSIGN_OR_RETURN(
        w, BufferWith(device, stream, AsBytes(RandomFloats(2 * kFfn * kDim, rng, -0.3f, 0.3f))));
    HWINFER_ASSIGN_OR_RETURN(gate_up, FilledBuffer(device, stream, kGateUpBytes, kPoisonByte));
    HWINFER_ASSIGN_OR_RETURN(gate_up_copy, FilledBuffer(device, stream, kGateUpBytes, kPoisonByte));
    HWINFER_ASSIGN_OR_RETURN(out, FilledBuffer(device, stream, kOutBytes, kPoisonByte));

    norm.struct_size = sizeof(norm);
    norm.kind = HWINFER_KERNEL_RMS_NORM;
    norm.n_tokens = kTokens;
    norm.dim = kDim;
    norm.eps = 1e-5f;
    norm.x = ContiguousView(x, 0, HWINFER_DTYPE_F32, {kTokens, kDim});
    norm.weight = ContiguousView(norm_weight, 0, HWINFER_DTYPE_F32, {kDim});
    norm.residual = NoView();
    norm.out = ContiguousView(normed, 0, HWINFER_DTYPE_F32, {kTokens, kDim});

    gemm.struct_size = sizeof(gemm);
    gemm.kind = HWINFER_KERNEL_GEMM;
    gemm.m = kTokens;
    gemm.n = 2 * kFfn;
    gemm.k = kDim;
    gemm.b_transposed = 1;
    gemm.alpha = 1.0f;
    gemm.beta = 0.0f;
    gemm.a = ContiguousView(normed, 0, HWINFER_DTYPE_F32, {kTokens, kDim});
    gemm.b = ContiguousView(w, 0, HWINFER_DTYPE_F32, {2 * kFfn, kDim});
    gemm.c = ContiguousView(gate_up, 0, HWINFER_DTYPE_F32, {kTokens, 2 * kFfn});

    silu.struct_size = sizeof(silu);
    silu.kind = HWINFER_KERNEL_SILU_MUL;
    silu.n_tokens = kTokens;
    silu.dim = kFfn;
    silu.gate = ContiguousView(gate_up_copy, 0, HWINFER_DTYPE_F32, {kTokens, kFfn});
    silu.gate.strides_bytes[0] = 2 * kFfn * 4;
    silu.up = ContiguousView(gate_up_copy, kFfn * 4, HWINFER_DTYPE_F32, {kTokens, kFfn});
    silu.up.strides_bytes[0] = 2 * kFfn * 4;
    silu.out = ContiguousView(out, 0, HWINFER_DTYPE_F32, {kTokens, kFfn});
    return Status::Ok();
  }

  bool Supported(const Device& device) const {
    return RequireKernel(device, AsKernelDesc(norm)) && RequireKernel(device, AsKernelDesc(gemm)) &&
           RequireKernel(device, AsKernelDesc(silu));
  }

  // out after |launches| replays of |graph| in a row, from a poisoned out.
  StatusOr<std::vector<uint8_t>> Replay(Stream& stream, const Graph& graph,
                                        int launches = 1) const {
    HWINFER_RETURN_IF_ERROR(Upload(stream, out, std::vector<uint8_t>(kOutBytes, kPoisonByte)));
    for (int r = 0; r < launches; ++r) HWINFER_RETURN_IF_ERROR(graph.Launch(stream));
    HWINFER_RETURN_IF_ERROR(stream.Synchronize());
    return Download(stream, out);
  }

  // Enqueues the four steps (directly, or into a capture).
  Status Enqueue(Stream& stream) const {
    HWINFER_RETURN_IF_ERROR(stream.Launch(AsKernelDesc(norm)));
    HWINFER_RETURN_IF_ERROR(stream.Launch(AsKernelDesc(gemm)));
    HWINFER_RETURN_IF_ERROR(stream.CopyD2D(gate_up, 0, gate_up_copy, 0, kGateUpBytes));
    return stream.Launch(AsKernelDesc(silu));
  }
};

// Captures the chain; nothing runs at capture (out keeps its poison through a synchronize). Then
// for two inputs written with copy_h2d: direct launches, and a graph launch (once, then twice in a
// row), each from a poisoned out, give the same bytes.
TEST_P(GraphTest, CapturedChainReplaysLikeDirectLaunches) {
  if (!RequireGraphs(device())) return;
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  Chain chain;
  ASSERT_OK(chain.Create(device(), stream(), rng));
  if (!chain.Supported(device())) return;
  const std::vector<uint8_t> poison(Chain::kOutBytes, kPoisonByte);
  const std::vector<std::vector<uint8_t>> inputs = {
      AsBytes(RandomFloats(Chain::kTokens * Chain::kDim, rng, -2.0f, 2.0f)),
      AsBytes(RandomFloats(Chain::kTokens * Chain::kDim, rng, -2.0f, 2.0f))};
  SyncOnExit drain(stream());

  ASSERT_OK(stream().BeginCapture());
  ASSERT_OK(chain.Enqueue(stream()));
  ASSERT_OK_AND_ASSIGN(Graph graph, stream().EndCapture());
  ASSERT_OK(stream().Synchronize());
  ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> untouched, Download(stream(), chain.out));
  EXPECT_TRUE(BytesAre(untouched.data(), untouched.size(), kPoisonByte,
                       "out after the capture (nothing captured may run at capture time)"));
  ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> untouched_copy, Download(stream(), chain.gate_up_copy));
  EXPECT_TRUE(BytesAre(untouched_copy.data(), untouched_copy.size(), kPoisonByte,
                       "the copy_d2d destination after the capture"));

  std::vector<std::vector<uint8_t>> direct_results;
  for (size_t i = 0; i < inputs.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "input " << i);
    ASSERT_OK(Upload(stream(), chain.x, inputs[i]));
    ASSERT_OK(Upload(stream(), chain.out, poison));
    ASSERT_OK(chain.Enqueue(stream()));
    ASSERT_OK(stream().Synchronize());
    ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> direct, Download(stream(), chain.out));
    ASSERT_FALSE(BytesAre(direct.data(), direct.size(), kPoisonByte, "out"))
        << "the direct launches wrote nothing";

    for (int replays = 1; replays <= 2; ++replays) {
      SCOPED_TRACE(testing::Message() << replays << " replay(s) in a row");
      ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> replayed, chain.Replay(stream(), graph, replays));
      EXPECT_TRUE(BytesEqual(replayed.data(), direct.data(), direct.size(),
                             "out of the graph vs. the direct launches"));
    }
    direct_results.push_back(std::move(direct));
  }
  EXPECT_FALSE(BytesEqual(direct_results[0].data(), direct_results[1].data(),
                          direct_results[0].size(), "out"))
      << "two different inputs gave the same out: the replays would not show stale inputs";
}

// While capturing: copy_h2d, copy_d2h, event_record, stream_wait_event, synchronize, graph_launch
// and a second begin are FAILED_PRECONDITION; the capture goes on and gives a working graph.
TEST_P(GraphTest, CapturingStreamRefusesWhatCannotBeCaptured) {
  if (!RequireGraphs(device())) return;
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  Chain chain;
  ASSERT_OK(chain.Create(device(), stream(), rng));
  if (!chain.Supported(device())) return;
  ASSERT_OK_AND_ASSIGN(Stream other, device().CreateStream());
  ASSERT_OK_AND_ASSIGN(Event event, device().CreateEvent());
  ASSERT_OK(event.Record(other));
  ASSERT_OK(other.Synchronize());
  ASSERT_OK(stream().BeginCapture());
  ASSERT_OK_AND_ASSIGN(Graph empty, stream().EndCapture());  // an empty capture is a graph too
  ASSERT_OK(stream().BeginCapture());
  const std::vector<uint8_t> input =
      AsBytes(RandomFloats(Chain::kTokens * Chain::kDim, rng, -2, 2));
  std::vector<uint8_t> host(Chain::kOutBytes, 0);
  constexpr StatusCode kRefused = StatusCode::kFailedPrecondition;
  EXPECT_TRUE(HasCode(stream().CopyH2D(input.data(), chain.x, 0, Chain::kXBytes), kRefused,
                      "copy_h2d while capturing"));
  EXPECT_TRUE(HasCode(stream().CopyD2H(chain.out, 0, host.data(), Chain::kOutBytes), kRefused,
                      "copy_d2h while capturing"));
  EXPECT_TRUE(HasCode(event.Record(stream()), kRefused, "event_record while capturing"));
  EXPECT_TRUE(HasCode(stream().Wait(event), kRefused, "stream_wait_event while capturing"));
  EXPECT_TRUE(HasCode(stream().Synchronize(), kRefused, "stream_synchronize while capturing"));
  EXPECT_TRUE(HasCode(stream().BeginCapture(), kRefused, "a second stream_begin_capture"));
  EXPECT_TRUE(HasCode(empty.Launch(stream()), kRefused, "graph_launch on a capturing stream"));
  ASSERT_OK(chain.Enqueue(stream()));
  ASSERT_OK_AND_ASSIGN(Graph graph, stream().EndCapture());

  SyncOnExit drain(stream());
  ASSERT_OK(Upload(stream(), chain.x, input));
  ASSERT_OK(chain.Enqueue(stream()));
  ASSERT_OK(stream().Synchronize());
  ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> direct, Download(stream(), chain.out));
  ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> replayed, chain.Replay(stream(), graph));
  EXPECT_TRUE(BytesEqual(replayed.data(), direct.data(), direct.size(),
                         "out of the graph captured around the refusals vs. direct launches"));
}

// An enqueue that fails while capturing (a malformed kernel descriptor; an overlapping copy_d2d)
// spoils the capture: stream_end_capture is FAILED_PRECONDITION, and the stream is back to normal
// (direct work runs; a new capture works).
TEST_P(GraphTest, FailedEnqueueSpoilsTheCapture) {
  if (!RequireGraphs(device())) return;
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  Chain chain;
  ASSERT_OK(chain.Create(device(), stream(), rng));
  if (!chain.Supported(device())) return;
  constexpr StatusCode kRefused = StatusCode::kFailedPrecondition;
  SyncOnExit drain(stream());

  ASSERT_OK(stream().BeginCapture());
  ASSERT_OK(stream().Launch(AsKernelDesc(chain.norm)));
  hwinfer_silu_mul_desc malformed = chain.silu;
  malformed.dim = Chain::kFfn + 1;  // the views hold kFfn columns
  EXPECT_FALSE(stream().Launch(AsKernelDesc(malformed)).ok())
      << "a silu_mul whose dim disagrees with its views was accepted at enqueue";
  (void)stream().Launch(AsKernelDesc(chain.gemm));  // recorded or not: the capture stays spoiled
  EXPECT_TRUE(HasCode(stream().EndCapture().status(), kRefused, "end of a spoiled capture"));
  EXPECT_TRUE(HasCode(stream().EndCapture().status(), kRefused,
                      "stream_end_capture again (the spoiled capture has ended)"));

  ASSERT_OK(stream().BeginCapture());
  EXPECT_FALSE(stream().CopyD2D(chain.gate_up, 0, chain.gate_up, 8, 64).ok())
      << "an overlapping copy_d2d within one buffer was accepted while capturing";
  EXPECT_TRUE(
      HasCode(stream().EndCapture().status(), kRefused, "end of a capture spoiled by copy_d2d"));

  // Back to normal: the work the spoiled captures held never ran, direct work runs.
  ASSERT_OK(stream().Synchronize());
  ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> normed, Download(stream(), chain.normed));
  EXPECT_TRUE(BytesAre(normed.data(), normed.size(), kPoisonByte,
                       "normed (written only by the spoiled capture's rms_norm)"));
  const std::vector<uint8_t> input =
      AsBytes(RandomFloats(Chain::kTokens * Chain::kDim, rng, -2.0f, 2.0f));
  ASSERT_OK(Upload(stream(), chain.x, input));
  ASSERT_OK(chain.Enqueue(stream()));
  ASSERT_OK(stream().Synchronize());
  ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> direct, Download(stream(), chain.out));
  ASSERT_FALSE(BytesAre(direct.data(), direct.size(), kPoisonByte, "out"))
      << "direct launches after a spoiled capture wrote nothing";

  ASSERT_OK(stream().BeginCapture());
  ASSERT_OK(chain.Enqueue(stream()));
  ASSERT_OK_AND_ASSIGN(Graph graph, stream().EndCapture());
  ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> replayed, chain.Replay(stream(), graph));
  EXPECT_TRUE(BytesEqual(replayed.data(), direct.data(), direct.size(),
                         "out of a capture after the spoiled ones vs. direct launches"));
}

// graph_launch on another stream than the one captured from, and stream_end_capture without a
// begin, are FAILED_PRECONDITION. A graph outlives its stream (it can no longer be launched, and
// is destroyed without it); a stream destroyed while capturing runs none of what it recorded.
TEST_P(GraphTest, GraphReplaysOnlyOnItsOwnStream) {
  if (!RequireGraphs(device())) return;
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  Chain chain;
  ASSERT_OK(chain.Create(device(), stream(), rng));
  if (!chain.Supported(device())) return;
  constexpr StatusCode kRefused = StatusCode::kFailedPrecondition;
  EXPECT_TRUE(HasCode(stream().EndCapture().status(), kRefused,
                      "stream_end_capture without stream_begin_capture"));
  ASSERT_OK(Upload(stream(), chain.x,
                   AsBytes(RandomFloats(Chain::kTokens * Chain::kDim, rng, -2.0f, 2.0f))));

  ASSERT_OK_AND_ASSIGN(Stream other, device().CreateStream());
  ASSERT_OK(stream().BeginCapture());
  ASSERT_OK(chain.Enqueue(stream()));
  ASSERT_OK_AND_ASSIGN(Graph graph, stream().EndCapture());
  EXPECT_TRUE(HasCode(graph.Launch(other), kRefused, "graph_launch on another stream"));
  ASSERT_OK(other.Synchronize());
  ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> out, Download(stream(), chain.out));
  EXPECT_TRUE(BytesAre(out.data(), out.size(), kPoisonByte,
                       "out after a refused graph_launch on another stream"));

  Graph orphan;
  {
    ASSERT_OK_AND_ASSIGN(Stream doomed, device().CreateStream());
    ASSERT_OK(doomed.BeginCapture());
    ASSERT_OK(chain.Enqueue(doomed));
    ASSERT_OK_AND_ASSIGN(orphan, doomed.EndCapture());
  }
  EXPECT_TRUE(HasCode(orphan.Launch(stream()), kRefused,
                      "graph_launch of a graph whose stream was destroyed"));
  {
    ASSERT_OK_AND_ASSIGN(Stream abandoned, device().CreateStream());
    ASSERT_OK(abandoned.BeginCapture());
    ASSERT_OK(chain.Enqueue(abandoned));
  }  // destroyed while capturing
  ASSERT_OK_AND_ASSIGN(out, Download(stream(), chain.out));
  EXPECT_TRUE(BytesAre(out.data(), out.size(), kPoisonByte,
                       "out after captures on other streams (nothing may have run)"));
  orphan = Graph();  // graph_destroy after its stream is gone

  SyncOnExit drain(stream());
  ASSERT_OK(graph.Launch(stream()));
  ASSERT_OK(stream().Synchronize());
  ASSERT_OK_AND_ASSIGN(out, Download(stream(), chain.out));
  EXPECT_FALSE(BytesAre(out.data(), out.size(), kPoisonByte, "out"))
      << "the graph's replay on its own stream wrote nothing";
}

// An embedding whose ids are written before each replay: an id outside [0, vocab) is reported by
// the next synchronize as INVALID_ARGUMENT; the next replay with good ids succeeds and gives what
// a direct launch gives.
TEST_P(GraphTest, DataErrorInsideAReplayIsReportedBySynchronize) {
  if (!RequireGraphs(device())) return;
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  constexpr int64_t kVocab = 50, kDim = 32, kTokens = 4;
  ASSERT_OK_AND_ASSIGN(Buffer table, BufferWith(device(), stream(),
                                                AsBytes(RandomFloats(kVocab * kDim, rng, -1, 1))));
  ASSERT_OK_AND_ASSIGN(Buffer ids, FilledBuffer(device(), stream(), kTokens * 4, 0));
  ASSERT_OK_AND_ASSIGN(Buffer out,
                       FilledBuffer(device(), stream(), kTokens * kDim * 4, kPoisonByte));
  hwinfer_embedding_desc desc{};
  desc.struct_size = sizeof(desc);
  desc.kind = HWINFER_KERNEL_EMBEDDING;
  desc.n_tokens = kTokens;
  desc.vocab = kVocab;
  desc.dim = kDim;
  desc.table = ContiguousView(table, 0, HWINFER_DTYPE_F32, {kVocab, kDim});
  desc.ids = ContiguousView(ids, 0, HWINFER_DTYPE_I32, {kTokens});
  desc.out = ContiguousView(out, 0, HWINFER_DTYPE_F32, {kTokens, kDim});
  if (!RequireKernel(device(), AsKernelDesc(desc))) return;
  const std::vector<uint8_t> poison(kTokens * kDim * 4, kPoisonByte);
  SyncOnExit drain(stream());

  ASSERT_OK(stream().BeginCapture());
  ASSERT_OK(stream().Launch(AsKernelDesc(desc)));
  ASSERT_OK_AND_ASSIGN(Graph graph, stream().EndCapture());

  ASSERT_OK(Upload(stream(), ids, AsBytes(std::vector<int32_t>{3, kVocab + 7, 0, 12})));
  ASSERT_OK(graph.Launch(stream()));
  EXPECT_TRUE(HasCode(stream().Synchronize(), StatusCode::kInvalidArgument,
                      "synchronize after a replay with an id >= vocab"));

  const std::vector<int32_t> good = {3, kVocab - 1, 0, 12};
  ASSERT_OK(Upload(stream(), ids, AsBytes(good)));
  ASSERT_OK(Upload(stream(), out, poison));
  ASSERT_OK(graph.Launch(stream()));
  ASSERT_OK(stream().Synchronize());
  ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> replayed, Download(stream(), out));
  ASSERT_OK(Upload(stream(), out, poison));
  ASSERT_OK(stream().Launch(AsKernelDesc(desc)));
  ASSERT_OK(stream().Synchronize());
  ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> direct, Download(stream(), out));
  ASSERT_FALSE(BytesAre(direct.data(), direct.size(), kPoisonByte, "out"))
      << "the direct embedding wrote nothing";
  EXPECT_TRUE(BytesEqual(replayed.data(), direct.data(), direct.size(),
                         "out of the replay with good ids vs. a direct launch"));
}

// matmul_quantized with w Q8_0 [n, k] quantized from |w_values| and x [m, k] F32, y [m, n] F32.
struct QuantMatmul {
  Buffer x, w, y;
  hwinfer_matmul_quantized_desc desc{};

  Status Create(Device& device, Stream& stream, int64_t m, int64_t n, int64_t k,
                std::mt19937_64& rng) {
    const std::vector<float> w_values = RandomFloats(static_cast<size_t>(n * k), rng, -1, 1);
    std::vector<hwinfer_block_q8_0> blocks(static_cast<size_t>(n * k / 32));
    for (int64_t row = 0; row < n; ++row) {
      reference::quantize_q8_0(w_values.data() + row * k, blocks.data() + row * k / 32, k);
    }
    HWINFER_ASSIGN_OR_RETURN(w, BufferWith(device, stream, AsBytes(blocks)));
    HWINFER_ASSIGN_OR_RETURN(x, FilledBuffer(device, stream, static_cast<uint64_t>(m * k * 4), 0));
    HWINFER_ASSIGN_OR_RETURN(
        y, FilledBuffer(device, stream, static_cast<uint64_t>(m * n * 4), kPoisonByte));
    desc.struct_size = sizeof(desc);
    desc.kind = HWINFER_KERNEL_MATMUL_QUANTIZED;
    desc.m = m;
    desc.n = n;
    desc.k = k;
    desc.x = ContiguousView(x, 0, HWINFER_DTYPE_F32, {m, k});
    desc.w = ContiguousView(w, 0, HWINFER_DTYPE_Q8_0, {n, k});
    desc.y = ContiguousView(y, 0, HWINFER_DTYPE_F32, {m, n});
    return Status::Ok();
  }
};

// A captured matmul_quantized with m <= 8 (it quantizes x into scratch) replays correctly after a
// larger direct launch on the same stream has re-grown the stream's scratch area (freed and
// allocated again): the graph's scratch must not be the stream's.
TEST_P(GraphTest, ScratchKernelReplaysAfterTheScratchGrew) {
  if (!RequireGraphs(device())) return;
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  constexpr int64_t kM = 8;
  QuantMatmul small, large;
  ASSERT_OK(small.Create(device(), stream(), kM, 16, 256, rng));
  // x quantized: 8 * 131072 * 36 / 32 bytes = 1.1 MiB, beyond any scratch the small one needs.
  ASSERT_OK(large.Create(device(), stream(), kM, 2, 131072, rng));
  if (!RequireKernel(device(), AsKernelDesc(small.desc)) ||
      !RequireKernel(device(), AsKernelDesc(large.desc))) {
    return;
  }
  const std::vector<uint8_t> poison(kM * 16 * 4, kPoisonByte);
  SyncOnExit drain(stream());
  ASSERT_OK(stream().Launch(AsKernelDesc(small.desc)));  // the stream's scratch at its first size
  ASSERT_OK(stream().Synchronize());

  ASSERT_OK(stream().BeginCapture());
  ASSERT_OK(stream().Launch(AsKernelDesc(small.desc)));
  ASSERT_OK_AND_ASSIGN(Graph graph, stream().EndCapture());
  ASSERT_OK(Upload(stream(), large.x, AsBytes(RandomFloats(kM * 131072, rng, -1, 1))));
  ASSERT_OK(stream().Launch(AsKernelDesc(large.desc)));  // grows the stream's scratch
  ASSERT_OK(stream().Synchronize());

  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(testing::Message() << "input " << round);
    ASSERT_OK(Upload(stream(), small.x, AsBytes(RandomFloats(kM * 256, rng, -2, 2))));
    ASSERT_OK(Upload(stream(), small.y, poison));
    ASSERT_OK(graph.Launch(stream()));
    ASSERT_OK(stream().Synchronize());
    ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> replayed, Download(stream(), small.y));
    ASSERT_OK(Upload(stream(), small.y, poison));
    ASSERT_OK(stream().Launch(AsKernelDesc(small.desc)));
    ASSERT_OK(stream().Synchronize());
    ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> direct, Download(stream(), small.y));
    ASSERT_FALSE(BytesAre(direct.data(), direct.size(), kPoisonByte, "y"))
        << "the direct matmul_quantized wrote nothing";
    EXPECT_TRUE(BytesEqual(replayed.data(), direct.data(), direct.size(),
                           "y of the replay vs. a direct launch"));
    ASSERT_OK(stream().Launch(AsKernelDesc(large.desc)));  // the stream's scratch in use again
  }
}

INSTANTIATE_TEST_SUITE_P(Graphs, GraphTest, testing::ValuesIn(BackendParams()), BackendParamName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GraphTest);

}  // namespace
}  // namespace hwinfer::conformance
