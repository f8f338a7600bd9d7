// metrics_test.cpp — the metrics layer (metrics.h) against numbers worked out by hand in the
// comments: numpy-linear percentiles, per-request latencies (TTFT, TPOT, ITL, E2E, queue) of a
// small run with explicit token times, failed and one-token requests, goodput under SLOs,
// per-phase MBU/MFU from hand-made steps, the JSON round trip and its errors, CSV and tables.
#include "hwinfer/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

namespace hwinfer {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr double kTol = 1e-9;

void ExpectDistribution(const Distribution& d, double mean, double median, double std_dev,
                        double p90, double p99, double min, double max, int64_t count) {
  EXPECT_NEAR(d.mean, mean, kTol);
  EXPECT_NEAR(d.median, median, kTol);
  EXPECT_NEAR(d.std, std_dev, kTol);
  EXPECT_NEAR(d.p90, p90, kTol);
  EXPECT_NEAR(d.p99, p99, kTol);
  EXPECT_NEAR(d.min, min, kTol);
  EXPECT_NEAR(d.max, max, kTol);
  EXPECT_EQ(d.count, count);
}

RequestRecord Request(int64_t id, double arrival_s, double first_scheduled_s,
                      std::vector<double> token_times_s, int64_t input_tokens) {
  RequestRecord r;
  r.id = id;
  r.arrival_s = arrival_s;
  r.first_scheduled_s = first_scheduled_s;
  r.output_tokens = static_cast<int64_t>(token_times_s.size());
  r.token_times_s = std::move(token_times_s);
  r.input_tokens = input_tokens;
  return r;
}

// The hand-worked run (times in s):
//   r0: arrival 0.0, scheduled 0.1, tokens 0.5 0.7 1.0 1.2, 10 in, 2 preemptions
//       TTFT 500, E2E 1200, TPOT (1200-500)/3 = 700/3, ITL 200 300 200, queue 100 (ms)
//   r1: arrival 0.2, scheduled 0.2, tokens 0.6 1.0, 20 in
//       TTFT 400, E2E 800, TPOT 400, ITL 400, queue 0
//   r2: arrival 0.4, scheduled 0.9, token 1.5, 5 in (n_out = 1: no TPOT, no ITL)
//       TTFT 1100, E2E 1100, queue 500
//   r3: failed (rejected, never scheduled), arrival 0.3, 7 in
//   r4: failed (cancelled after one token at 0.3), arrival 0.1, scheduled 0.12, 1 preemption;
//       its TTFT of 200 ms must not show up anywhere
// Completed 3, failed 2, input 35, output 7; duration 0.0 -> 1.5 = 1.5 s.
std::vector<RequestRecord> HandRun() {
  std::vector<RequestRecord> requests;
  requests.push_back(Request(0, 0.0, 0.1, {0.5, 0.7, 1.0, 1.2}, 10));
  requests[0].preemptions = 2;
  requests.push_back(Request(1, 0.2, 0.2, {0.6, 1.0}, 20));
  requests.push_back(Request(2, 0.4, 0.9, {1.5}, 5));
  requests.push_back(Request(3, 0.3, -1, {}, 7));
  requests[3].failed = true;
  requests[3].error = "rejected";
  requests.push_back(Request(4, 0.1, 0.12, {0.3}, 9));
  requests[4].failed = true;
  requests[4].preemptions = 1;
  requests[4].error = "cancelled, by \"user\"";
  return requests;
}

StepRecord Step(double start_s, double end_s, int64_t prefill, int64_t decode, double bytes,
                double flops, int64_t kv_blocks, int64_t kv_tokens) {
  StepRecord s;
  s.start_s = start_s;
  s.end_s = end_s;
  s.prefill_tokens = prefill;
  s.decode_tokens = decode;
  s.sequences = decode + (prefill > 0 ? 1 : 0);
  s.bytes = bytes;
  s.flops = flops;
  s.kv_used_blocks = kv_blocks;
  s.kv_used_tokens = kv_tokens;
  return s;
}

// Hand-made steps (times are binary fractions so sums are exact):
//   s0 prefill 0     -> 0.125   100 tokens, 5e10 B, 2e12 FLOP, kv 10 blocks / 100 tokens
//   s1 decode  0.125 -> 0.15625   4 tokens, 1.6e10 B, 8e9 FLOP, kv 11 / 104
//   s2 decode  0.15625 -> 0.1875  4 tokens, 1.6e10 B, 8e9 FLOP, kv 12 / 108
//   s3 mixed   0.1875 -> 0.3125  50 + 4 tokens, 6e10 B, 1e12 FLOP, kv 16 / 158
// Peaks: spec 1e12 B/s and 1e14 FLOP/s, measured 8e11 B/s and unknown (0) FLOP/s.
std::vector<StepRecord> HandSteps() {
  return {Step(0, 0.125, 100, 0, 5e10, 2e12, 10, 100),
          Step(0.125, 0.15625, 0, 4, 1.6e10, 8e9, 11, 104),
          Step(0.15625, 0.1875, 0, 4, 1.6e10, 8e9, 12, 108),
          Step(0.1875, 0.3125, 50, 4, 6e10, 1e12, 16, 158)};
}

PeakRates HandPeaks() {
  PeakRates p;
  p.spec_bandwidth_bytes_per_s = 1e12;
  p.spec_flops = 1e14;
  p.measured_bandwidth_bytes_per_s = 8e11;
  p.measured_flops = 0;
  return p;
}

SummaryInputs HandInputs() {
  SummaryInputs in;
  in.requests = HandRun();
  in.steps = HandSteps();
  in.peaks = HandPeaks();
  in.slo.ttft_ms = 600;
  in.slo.tpot_ms = 300;
  in.kv_capacity_blocks = 64;
  in.kv_block_size = 16;
  return in;
}

// ---------------------------------------------------------------------------------------------
// Percentile and Summarize

TEST(MetricsDistribution, PercentileMatchesNumpyLinearOnOneToTen) {
  const std::vector<double> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  // numpy.percentile(range(1, 11), q): position (n-1) q/100 = 9q/100, interpolated.
  EXPECT_NEAR(Percentile(v, 0), 1.0, kTol);
  EXPECT_NEAR(Percentile(v, 25), 3.25, kTol);  // position 2.25
  EXPECT_NEAR(Percentile(v, 50), 5.5, kTol);   // position 4.5
  EXPECT_NEAR(Percentile(v, 90), 9.1, kTol);   // position 8.1
  EXPECT_NEAR(Percentile(v, 99), 9.91, kTol);  // position 8.91
  EXPECT_NEAR(Percentile(v, 100), 10.0, kTol);
}

TEST(MetricsDistribution, PercentileOfOneValueIsThatValueAndOfNoValuesIsZero) {
  EXPECT_EQ(Percentile({7}, 0), 7);
  EXPECT_EQ(Percentile({7}, 99), 7);
  EXPECT_EQ(Percentile({}, 50), 0);
}

TEST(MetricsDistribution, SummarizeOneToTenInAnyOrder) {
  // numpy: mean 5.5, median 5.5, std (ddof 0) sqrt(8.25), p90 9.1, p99 9.91.
  const Distribution d = Summarize({10, 3, 1, 7, 5, 2, 9, 4, 8, 6});
  ExpectDistribution(d, 5.5, 5.5, std::sqrt(8.25), 9.1, 9.91, 1, 10, 10);
}

TEST(MetricsDistribution, SummarizeOfNothingIsAllZeros) {
  ExpectDistribution(Summarize({}), 0, 0, 0, 0, 0, 0, 0, 0);
}

// ---------------------------------------------------------------------------------------------
// SummarizeRun: requests

TEST(MetricsRunSummary, CountsAndThroughputsOfHandRun) {
  const RunSummary s = SummarizeRun(HandInputs());
  EXPECT_EQ(s.completed, 3);
  EXPECT_EQ(s.failed, 2);
  EXPECT_EQ(s.total_input_tokens, 35);  // 10 + 20 + 5: failed requests do not count
  EXPECT_EQ(s.total_output_tokens, 7);  // 4 + 2 + 1
  EXPECT_NEAR(s.duration_s, 1.5, kTol);
  EXPECT_NEAR(s.request_throughput, 3 / 1.5, kTol);
  EXPECT_NEAR(s.output_throughput, 7 / 1.5, kTol);
  EXPECT_NEAR(s.total_token_throughput, 42 / 1.5, kTol);
  EXPECT_EQ(s.preemptions, 3);  // 2 (r0) + 1 (r4, failed requests included)
  EXPECT_EQ(s.kv_capacity_blocks, 64);
  EXPECT_EQ(s.kv_block_size, 16);
}

TEST(MetricsRunSummary, TtftOfHandRun) {
  // [400, 500, 1100]: mean 2000/3; median 500; p90 500 + 0.8*600 = 980; p99 500 + 0.98*600 =
  // 1088; variance (400^2 + 500^2 + 1100^2)/3 - (2000/3)^2 = 860000/9.
  ExpectDistribution(SummarizeRun(HandInputs()).ttft_ms, 2000.0 / 3, 500, std::sqrt(860000.0) / 3,
                     980, 1088, 400, 1100, 3);
}

TEST(MetricsRunSummary, TpotOfHandRunSkipsTheOneTokenRequest) {
  // [700/3, 400] (r2 has one token): mean = median = 950/3; std = half the gap = 250/3;
  // p90 700/3 + 0.9*500/3 = 700/3 + 150; p99 700/3 + 0.99*500/3 = 700/3 + 165.
  ExpectDistribution(SummarizeRun(HandInputs()).tpot_ms, 950.0 / 3, 950.0 / 3, 250.0 / 3,
                     700.0 / 3 + 150, 700.0 / 3 + 165, 700.0 / 3, 400, 2);
}

TEST(MetricsRunSummary, ItlOfHandRunPoolsEveryGap) {
  // [200, 300, 200] from r0 and [400] from r1, none from r2: sorted [200, 200, 300, 400];
  // mean 275; median (position 1.5) 250; p90 (2.7) 370; p99 (2.97) 397;
  // variance (75^2 + 75^2 + 25^2 + 125^2)/4 = 6875.
  ExpectDistribution(SummarizeRun(HandInputs()).itl_ms, 275, 250, std::sqrt(6875.0), 370, 397, 200,
                     400, 4);
}

TEST(MetricsRunSummary, E2elOfHandRun) {
  // [800, 1100, 1200]: mean 3100/3; median 1100; p90 1100 + 0.8*100 = 1180; p99 1198;
  // variance (800^2 + 1100^2 + 1200^2)/3 - (3100/3)^2 = 260000/9.
  ExpectDistribution(SummarizeRun(HandInputs()).e2el_ms, 3100.0 / 3, 1100, std::sqrt(260000.0) / 3,
                     1180, 1198, 800, 1200, 3);
}

TEST(MetricsRunSummary, QueueOfHandRun) {
  // [0, 100, 500] (r4, failed, excluded): mean 200; median 100; p90 100 + 0.8*400 = 420;
  // p99 100 + 0.98*400 = 492; variance (200^2 + 100^2 + 300^2)/3 = 140000/3.
  ExpectDistribution(SummarizeRun(HandInputs()).queue_ms, 200, 100, std::sqrt(140000.0 / 3), 420,
                     492, 0, 500, 3);
}

TEST(MetricsRunSummary, QueueExcludesRequestsNeverScheduled) {
  SummaryInputs in = HandInputs();
  in.requests[2].first_scheduled_s = -1;  // r2: queue 500 drops out -> [0, 100]
  const RunSummary s = SummarizeRun(in);
  EXPECT_EQ(s.queue_ms.count, 2);
  EXPECT_NEAR(s.queue_ms.mean, 50, kTol);
  EXPECT_EQ(s.ttft_ms.count, 3);  // still a completed request
}

TEST(MetricsRunSummary, GoodputCountsRequestsMeetingEverySetSlo) {
  SummaryInputs in = HandInputs();
  // TTFT <= 600 and TPOT <= 300: r0 (500, 700/3) yes; r1 (400, 400) no; r2 (TTFT 1100) no.
  EXPECT_NEAR(SummarizeRun(in).request_goodput, 1 / 1.5, kTol);
  // TPOT <= 300 only: r0 yes, r1 no, r2 yes (one token: the TPOT SLO counts as met).
  in.slo = SloTargets{};
  in.slo.tpot_ms = 300;
  EXPECT_NEAR(SummarizeRun(in).request_goodput, 2 / 1.5, kTol);
  // E2E <= 1150: r0 (1200) no, r1 (800) yes, r2 (1100) yes.
  in.slo = SloTargets{};
  in.slo.e2el_ms = 1150;
  EXPECT_NEAR(SummarizeRun(in).request_goodput, 2 / 1.5, kTol);
  // No SLO: goodput is 0, not the request throughput.
  in.slo = SloTargets{};
  EXPECT_EQ(SummarizeRun(in).request_goodput, 0);
}

TEST(MetricsRunSummary, SloValidateNamesTheNegativeValue) {
  EXPECT_TRUE(SloTargets{}.Validate().ok());
  SloTargets slo;
  slo.tpot_ms = -1;
  const Status status = slo.Validate();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("tpot_ms"));
  slo = SloTargets{};
  slo.e2el_ms = std::nan("");
  EXPECT_THAT(slo.Validate().message(), HasSubstr("e2el_ms"));
}

