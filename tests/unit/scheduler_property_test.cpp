// scheduler_property_test.cpp — the scheduler driven by a fake executor over many seeded random
// workloads (random arrivals on a simulated clock, prompt/output lengths, priorities, small KV
// caches that force preemption, random cancellations) in all three batching modes, with paged and
// max_length KV reservation. After every
// step: the plan respects the token budget and max_sequences, the scheduler's and the KV
// manager's invariants hold, and every sequence's KV content is a prefix of prompt + outputs.
// After draining: every request that was not cancelled has exactly max_new_tokens outputs, equal
// to an oracle that runs the fake model one request at a time, every block is free, and no
// request was overtaken beyond the ageing bound. The fake model's next token is a hash of the
// whole context, so a token lost or repeated by a preemption changes every later output.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "hwinfer/scheduler.h"

namespace hwinfer {
namespace {

constexpr int32_t kBlockSize = 4;
constexpr double kStepS = 0.01;  // simulated time per step
constexpr int kMaxSteps = 200000;

// The fake model: next token = hash(context) % 1000 (FNV-1a over the token ids).
int32_t NextToken(const std::vector<int32_t>& context) {
  uint64_t h = 1469598103934665603ull;
  for (int32_t t : context) {
    h ^= static_cast<uint64_t>(static_cast<uint32_t>(t));
    h *= 1099511628211ull;
  }
  return static_cast<int32_t>(h % 1000);
}

std::vector<int32_t> OracleOutput(const Request& r) {
  std::vector<int32_t> context = r.prompt;
  std::vector<int32_t> out;
  for (int64_t i = 0; i < r.max_new_tokens; ++i) {
    out.push_back(NextToken(context));
    context.push_back(out.back());
  }
  return out;
}

struct Workload {
  std::vector<Request> requests;            // by arrival
  std::map<RequestId, double> cancel_at_s;  // requests to cancel at that time
  int32_t max_footprint_blocks = 0;         // blocks of the largest request
};

Workload MakeWorkload(uint64_t seed, int n, bool with_cancels) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Workload w;
  double t = 0;
  for (int i = 0; i < n; ++i) {
    t += std::uniform_real_distribution<double>(0, 0.04)(rng);
    Request r;
    r.id = 3 * i + uniform(0, 2);  // sparse, increasing ids
    r.prompt.resize(static_cast<size_t>(uniform(1, 30)));
    for (auto& tok : r.prompt) tok = uniform(0, 999);
    r.max_new_tokens = uniform(1, 16);
    r.priority = uniform(0, 3);
    r.arrival_s = t;
    const int64_t footprint = static_cast<int64_t>(r.prompt.size()) + r.max_new_tokens - 1;
    w.max_footprint_blocks = std::max(
        w.max_footprint_blocks, static_cast<int32_t>((footprint + kBlockSize - 1) / kBlockSize));
    if (with_cancels && uniform(0, 9) == 0) {
      w.cancel_at_s[r.id] = t + std::uniform_real_distribution<double>(0, 0.3)(rng);
    }
    w.requests.push_back(std::move(r));
  }
  return w;
}

struct RunResult {
  std::map<RequestId, std::vector<int32_t>> outputs;
  std::map<RequestId, double> first_scheduled_s;
  std::set<RequestId> cancelled;
  int64_t preemptions = 0;
  int64_t most_running = 0;  // the most requests running after any Schedule
  int steps = 0;
};

std::string Describe(const SchedulerOptions& o, int32_t num_blocks) {
  std::ostringstream s;
  s << BatchingModeName(o.mode) << " " << KvReservationName(o.kv_reservation)
    << " budget=" << o.max_batch_tokens << " max_sequences=" << o.max_sequences
    << " kv_blocks=" << num_blocks;
  return s.str();
}

// Drives |options| over |w| with a fake executor; checks everything after every step.
void RunWorkload(const SchedulerOptions& options, int32_t num_blocks, const Workload& w,
                 RunResult* result) {
  SCOPED_TRACE(Describe(options, num_blocks));
  KvBlockManager kv(num_blocks, kBlockSize);
  auto created = Scheduler::Create(options, &kv);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  Scheduler& s = **created;
  std::map<SequenceId, std::vector<int32_t>> context;  // what the fake executor's KV holds
  std::map<RequestId, const Request*> by_id;
  std::set<RequestId> tried_cancel;
  size_t next = 0;
  double now = 0;
  for (result->steps = 0;; ++result->steps) {
    for (; next < w.requests.size() && w.requests[next].arrival_s <= now; ++next) {
      ASSERT_TRUE(s.Add(w.requests[next]).ok());
      by_id[w.requests[next].id] = &w.requests[next];
    }
    for (const auto& [id, at] : w.cancel_at_s) {
      if (at > now || !s.Has(id) || tried_cancel.count(id) != 0) continue;
      tried_cancel.insert(id);
      const RequestState state = s.State(id);
      const Status st = s.Cancel(id);
      if (state == RequestState::kFinished) {  // too late: checked like the others
        ASSERT_EQ(st.code(), StatusCode::kNotFound);
        continue;
      }
      ASSERT_TRUE(st.ok()) << st.ToString();
      ASSERT_FALSE(kv.HasSequence(id));
      result->cancelled.insert(id);
    }
    const bool more = next < w.requests.size();
    if (!more && !s.HasUnfinished()) break;
    ASSERT_LT(result->steps, kMaxSteps)
        << "scheduler stuck: " << result->steps << " steps, " << s.num_waiting() << " waiting, "
        << s.num_running() << " running, " << kv.num_free_blocks() << " free blocks";

    const StepPlan plan = s.Schedule(now, more);
    result->most_running = std::max(result->most_running, s.num_running());
    // The plan's shape.
    ASSERT_LE(static_cast<int64_t>(plan.chunks.size()), options.max_sequences);
    ASSERT_EQ(plan.requests.size(), plan.chunks.size());
    ASSERT_EQ(plan.is_prefill.size(), plan.chunks.size());
    int64_t tokens = 0;
    std::set<SequenceId> seen;
    for (size_t i = 0; i < plan.chunks.size(); ++i) {
      const SequenceChunk& c = plan.chunks[i];
      ASSERT_FALSE(c.tokens.empty());
      ASSERT_EQ(c.sequence, plan.requests[i]);
      ASSERT_TRUE(seen.insert(c.sequence).second) << "sequence " << c.sequence << " twice";
      if (!plan.is_prefill[i]) {
        ASSERT_EQ(c.tokens.size(), 1u);
      }
      tokens += static_cast<int64_t>(c.tokens.size());
    }
    ASSERT_LE(tokens, options.max_batch_tokens);
    ASSERT_EQ(tokens, plan.prefill_tokens + plan.decode_tokens);
    for (RequestId id : plan.preempted) ASSERT_FALSE(kv.HasSequence(id));

    // The fake executor: append to the KV cache, then sample from the whole context.
    std::vector<int32_t> sampled;
    for (const SequenceChunk& c : plan.chunks) {
      if (!kv.HasSequence(c.sequence)) context[c.sequence].clear();
      auto appended = kv.Append(c.sequence, static_cast<int64_t>(c.tokens.size()));
      ASSERT_TRUE(appended.ok()) << appended.status().ToString();
      auto& ctx = context[c.sequence];
      ctx.insert(ctx.end(), c.tokens.begin(), c.tokens.end());
      ASSERT_EQ(static_cast<int64_t>(ctx.size()), kv.SequenceTokens(c.sequence));
      // The KV content is a prefix of prompt + outputs so far.
      std::vector<int32_t> stream = by_id.at(c.sequence)->prompt;
      const auto& out = s.Output(c.sequence);
      stream.insert(stream.end(), out.begin(), out.end());
      ASSERT_LE(ctx.size(), stream.size());
      ASSERT_TRUE(std::equal(ctx.begin(), ctx.end(), stream.begin()))
          << "sequence " << c.sequence << " fed tokens that are not its prompt + outputs";
      sampled.push_back(c.want_logits ? NextToken(ctx) : -1);
    }
    ASSERT_LE(kv.num_used_blocks(), kv.num_blocks());
    for (const TokenEvent& e : s.Complete(plan, sampled)) {
      ASSERT_EQ(e.index + 1, static_cast<int64_t>(s.Output(e.request).size()));
      if (e.finished) {
        ASSERT_FALSE(kv.HasSequence(e.request));
      }
    }
    const Status inv = s.CheckInvariants();
    ASSERT_TRUE(inv.ok()) << inv.ToString();
    now += kStepS;
  }
  // Drained: every block free, every count zero.
  ASSERT_EQ(kv.num_free_blocks(), kv.num_blocks());
  for (int32_t b = 0; b < kv.num_blocks(); ++b) ASSERT_EQ(kv.RefCount(b), 0) << "block " << b;
  ASSERT_TRUE(kv.CheckInvariants().ok());
  ASSERT_EQ(s.num_waiting(), 0);
  ASSERT_EQ(s.num_running(), 0);
  result->preemptions = s.num_preemptions();
  for (const Request& r : w.requests) {
    result->outputs[r.id] = s.Output(r.id);
    result->first_scheduled_s[r.id] = s.FirstScheduled(r.id);
    if (result->cancelled.count(r.id) != 0) {
      ASSERT_EQ(s.State(r.id), RequestState::kCancelled);
      continue;
    }
    ASSERT_EQ(s.State(r.id), RequestState::kFinished) << "request " << r.id;
    ASSERT_EQ(s.Output(r.id), OracleOutput(r)) << "request " << r.id;
  }
}

// The ageing bound (scheduler.h): a request X first scheduled strictly before a request R that
// was already waiting arrived at most (p_X - p_R) * ageing_s after R.
void CheckAgeingBound(const Workload& w, const RunResult& r, double ageing_s) {
  for (const Request& a : w.requests) {
    const double ta = r.first_scheduled_s.at(a.id);
    for (const Request& x : w.requests) {
      const double tx = r.first_scheduled_s.at(x.id);
      if (tx < 0 || x.arrival_s <= a.arrival_s) continue;
      const bool a_waited = ta < 0 ? r.cancelled.count(a.id) == 0 : tx < ta - 1e-9;
      if (!a_waited || a.arrival_s > tx) continue;
      EXPECT_LE(x.arrival_s - a.arrival_s, (x.priority - a.priority) * ageing_s + 1e-9)
          << "request " << x.id << " (priority " << x.priority << ", arrival " << x.arrival_s
          << ") overtook request " << a.id << " (priority " << a.priority << ", arrival "
          << a.arrival_s << ")";
    }
  }
}

SchedulerOptions RandomOptions(uint64_t seed, BatchingMode mode) {
  std::mt19937_64 rng(seed * 7919 + 17);
  const int64_t budgets[] = {1, 3, 8, 16, 64};
  const int64_t sequences[] = {1, 2, 4, 8};
  SchedulerOptions o;
  o.mode = mode;
  o.max_batch_tokens = budgets[rng() % 5];
  o.max_sequences = sequences[rng() % 4];
  o.max_model_len = 64;
  o.batch_timeout_s = 0.05;
  o.ageing_s = 0.05;
  return o;
}

class SchedulerProperty : public ::testing::TestWithParam<BatchingMode> {};

TEST_P(SchedulerProperty, RandomWorkloadsKeepEveryInvariantAndMatchTheOracle) {
  int64_t total_preemptions = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Workload w = MakeWorkload(seed, 60, /*with_cancels=*/true);
    const SchedulerOptions o = RandomOptions(seed, GetParam());
    // From the smallest cache that admits every request to a comfortable one.
    const int32_t blocks = w.max_footprint_blocks + static_cast<int32_t>(seed % 3) * 4;
    RunResult r;
    RunWorkload(o, blocks, w, &r);
    if (HasFatalFailure()) return;
    CheckAgeingBound(w, r, o.ageing_s);
    total_preemptions += r.preemptions;
  }
  EXPECT_GT(total_preemptions, 0) << "no workload forced a preemption: the caches are too big";
}

