// serving_engine_test.cpp — the online engine behind `hwinfer serve` on the CPU with the tiny text
// model (tests/data/text/README.md): greedy tokens equal llama.cpp's whether a request runs alone
// or among concurrent ones, stop tokens and cancellation end requests and free their KV blocks,
// a full queue and a shutdown refuse requests, bad requests are refused before anything runs, and
// the counters add up.
#include "hwinfer/serving_engine.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "cpu_device.h"
#include "hwinfer/llama_model.h"

namespace hwinfer {
namespace {

using std::chrono::milliseconds;

const std::string kTextModel =
    std::string(HWINFER_SOURCE_DIR) + "/tests/data/text/tiny-llama-spm-text-q8_0.gguf";
// llama.cpp's greedy tokens for "The capital of France is" and "Hello world" (with BOS).
const std::vector<int32_t> kPromptA = {1, 450, 7483, 310, 3444, 338};
const std::vector<int32_t> kTokensA = {1111,  31399, 2811,  18714, 31681, 6767,  27876, 17193,
                                       28549, 11844, 23398, 19115, 22959, 16545, 9290,  457};
const std::vector<int32_t> kPromptB = {1, 15043, 3186};
const std::vector<int32_t> kTokensB = {31793, 3813, 830, 15093, 31108, 1622, 4186, 16651};

std::unique_ptr<ServingEngine> MakeEngine(EngineOptions options = {}) {
  auto device = testing_support::CpuDevice();
  if (device == nullptr) return nullptr;
  auto model = LlamaModel::Open(kTextModel);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  if (!model.ok()) return nullptr;
  if (options.executor.kv_cache_tokens == 0) options.executor.kv_cache_tokens = 4096;
  auto engine = ServingEngine::Create(device, *model, options);
  EXPECT_TRUE(engine.ok()) << engine.status().ToString();
  return engine.ok() ? std::move(*engine) : nullptr;
}

struct Outcome {
  std::vector<int32_t> tokens;
  FinishReason finish = FinishReason::kNone;
  std::string error;
};

// Reads |stream| to its end (bounded: a hang fails the test instead of blocking it).
Outcome Drain(RequestStream& stream) {
  Outcome outcome;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (outcome.finish == FinishReason::kNone && std::chrono::steady_clock::now() < deadline) {
    StreamUpdate update = stream.Wait(milliseconds(100));
    outcome.tokens.insert(outcome.tokens.end(), update.tokens.begin(), update.tokens.end());
    outcome.finish = update.finish;
    outcome.error = update.error;
  }
  return outcome;
}

std::shared_ptr<RequestStream> SubmitOk(ServingEngine& engine, ServeRequest request) {
  auto stream = engine.Submit(std::move(request));
  EXPECT_TRUE(stream.ok()) << stream.status().ToString();
  return stream.ok() ? *stream : nullptr;
}

TEST(ServingEngine, GreedyTokensAreLlamaCppsAloneAndAmongConcurrentRequests) {
  auto engine = MakeEngine();
  ASSERT_NE(engine, nullptr);
  auto alone = SubmitOk(*engine, {kPromptA, 16, {}, {}, 0});
  ASSERT_NE(alone, nullptr);
  const Outcome first = Drain(*alone);
  EXPECT_EQ(first.tokens, kTokensA);
  EXPECT_EQ(first.finish, FinishReason::kLength);
  // Twelve clients at once, alternating the two prompts: continuous batching changes nothing.
  std::vector<std::thread> clients;
  std::vector<Outcome> outcomes(12);
  for (size_t i = 0; i < outcomes.size(); ++i) {
    clients.emplace_back([&, i] {
      const bool a = i % 2 == 0;
      auto stream = SubmitOk(*engine, {a ? kPromptA : kPromptB, a ? 16 : 8, {}, {}, 0});
      if (stream != nullptr) outcomes[i] = Drain(*stream);
    });
  }
  for (std::thread& client : clients) client.join();
  for (size_t i = 0; i < outcomes.size(); ++i) {
    EXPECT_EQ(outcomes[i].tokens, i % 2 == 0 ? kTokensA : kTokensB) << "client " << i;
    EXPECT_EQ(outcomes[i].finish, FinishReason::kLength) << "client " << i;
  }
  const ServingMetrics metrics = engine->Metrics();
  EXPECT_EQ(metrics.prompt_tokens, 7 * 6 + 6 * 3);
  EXPECT_EQ(metrics.generation_tokens, 7 * 16 + 6 * 8);
  EXPECT_EQ(metrics.request_success.at("length"), 13);
  EXPECT_EQ(metrics.time_to_first_token.count, 13u);
  EXPECT_EQ(metrics.inter_token_latency.count, uint64_t{7 * 15 + 6 * 7});
  EXPECT_EQ(metrics.e2e_request_latency.count, 13u);
  EXPECT_EQ(engine->in_flight(), 0);
}

TEST(ServingEngine, StopTokenAndCancelEndRequestsAndFreeTheirBlocks) {
  auto engine = MakeEngine();
  ASSERT_NE(engine, nullptr);
  // The second greedy token is a stop token: two tokens, finish "stop".
  auto stopped = SubmitOk(*engine, {kPromptA, 16, {}, {kTokensA[1]}, 0});
  ASSERT_NE(stopped, nullptr);
  const Outcome stop = Drain(*stopped);
  EXPECT_EQ(stop.tokens, (std::vector<int32_t>{kTokensA[0], kTokensA[1]}));
  EXPECT_EQ(stop.finish, FinishReason::kStop);
  // A long request cancelled after its first token, next to one that runs to its end.
  auto cancelled = SubmitOk(*engine, {kPromptA, 400, {}, {}, 0});
  auto other = SubmitOk(*engine, {kPromptB, 8, {}, {}, 0});
  ASSERT_NE(cancelled, nullptr);
  ASSERT_NE(other, nullptr);
  StreamUpdate update;
  for (int wait = 0; wait < 600 && update.tokens.empty(); ++wait) {
    update = cancelled->Wait(milliseconds(100));
    ASSERT_EQ(update.finish, FinishReason::kNone);
  }
  ASSERT_FALSE(update.tokens.empty());
  engine->Cancel(cancelled->id());
  EXPECT_EQ(Drain(*cancelled).finish, FinishReason::kCancelled);
  EXPECT_EQ(Drain(*other).tokens, kTokensB);
  for (int wait = 0; wait < 100 && engine->Metrics().kv_cache_usage > 0; ++wait) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  const ServingMetrics metrics = engine->Metrics();
  EXPECT_EQ(metrics.kv_cache_usage, 0.0);
  EXPECT_EQ(metrics.requests_running, 0);
  EXPECT_EQ(metrics.requests_cancelled, 1);
  EXPECT_EQ(metrics.request_success.at("stop"), 1);
  // Stop (a stop string seen by the client) ends a request as a success.
  auto stop_early = SubmitOk(*engine, {kPromptA, 400, {}, {}, 0});
  ASSERT_NE(stop_early, nullptr);
  update = StreamUpdate{};
  for (int wait = 0; wait < 600 && update.tokens.empty(); ++wait) {
    update = stop_early->Wait(milliseconds(100));
  }
  engine->Stop(stop_early->id());
  EXPECT_EQ(Drain(*stop_early).finish, FinishReason::kStop);
  EXPECT_EQ(engine->Metrics().request_success.at("stop"), 2);
  EXPECT_EQ(engine->Metrics().requests_cancelled, 1);
  engine->Cancel(12345);  // unknown: ignored
}

// A stop string the client finds only after the engine ended the request by its length (the
// engine runs ahead of the client's reading): the request counts as stopped, as the client's
// answer says, not as ended by length.
TEST(ServingEngine, AStopAfterTheLengthEndCountsTheRequestAsStopped) {
  auto engine = MakeEngine();
  ASSERT_NE(engine, nullptr);
  auto request = SubmitOk(*engine, {kPromptA, 4, {}, {}, 0});
  ASSERT_NE(request, nullptr);
  EXPECT_EQ(Drain(*request).finish, FinishReason::kLength);
  EXPECT_EQ(engine->Metrics().request_success.at("length"), 1);
  engine->Stop(request->id());
  ServingMetrics metrics = engine->Metrics();
  for (int wait = 0; wait < 300 && metrics.request_success["stop"] == 0; ++wait) {
    std::this_thread::sleep_for(milliseconds(10));
    metrics = engine->Metrics();
  }
  EXPECT_EQ(metrics.request_success["stop"], 1);
  EXPECT_EQ(metrics.request_success["length"], 0);
  engine->Stop(request->id());  // a second Stop changes nothing
  engine->Stop(54321);          // nor does one for an id never seen
  std::this_thread::sleep_for(milliseconds(50));
  metrics = engine->Metrics();
  EXPECT_EQ(metrics.request_success["stop"], 1);
  EXPECT_EQ(metrics.request_success["length"], 0);
}

TEST(ServingEngine, BadRequestsAreRefusedBeforeAnythingRuns) {
  auto engine = MakeEngine();
  ASSERT_NE(engine, nullptr);
  auto empty = engine->Submit({{}, 4, {}, {}, 0});
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
  auto outside = engine->Submit({{1, 32000}, 4, {}, {}, 0});
  EXPECT_EQ(outside.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(outside.status().message().find("32000"), std::string::npos);
  auto zero = engine->Submit({kPromptA, 0, {}, {}, 0});
  EXPECT_EQ(zero.status().code(), StatusCode::kInvalidArgument);
  auto too_long = engine->Submit({kPromptA, 600, {}, {}, 0});  // context 512
  EXPECT_EQ(too_long.status().code(), StatusCode::kOutOfRange);
  SamplingParams bad;
  bad.top_p = 2;
  EXPECT_EQ(engine->Submit({kPromptA, 4, bad, {}, 0}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(engine->in_flight(), 0);
  EXPECT_EQ(engine->Metrics().prompt_tokens, 0);
}

TEST(ServingEngine, FullQueueAndShutdownRefuseAndDrainCancelsWhatIsLeft) {
  EngineOptions options;
  options.scheduler.max_sequences = 1;
  options.max_waiting = 1;
  auto engine = MakeEngine(options);
  ASSERT_NE(engine, nullptr);
  std::vector<std::shared_ptr<RequestStream>> accepted;
  int refused = 0;
  for (int i = 0; i < 4; ++i) {
    auto stream = engine->Submit({kPromptA, 400, {}, {}, 0});
    if (stream.ok()) {
      accepted.push_back(*stream);
    } else {
      EXPECT_EQ(stream.status().code(), StatusCode::kUnavailable);
      EXPECT_NE(stream.status().message().find("queue is full"), std::string::npos);
      ++refused;
    }
  }
  EXPECT_GE(refused, 2);  // one running and one waiting at most
  EXPECT_EQ(engine->Metrics().requests_rejected, refused);
  engine->Shutdown(0);
  for (auto& stream : accepted) EXPECT_EQ(Drain(*stream).finish, FinishReason::kCancelled);
  auto late = engine->Submit({kPromptA, 4, {}, {}, 0});
  EXPECT_EQ(late.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(engine->in_flight(), 0);
}

TEST(ServingEngine, ShutdownLetsRequestsFinishWithinTheDrainTime) {
  auto engine = MakeEngine();
  ASSERT_NE(engine, nullptr);
  auto stream = SubmitOk(*engine, {kPromptB, 8, {}, {}, 0});
  ASSERT_NE(stream, nullptr);
  engine->Shutdown(30);
  const Outcome outcome = Drain(*stream);
  EXPECT_EQ(outcome.tokens, kTokensB);
  EXPECT_EQ(outcome.finish, FinishReason::kLength);
}

}  // namespace
}  // namespace hwinfer