TEST(MetricsRunSummary, EmptyInputGivesZeros) {
  const RunSummary s = SummarizeRun(SummaryInputs{});
  EXPECT_EQ(s.completed, 0);
  EXPECT_EQ(s.failed, 0);
  EXPECT_EQ(s.duration_s, 0);
  EXPECT_EQ(s.request_throughput, 0);
  EXPECT_EQ(s.output_throughput, 0);
  EXPECT_EQ(s.total_token_throughput, 0);
  EXPECT_EQ(s.request_goodput, 0);
  for (const Distribution* d : {&s.ttft_ms, &s.tpot_ms, &s.itl_ms, &s.e2el_ms, &s.queue_ms}) {
    ExpectDistribution(*d, 0, 0, 0, 0, 0, 0, 0, 0);
  }
  EXPECT_EQ(s.steps, 0);
  EXPECT_EQ(s.all.steps, 0);
  EXPECT_EQ(s.all.mbu_spec, 0);
  EXPECT_EQ(s.mean_kv_blocks, 0);
  EXPECT_EQ(s.peak_kv_blocks, 0);
}

TEST(MetricsRunSummary, OnlyFailedRequestsGiveZeroDurationAndLatencies) {
  SummaryInputs in;
  in.requests = HandRun();
  in.requests.erase(in.requests.begin(), in.requests.begin() + 3);  // r3 and r4, both failed
  in.slo.ttft_ms = 1000;
  const RunSummary s = SummarizeRun(in);
  EXPECT_EQ(s.completed, 0);
  EXPECT_EQ(s.failed, 2);
  EXPECT_EQ(s.duration_s, 0);
  EXPECT_EQ(s.request_goodput, 0);
  EXPECT_EQ(s.ttft_ms.count, 0);
  EXPECT_EQ(s.total_input_tokens, 0);
}