TEST_P(SchedulerProperty, OutputsAreTheSameWithAndWithoutPreemption) {
  for (uint64_t seed = 100; seed < 110; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Workload w = MakeWorkload(seed, 40, /*with_cancels=*/false);
    SchedulerOptions o = RandomOptions(seed, GetParam());
    o.max_batch_tokens = 32;
    o.max_sequences = 8;
    RunResult big;
    RunWorkload(o, 8 * 20, w, &big);  // 8 sequences of at most 64 tokens: never short of blocks
    if (HasFatalFailure()) return;
    EXPECT_EQ(big.preemptions, 0);
    RunResult small;
    RunWorkload(o, w.max_footprint_blocks, w, &small);
    if (HasFatalFailure()) return;
    EXPECT_GT(small.preemptions, 0) << "the small cache forced no preemption";
    EXPECT_EQ(big.outputs, small.outputs);
  }
}

TEST_P(SchedulerProperty, MaxLengthReservationNeverPreemptsAndRunsWhatTheCacheHolds) {
  int reached_the_cap = 0;  // runs whose batch grew to what the cache holds (small token budgets
                            // keep others below it: decodes take the whole budget)
  for (uint64_t seed = 200; seed < 230; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Workload w = MakeWorkload(seed, 60, /*with_cancels=*/true);
    SchedulerOptions o = RandomOptions(seed, GetParam());
    o.kv_reservation = KvReservation::kMaxLength;
    // max_model_len 64 is 16 blocks of 4: room for 1, 2 or 3 reservations, plus a few spare.
    const int32_t blocks = 16 * static_cast<int32_t>(1 + seed % 3) + static_cast<int32_t>(seed % 5);
    RunResult r;
    RunWorkload(o, blocks, w, &r);
    if (HasFatalFailure()) return;
    CheckAgeingBound(w, r, o.ageing_s);
    EXPECT_EQ(r.preemptions, 0);
    const int64_t cap = std::min<int64_t>(o.max_sequences, blocks / 16);
    EXPECT_LE(r.most_running, cap);
    reached_the_cap += r.most_running == cap ? 1 : 0;
  }
  EXPECT_GE(reached_the_cap, 10);
}

TEST_P(SchedulerProperty, ExtremeLimitsNeverGetStuck) {
  // Budget 1, one sequence, a cache exactly as big as the largest request.
  const Workload w = MakeWorkload(7, 30, /*with_cancels=*/true);
  SchedulerOptions o = RandomOptions(7, GetParam());
  for (int64_t budget : {int64_t{1}, int64_t{2}}) {
    for (int64_t sequences : {int64_t{1}, int64_t{64}}) {
      o.max_batch_tokens = budget;
      o.max_sequences = sequences;
      RunResult r;
      RunWorkload(o, w.max_footprint_blocks, w, &r);
      if (HasFatalFailure()) return;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(SchedulerAllModes, SchedulerProperty,
                         ::testing::Values(BatchingMode::kContinuous, BatchingMode::kDynamic,
                                           BatchingMode::kStatic),
                         [](const auto& param_info) {
                           return std::string(BatchingModeName(param_info.param));
                         });

}  // namespace
}  // namespace hwinfer