// ---------------------------------------------------------------------------------------------
// SummarizeRun: steps, phases, KV

TEST(MetricsRunSummary, StepPhaseFollowsTokenCounts) {
  EXPECT_EQ(Step(0, 1, 5, 0, 0, 0, 0, 0).phase(), StepPhase::kPrefill);
  EXPECT_EQ(Step(0, 1, 0, 5, 0, 0, 0, 0).phase(), StepPhase::kDecode);
  EXPECT_EQ(Step(0, 1, 5, 5, 0, 0, 0, 0).phase(), StepPhase::kMixed);
  EXPECT_EQ(Step(0, 1, 0, 0, 0, 0, 0, 0).phase(), StepPhase::kDecode);  // no tokens: decode
  EXPECT_STREQ(StepPhaseName(StepPhase::kPrefill), "prefill");
  EXPECT_STREQ(StepPhaseName(StepPhase::kDecode), "decode");
  EXPECT_STREQ(StepPhaseName(StepPhase::kMixed), "mixed");
}

TEST(MetricsRunSummary, PhaseMbuAndMfuOfHandSteps) {
  const RunSummary s = SummarizeRun(HandInputs());
  EXPECT_EQ(s.steps, 4);
  // prefill: 0.125 s, 5e10 B -> 4e11 B/s: MBU 0.4 spec, 0.5 measured;
  //          2e12 FLOP -> 1.6e13 FLOP/s: MFU 0.16 spec, 0 measured (peak unknown).
  EXPECT_EQ(s.prefill.steps, 1);
  EXPECT_NEAR(s.prefill.time_s, 0.125, kTol);
  EXPECT_EQ(s.prefill.tokens, 100);
  EXPECT_NEAR(s.prefill.bytes, 5e10, 1e-3);
  EXPECT_NEAR(s.prefill.flops, 2e12, 1e-3);
  EXPECT_NEAR(s.prefill.mbu_spec, 0.4, kTol);
  EXPECT_NEAR(s.prefill.mbu_measured, 0.5, kTol);
  EXPECT_NEAR(s.prefill.mfu_spec, 0.16, kTol);
  EXPECT_EQ(s.prefill.mfu_measured, 0);
  // decode: 2 steps, 0.0625 s, 8 tokens, 3.2e10 B -> 5.12e11 B/s: MBU 0.512 / 0.64;
  //         1.6e10 FLOP -> 2.56e11 FLOP/s: MFU 0.00256.
  EXPECT_EQ(s.decode.steps, 2);
  EXPECT_NEAR(s.decode.time_s, 0.0625, kTol);
  EXPECT_EQ(s.decode.tokens, 8);
  EXPECT_NEAR(s.decode.mbu_spec, 0.512, kTol);
  EXPECT_NEAR(s.decode.mbu_measured, 0.64, kTol);
  EXPECT_NEAR(s.decode.mfu_spec, 0.00256, kTol);
  // mixed: 0.125 s, 54 tokens, 6e10 B -> 4.8e11 B/s: MBU 0.48 / 0.6; 1e12 FLOP -> MFU 0.08.
  EXPECT_EQ(s.mixed.steps, 1);
  EXPECT_EQ(s.mixed.tokens, 54);
  EXPECT_NEAR(s.mixed.mbu_spec, 0.48, kTol);
  EXPECT_NEAR(s.mixed.mbu_measured, 0.6, kTol);
  EXPECT_NEAR(s.mixed.mfu_spec, 0.08, kTol);
  // all: 4 steps, 0.3125 s, 162 tokens, 1.42e11 B -> 4.544e11 B/s: MBU 0.4544 / 0.568;
  //      3.016e12 FLOP -> 9.6512e12 FLOP/s: MFU 0.096512.
  EXPECT_EQ(s.all.steps, 4);
  EXPECT_NEAR(s.all.time_s, 0.3125, kTol);
  EXPECT_EQ(s.all.tokens, 162);
  EXPECT_NEAR(s.all.mbu_spec, 0.4544, kTol);
  EXPECT_NEAR(s.all.mbu_measured, 0.568, kTol);
  EXPECT_NEAR(s.all.mfu_spec, 0.096512, kTol);
  EXPECT_EQ(s.all.mfu_measured, 0);
}

TEST(MetricsRunSummary, UnknownPeaksGiveZeroUtilisation) {
  SummaryInputs in = HandInputs();
  in.peaks = PeakRates{};
  const RunSummary s = SummarizeRun(in);
  EXPECT_EQ(s.all.mbu_spec, 0);
  EXPECT_EQ(s.all.mbu_measured, 0);
  EXPECT_EQ(s.all.mfu_spec, 0);
  EXPECT_EQ(s.all.mfu_measured, 0);
  EXPECT_NEAR(s.all.bytes, 1.42e11, 1e-3);  // the counts are still there
}

TEST(MetricsRunSummary, KvUsagePeakAndMeanOverSteps) {
  const RunSummary s = SummarizeRun(HandInputs());
  EXPECT_EQ(s.peak_kv_blocks, 16);
  EXPECT_EQ(s.peak_kv_tokens, 158);
  EXPECT_NEAR(s.mean_kv_blocks, (10 + 11 + 12 + 16) / 4.0, kTol);      // 12.25
  EXPECT_NEAR(s.mean_kv_tokens, (100 + 104 + 108 + 158) / 4.0, kTol);  // 117.5
}

// ---------------------------------------------------------------------------------------------
// JSON

void ExpectDistributionsEqual(const Distribution& a, const Distribution& b) {
  EXPECT_EQ(a.mean, b.mean);
  EXPECT_EQ(a.median, b.median);
  EXPECT_EQ(a.std, b.std);
  EXPECT_EQ(a.p90, b.p90);
  EXPECT_EQ(a.p99, b.p99);
  EXPECT_EQ(a.min, b.min);
  EXPECT_EQ(a.max, b.max);
  EXPECT_EQ(a.count, b.count);
}

void ExpectPhasesEqual(const PhaseMetrics& a, const PhaseMetrics& b) {
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.time_s, b.time_s);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.flops, b.flops);
  EXPECT_EQ(a.mbu_spec, b.mbu_spec);
  EXPECT_EQ(a.mbu_measured, b.mbu_measured);
  EXPECT_EQ(a.mfu_spec, b.mfu_spec);
  EXPECT_EQ(a.mfu_measured, b.mfu_measured);
}

void ExpectSummariesEqual(const RunSummary& a, const RunSummary& b) {
  EXPECT_EQ(a.completed, b.completed);
  EXPECT_EQ(a.failed, b.failed);
  EXPECT_EQ(a.duration_s, b.duration_s);
  EXPECT_EQ(a.total_input_tokens, b.total_input_tokens);
  EXPECT_EQ(a.total_output_tokens, b.total_output_tokens);
  EXPECT_EQ(a.request_throughput, b.request_throughput);
  EXPECT_EQ(a.output_throughput, b.output_throughput);
  EXPECT_EQ(a.total_token_throughput, b.total_token_throughput);
  EXPECT_EQ(a.request_goodput, b.request_goodput);
  ExpectDistributionsEqual(a.ttft_ms, b.ttft_ms);
  ExpectDistributionsEqual(a.tpot_ms, b.tpot_ms);
  ExpectDistributionsEqual(a.itl_ms, b.itl_ms);
  ExpectDistributionsEqual(a.e2el_ms, b.e2el_ms);
  ExpectDistributionsEqual(a.queue_ms, b.queue_ms);
  ExpectPhasesEqual(a.prefill, b.prefill);
  ExpectPhasesEqual(a.decode, b.decode);
  ExpectPhasesEqual(a.mixed, b.mixed);
  ExpectPhasesEqual(a.all, b.all);
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.preemptions, b.preemptions);
  EXPECT_EQ(a.peak_kv_blocks, b.peak_kv_blocks);
  EXPECT_EQ(a.peak_kv_tokens, b.peak_kv_tokens);
  EXPECT_EQ(a.mean_kv_blocks, b.mean_kv_blocks);
  EXPECT_EQ(a.mean_kv_tokens, b.mean_kv_tokens);
  EXPECT_EQ(a.kv_capacity_blocks, b.kv_capacity_blocks);
  EXPECT_EQ(a.kv_block_size, b.kv_block_size);
}

TEST(MetricsJson, UsesVllmKeyNames) {
  const RunSummary s = SummarizeRun(HandInputs());
  const nlohmann::json json = SummaryToJson(s);
  for (const char* key :
       {"duration", "completed", "failed", "total_input_tokens", "total_output_tokens",
        "request_throughput", "request_goodput", "output_throughput", "total_token_throughput",
        "preemptions", "steps", "peak_kv_blocks", "peak_kv_tokens", "mean_kv_blocks",
        "mean_kv_tokens", "kv_capacity_blocks", "kv_block_size"}) {
    EXPECT_TRUE(json.contains(key)) << key;
  }
  for (const std::string metric : {"ttft", "tpot", "itl", "e2el", "queue"}) {
    for (const std::string stat : {"mean", "median", "std", "p90", "p99"}) {
      EXPECT_TRUE(json.contains(stat + "_" + metric + "_ms")) << stat << "_" << metric;
    }
  }
  EXPECT_EQ(json["completed"], 3);
  EXPECT_DOUBLE_EQ(json["duration"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(json["median_ttft_ms"].get<double>(), 500);
  EXPECT_DOUBLE_EQ(json["p99_itl_ms"].get<double>(), 397);
  for (const char* phase : {"prefill", "decode", "mixed", "all"}) {
    ASSERT_TRUE(json["phases"].contains(phase)) << phase;
    for (const char* key : {"steps", "time_s", "tokens", "bytes", "flops", "mbu_spec",
                            "mbu_measured", "mfu_spec", "mfu_measured"}) {
      EXPECT_TRUE(json["phases"][phase].contains(key)) << phase << "." << key;
    }
  }
  EXPECT_EQ(json["phases"]["decode"]["steps"], 2);
  EXPECT_DOUBLE_EQ(json["phases"]["prefill"]["mbu_spec"].get<double>(), 0.4);
}

TEST(MetricsJson, RoundTripThroughTextIsExact) {
  const RunSummary s = SummarizeRun(HandInputs());
  const auto parsed = nlohmann::json::parse(SummaryToJson(s).dump(2));
  const StatusOr<RunSummary> back = SummaryFromJson(parsed);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSummariesEqual(*back, s);
}

TEST(MetricsJson, MissingKeyIsInvalidArgumentNamingTheKey) {
  nlohmann::json json = SummaryToJson(SummarizeRun(HandInputs()));
  json.erase("p99_itl_ms");
  StatusOr<RunSummary> back = SummaryFromJson(json);
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(back.status().message(), HasSubstr("p99_itl_ms"));

  json = SummaryToJson(SummarizeRun(HandInputs()));
  json["phases"]["decode"].erase("mbu_spec");
  back = SummaryFromJson(json);
  ASSERT_FALSE(back.ok());
  EXPECT_THAT(back.status().message(), HasSubstr("phases.decode.mbu_spec"));

  json = SummaryToJson(SummarizeRun(HandInputs()));
  json.erase("phases");
  back = SummaryFromJson(json);
  ASSERT_FALSE(back.ok());
  EXPECT_THAT(back.status().message(), HasSubstr("phases"));
}

TEST(MetricsJson, WrongTypesAreInvalidArgument) {
  nlohmann::json json = SummaryToJson(SummarizeRun(HandInputs()));
  json["completed"] = "three";
  StatusOr<RunSummary> back = SummaryFromJson(json);
  ASSERT_FALSE(back.ok());
  EXPECT_THAT(back.status().message(), HasSubstr("completed"));

  json = SummaryToJson(SummarizeRun(HandInputs()));
  json["steps"] = 2.5;  // a count must be whole
  back = SummaryFromJson(json);
  ASSERT_FALSE(back.ok());
  EXPECT_THAT(back.status().message(), HasSubstr("steps"));

  json = SummaryToJson(SummarizeRun(HandInputs()));
  json["completed"] = 3.0;  // a whole float is accepted for a count
  back = SummaryFromJson(json);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->completed, 3);

  EXPECT_FALSE(SummaryFromJson(nlohmann::json::array()).ok());
}

// ---------------------------------------------------------------------------------------------
// CSV and tables

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(MetricsTables, RequestsCsvHasHeaderAndOneRowPerRequest) {
  const std::vector<std::string> lines = Lines(RequestsCsv(HandRun()));
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[0],
            "id,line,arrival_s,first_scheduled_s,input_tokens,output_tokens,preemptions,failed,"
            "ttft_ms,tpot_ms,e2el_ms,queue_ms,error");
  EXPECT_EQ(lines[2], "1,0,0.2,0.2,20,2,0,0,400,400,800,0,");  // r1 (drawn: line 0)
  // r3: never scheduled, no tokens -> empty latency columns; r4: the error is quoted.
  EXPECT_EQ(lines[4], "3,0,0.3,-1,7,0,0,1,,,,,rejected");
  EXPECT_THAT(lines[5], HasSubstr(",\"cancelled, by \"\"user\"\"\""));
  EXPECT_EQ(Lines(RequestsCsv({})).size(), 1u);
}

TEST(MetricsTables, StepsCsvHasHeaderAndOneRowPerStep) {
  const std::vector<std::string> lines = Lines(StepsCsv(HandSteps()));
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0],
            "step,start_s,end_s,phase,prefill_tokens,decode_tokens,sequences,bytes,flops,"
            "kv_used_blocks,kv_used_tokens,preemptions");
  EXPECT_THAT(lines[1], HasSubstr(",prefill,100,0,"));
  EXPECT_THAT(lines[2], HasSubstr(",decode,0,4,"));
  EXPECT_THAT(lines[4], HasSubstr(",mixed,50,4,"));
}

// The line of |table| that starts with |label|, or "" when none does.
std::string LineStartingWith(const std::string& table, const std::string& label) {
  for (const std::string& line : Lines(table)) {
    if (line.rfind(label, 0) == 0) return line;
  }
  return "";
}

TEST(MetricsTables, SummaryTableShowsTheKeyNumbers) {
  const std::string table = SummaryTable(SummarizeRun(HandInputs()));
  EXPECT_THAT(table, HasSubstr("============ Serving Benchmark Result ============"));
  EXPECT_THAT(LineStartingWith(table, "Successful requests:"), HasSubstr(" 3"));
  EXPECT_THAT(LineStartingWith(table, "Failed requests:"), HasSubstr(" 2"));
  EXPECT_THAT(LineStartingWith(table, "Benchmark duration (s):"), HasSubstr("1.50"));
  EXPECT_THAT(LineStartingWith(table, "Request throughput (req/s):"), HasSubstr("2.00"));
  EXPECT_THAT(LineStartingWith(table, "Request goodput (req/s):"), HasSubstr("0.67"));
  EXPECT_THAT(LineStartingWith(table, "Output token throughput (tok/s):"), HasSubstr("4.67"));
  EXPECT_THAT(LineStartingWith(table, "Total Token throughput (tok/s):"), HasSubstr("28.00"));
  EXPECT_THAT(LineStartingWith(table, "Mean TTFT (ms):"), HasSubstr("666.67"));
  EXPECT_THAT(LineStartingWith(table, "P99 TTFT (ms):"), HasSubstr("1088.00"));
  EXPECT_THAT(LineStartingWith(table, "Median TPOT (ms):"), HasSubstr("316.67"));
  EXPECT_THAT(LineStartingWith(table, "P90 ITL (ms):"), HasSubstr("370.00"));
  EXPECT_THAT(LineStartingWith(table, "Mean E2EL (ms):"), HasSubstr("1033.33"));
  EXPECT_THAT(LineStartingWith(table, "P90 Queue (ms):"), HasSubstr("420.00"));
  // prefill: MBU 40 % spec, 50 % measured, MFU 16 % spec, 0 % measured.
  const std::string prefill = LineStartingWith(table, "prefill");
  EXPECT_THAT(prefill, HasSubstr("40.00"));
  EXPECT_THAT(prefill, HasSubstr("50.00"));
  EXPECT_THAT(prefill, HasSubstr("16.00"));
  EXPECT_THAT(LineStartingWith(table, "decode"), HasSubstr("51.20"));
  EXPECT_THAT(LineStartingWith(table, "all"), HasSubstr("45.44"));
  EXPECT_THAT(LineStartingWith(table, "Peak KV blocks used:"), HasSubstr("16"));
  EXPECT_THAT(LineStartingWith(table, "Mean KV blocks used (per step):"), HasSubstr("12.25"));
  EXPECT_THAT(LineStartingWith(table, "Preemptions:"), HasSubstr("3"));
  // Labels and values line up in columns, as in vLLM's printout.
  EXPECT_EQ(LineStartingWith(table, "Mean TTFT (ms):").find("666.67"),
            LineStartingWith(table, "Successful requests:").find('3'));
}

TEST(MetricsTables, SummaryMarkdownShowsTheKeyNumbers) {
  const std::string md = SummaryMarkdown(SummarizeRun(HandInputs()));
  EXPECT_THAT(md, HasSubstr("| Successful requests | 3 |"));
  EXPECT_THAT(md, HasSubstr("| Request throughput (req/s) | 2.00 |"));
  EXPECT_THAT(md, HasSubstr("| TTFT | 666.67 | 500.00 |"));
  EXPECT_THAT(md, HasSubstr("| ITL | 275.00 | 250.00 |"));
  // The hand run gives no measured FLOP/s peak: that column shows "-", not a 0% utilisation.
  EXPECT_THAT(md, HasSubstr("| prefill | 1 | 0.125 | 100 | 40.00 | 50.00 | 16.00 | - |"));
}

// A hand run whose prefill does 1.6e13 FLOP/s against a measured f32 matmul peak of 1e13: the
// table shows 160.00 and, in the same section, the peaks and the warning naming the one exceeded.
SummaryInputs PrefillAboveMeasuredPeak() {
  SummaryInputs in = HandInputs();
  in.peaks.measured_flops = 1e13;
  in.peaks.flops_weight_dtype = HWINFER_DTYPE_F32;
  in.peaks.measured_flops_probe = {512, 512, 512};
  return in;
}

TEST(MetricsTables, SummaryTableNamesItsPeaksAndWarnsAboveOneHundredPercent) {
  const std::string table = SummaryTable(SummarizeRun(PrefillAboveMeasuredPeak()));
  EXPECT_THAT(LineStartingWith(table, "prefill"), HasSubstr("160.00"));
  EXPECT_EQ(LineStartingWith(table, "MFU against:"),
            "MFU against: spec f32 peak 100.00 TFLOP/s; measured f32 matmul peak 10.00 TFLOP/s "
            "(probe at m=512 n=512 k=512)");
  EXPECT_EQ(LineStartingWith(table, "MBU against:"),
            "MBU against: spec bandwidth 1000.0 GB/s; measured read bandwidth 800.0 GB/s (given, "
            "not probed)");
  const std::string warning = LineStartingWith(table, "warning:");
  EXPECT_THAT(warning, HasSubstr("prefill MFU 160% exceeds 100% of the measured f32 matmul peak "
                                 "10.00 TFLOP/s (probe at m=512 n=512 k=512): "));
  // Only the figure above 100% is named (mixed is 80%, all 96.5%).
  EXPECT_THAT(warning, Not(HasSubstr("mixed")));
  EXPECT_THAT(warning, Not(HasSubstr("all MFU")));
  // The warning sits in the MBU / MFU section, before the KV cache one.
  EXPECT_LT(table.find("warning:"), table.find("KV Cache"));
}

TEST(MetricsTables, SummaryTableWithEveryFigureUnderItsPeakHasNoWarning) {
  const std::string table = SummaryTable(SummarizeRun(HandInputs()));
  EXPECT_EQ(table.find("warning"), std::string::npos) << table;
  EXPECT_THAT(LineStartingWith(table, "MFU against:"),
              HasSubstr("measured f32 matmul peak unknown"));
}

TEST(MetricsTables, SummaryMarkdownNamesItsPeaksAndWarnsAboveOneHundredPercent) {
  const std::string md = SummaryMarkdown(SummarizeRun(PrefillAboveMeasuredPeak()));
  EXPECT_THAT(md, HasSubstr("| prefill | 1 | 0.125 | 100 | 40.00 | 50.00 | 16.00 | 160.00 |"));
  EXPECT_THAT(md, HasSubstr("MFU against: spec f32 peak 100.00 TFLOP/s; measured f32 matmul peak"));
  EXPECT_THAT(md, HasSubstr("> **Warning:** prefill MFU 160% exceeds 100% of the measured f32 "
                            "matmul peak 10.00 TFLOP/s"));
}

TEST(MetricsRunSummary, KeepsThePeaksItsUtilisationsAreAgainst) {
  const RunSummary s = SummarizeRun(PrefillAboveMeasuredPeak());
  EXPECT_EQ(s.peaks.measured_flops, 1e13);
  EXPECT_EQ(s.peaks.measured_flops_probe.k, 512);
  EXPECT_EQ(s.peaks.spec_bandwidth_bytes_per_s, 1e12);
}

}  // namespace
}  // namespace hwinfer
