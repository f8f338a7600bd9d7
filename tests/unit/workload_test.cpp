// workload_test.cpp — pins the benchmark workload generator (hwinfer/workload.h): one seed gives
// one workload, arrival processes have the documented statistics (loose bounds, fixed seeds),
// length distributions stay in bounds, and JSONL files and bad specs fail naming file:line / the
// field.
#include "hwinfer/workload.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "temp_folder_test.h"

namespace hwinfer {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr int64_t kVocab = 512;

std::vector<WorkloadRequest> Generate(const WorkloadSpec& spec) {
  StatusOr<std::vector<WorkloadRequest>> requests = GenerateWorkload(spec, kVocab);
  EXPECT_TRUE(requests.ok()) << requests.status().message();
  return requests.ok() ? *requests : std::vector<WorkloadRequest>{};
}

WorkloadSpec VariedSpec(uint64_t seed) {
  WorkloadSpec spec;
  spec.num_requests = 64;
  spec.arrivals = WorkloadSpec::Arrivals::kPoisson;
  spec.rate = 10;
  spec.input = {LengthDistribution::Kind::kUniform, 0, 8, 300, 0, 0};
  spec.output = {LengthDistribution::Kind::kNormal, 0, 1, 100, 50, 20};
  spec.seed = seed;
  return spec;
}

// Inter-arrival gaps (seconds) of a sorted workload.
std::vector<double> Gaps(const std::vector<WorkloadRequest>& requests) {
  std::vector<double> gaps;
  for (size_t i = 1; i < requests.size(); ++i) {
    gaps.push_back(requests[i].arrival_s - requests[i - 1].arrival_s);
  }
  return gaps;
}

double Mean(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

// Squared coefficient of variation: variance / mean^2.
double Cv2(const std::vector<double>& values) {
  const double mean = Mean(values);
  double sq = 0;
  for (double v : values) sq += (v - mean) * (v - mean);
  return sq / static_cast<double>(values.size()) / (mean * mean);
}

TEST(WorkloadTest, SameSeedGivesTheSameWorkload) {
  const std::vector<WorkloadRequest> a = Generate(VariedSpec(7));
  const std::vector<WorkloadRequest> b = Generate(VariedSpec(7));
  ASSERT_EQ(a.size(), 64u);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].id, static_cast<int64_t>(i));
    EXPECT_EQ(a[i].arrival_s, b[i].arrival_s);
    EXPECT_EQ(a[i].input_len, b[i].input_len);
    EXPECT_EQ(a[i].output_len, b[i].output_len);
    EXPECT_EQ(a[i].prompt, b[i].prompt);
    EXPECT_EQ(static_cast<int64_t>(a[i].prompt.size()), a[i].input_len);
    for (int32_t token : a[i].prompt) {
      EXPECT_GE(token, 1);
      EXPECT_LT(token, kVocab);
    }
  }
}

TEST(WorkloadTest, DifferentSeedsGiveDifferentWorkloads) {
  const std::vector<WorkloadRequest> a = Generate(VariedSpec(1));
  const std::vector<WorkloadRequest> b = Generate(VariedSpec(2));
  ASSERT_EQ(a.size(), b.size());
  int differing_arrivals = 0, differing_lengths = 0, differing_prompts = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    differing_arrivals += a[i].arrival_s != b[i].arrival_s;
    differing_lengths += a[i].input_len != b[i].input_len || a[i].output_len != b[i].output_len;
    differing_prompts += a[i].prompt != b[i].prompt;
  }
  EXPECT_GT(differing_arrivals, 32);
  EXPECT_GT(differing_lengths, 32);
  EXPECT_GT(differing_prompts, 32);
}

TEST(WorkloadTest, OfflineArrivalsAreAllAtZeroInOrder) {
  WorkloadSpec spec;
  spec.num_requests = 10;
  const std::vector<WorkloadRequest> requests = Generate(spec);
  ASSERT_EQ(requests.size(), 10u);
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(requests[i].arrival_s, 0.0);
    EXPECT_EQ(requests[i].id, static_cast<int64_t>(i));
    EXPECT_EQ(requests[i].input_len, 128);
    EXPECT_EQ(requests[i].priority, 0);
  }
}

TEST(WorkloadTest, PoissonMeanInterArrivalIsOneOverRate) {
  WorkloadSpec spec;
  spec.num_requests = 20000;
  spec.arrivals = WorkloadSpec::Arrivals::kPoisson;
  spec.rate = 4.0;
  spec.input.value = 1;
  spec.seed = 123;
  const std::vector<double> gaps = Gaps(Generate(spec));
  ASSERT_EQ(gaps.size(), 19999u);
  // Standard error of the mean is 0.25 / sqrt(20000) ~ 0.0018 s; allow ~5 sigma.
  EXPECT_NEAR(Mean(gaps), 0.25, 0.01);
  EXPECT_NEAR(Cv2(gaps), 1.0, 0.1);  // exponential: CV^2 = 1
  for (double gap : gaps) EXPECT_GE(gap, 0.0);
}

TEST(WorkloadTest, GammaBurstinessSetsTheCoefficientOfVariation) {
  for (double burstiness : {0.25, 1.0, 4.0}) {
    WorkloadSpec spec;
    spec.num_requests = 20000;
    spec.arrivals = WorkloadSpec::Arrivals::kGamma;
    spec.rate = 2.0;
    spec.burstiness = burstiness;
    spec.input.value = 1;
    spec.seed = 99;
    const std::vector<double> gaps = Gaps(Generate(spec));
    EXPECT_NEAR(Mean(gaps), 0.5, 0.5 * 0.05) << "burstiness " << burstiness;
    // CV^2 = 1 / burstiness; the sample CV^2 of a heavy tail (shape 0.25) varies more.
    EXPECT_NEAR(Cv2(gaps), 1.0 / burstiness, 0.15 / burstiness) << "burstiness " << burstiness;
  }
}

TEST(WorkloadTest, UniformAndNormalLengthsStayInBounds) {
  WorkloadSpec spec;
  spec.num_requests = 2000;
  spec.input = {LengthDistribution::Kind::kUniform, 0, 10, 20, 0, 0};
  spec.output = {LengthDistribution::Kind::kNormal, 0, 30, 70, 50, 40};
  const std::vector<WorkloadRequest> requests = Generate(spec);
  bool saw_min = false, saw_max = false, clamped_low = false, clamped_high = false;
  double output_sum = 0;
  for (const WorkloadRequest& r : requests) {
    EXPECT_GE(r.input_len, 10);
    EXPECT_LE(r.input_len, 20);
    EXPECT_GE(r.output_len, 30);
    EXPECT_LE(r.output_len, 70);
    saw_min |= r.input_len == 10;
    saw_max |= r.input_len == 20;
    clamped_low |= r.output_len == 30;
    clamped_high |= r.output_len == 70;
    output_sum += static_cast<double>(r.output_len);
  }
  EXPECT_TRUE(saw_min && saw_max) << "uniform bounds are inclusive";
  EXPECT_TRUE(clamped_low && clamped_high) << "normal draws are clamped to [min, max]";
  EXPECT_NEAR(output_sum / 2000.0, 50.0, 2.0);
}

// Writes JSONL files into a per-test folder.
class WorkloadFileTest : public test::TempFolderTest {
 protected:
  std::string Write(const std::string& text) {
    return TempFolderTest::Write("requests.jsonl", text);
  }
  StatusOr<std::vector<WorkloadRequest>> FromFile(const std::string& text,
                                                  int64_t num_requests = 0) {
    WorkloadSpec spec;
    spec.num_requests = num_requests;
    spec.jsonl_file = Write(text);
    return GenerateWorkload(spec, kVocab);
  }
};

TEST_F(WorkloadFileTest, ReadsLengthsPriorityAndArrivalsSortedByArrival) {
  const StatusOr<std::vector<WorkloadRequest>> requests = FromFile(
      "{\"input_len\": 5, \"output_len\": 3, \"arrival_s\": 2.0}\n"
      "\n"
      "{\"prompt_len\": 7, \"output_len\": 1, \"priority\": 2, \"arrival_s\": 0.5, \"text\": "
      "\"x\"}\n"
      "{\"input_len\": 9, \"output_len\": 4}\n");
  ASSERT_TRUE(requests.ok()) << requests.status().message();
  ASSERT_EQ(requests->size(), 3u);
  // Offline arrivals for the line without arrival_s: t = 0, first after sorting.
  EXPECT_EQ((*requests)[0].input_len, 9);
  EXPECT_EQ((*requests)[0].arrival_s, 0.0);
  EXPECT_EQ((*requests)[1].input_len, 7);
  EXPECT_EQ((*requests)[1].priority, 2);
  EXPECT_EQ((*requests)[1].arrival_s, 0.5);
  EXPECT_EQ((*requests)[2].input_len, 5);
  EXPECT_EQ((*requests)[2].output_len, 3);
  // Ids follow the file, not the arrival order, so outputs keyed by id join to their lines.
  EXPECT_EQ((*requests)[0].id, 2);
  EXPECT_EQ((*requests)[0].line, 4);
  EXPECT_EQ((*requests)[1].id, 1);
  EXPECT_EQ((*requests)[1].line, 3);
  EXPECT_EQ((*requests)[2].id, 0);
  EXPECT_EQ((*requests)[2].line, 1);
  for (size_t i = 0; i < requests->size(); ++i) {
    EXPECT_EQ(static_cast<int64_t>((*requests)[i].prompt.size()), (*requests)[i].input_len);
  }
}

TEST_F(WorkloadFileTest, NumRequestsTakesTheFirstLinesAndNeedsThatMany) {
  const std::string lines =
      "{\"input_len\": 1, \"output_len\": 1}\n"
      "{\"input_len\": 2, \"output_len\": 1}\n";
  const StatusOr<std::vector<WorkloadRequest>> first = FromFile(lines, 1);
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_EQ(first->size(), 1u);
  EXPECT_EQ((*first)[0].input_len, 1);
  const StatusOr<std::vector<WorkloadRequest>> too_many = FromFile(lines, 3);
  ASSERT_FALSE(too_many.ok());
  EXPECT_THAT(too_many.status().message(), HasSubstr("holds 2 requests but num_requests is 3"));
}

TEST_F(WorkloadFileTest, BadLinesNameFileLineAndKey) {
  struct Case {
    std::string second_line;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"not json", "requests.jsonl:2: not valid JSON"},
      {"[1, 2]", "requests.jsonl:2: expected a JSON object"},
      {"{\"output_len\": 4}", "requests.jsonl:2: missing key 'input_len'"},
      {"{\"input_len\": 4}", "requests.jsonl:2: missing key 'output_len'"},
      {"{\"input_len\": -3, \"output_len\": 4}",
       "requests.jsonl:2: 'input_len' must be an integer in [1, 2147483647] (tokens); got -3"},
      {"{\"input_len\": \"12\", \"output_len\": 4}",
       "requests.jsonl:2: 'input_len' must be an integer in [1, 2147483647] (tokens); got "
       "\"12\""},
      // The value as written, not as a signed 64-bit integer would read it ("-1").
      {"{\"input_len\": 18446744073709551615, \"output_len\": 4}",
       "'input_len' must be an integer in [1, 2147483647] (tokens); got 18446744073709551615"},
      {"{\"input_len\": 1000000000000, \"output_len\": 4}",
       "'input_len' must be an integer in [1, 2147483647] (tokens); got 1000000000000"},
      {"{\"input_len\": 4, \"output_len\": 4, \"arrival_s\": 1e300}",
       "requests.jsonl:2: 'arrival_s' must be a number in [0, 86400]"},
      {"{\"input_len\": 4, \"output_len\": 1.5}", "requests.jsonl:2: 'output_len' must be"},
      {"{\"input_len\": 4, \"output_len\": 4, \"priority\": \"high\"}",
       "requests.jsonl:2: 'priority' must be an integer"},
      {"{\"input_len\": 4, \"output_len\": 4, \"arrival_s\": -1}",
       "requests.jsonl:2: 'arrival_s' must be a number in [0, 86400]"},
      {"{\"input_len\": 4, \"prompt_len\": 4, \"output_len\": 4}",
       "requests.jsonl:2: both 'input_len' and 'prompt_len'"},
  };
  for (const Case& c : cases) {
    const StatusOr<std::vector<WorkloadRequest>> requests =
        FromFile("{\"input_len\": 1, \"output_len\": 1}\n" + c.second_line + "\n");
    ASSERT_FALSE(requests.ok()) << c.second_line;
    EXPECT_EQ(requests.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(requests.status().message(), HasSubstr(c.message)) << c.second_line;
  }
}

TEST_F(WorkloadFileTest, MissingAndEmptyFilesAreErrors) {
  WorkloadSpec spec;
  spec.jsonl_file = (dir_ / "absent.jsonl").string();
  const StatusOr<std::vector<WorkloadRequest>> missing = GenerateWorkload(spec, kVocab);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("absent.jsonl"));
  const StatusOr<std::vector<WorkloadRequest>> empty = FromFile("\n\n");
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.status().message(), HasSubstr("holds no requests"));
}

// What is not a regular file is named as what it is, and never opened for reading (a FIFO would
// block the run for ever).
TEST_F(WorkloadFileTest, FoldersAndFifosAreRefusedBeforeReading) {
  WorkloadSpec spec;
  spec.num_requests = 0;
  spec.jsonl_file = dir_.string();
  const StatusOr<std::vector<WorkloadRequest>> folder = GenerateWorkload(spec, kVocab);
  ASSERT_FALSE(folder.ok());
  EXPECT_THAT(folder.status().message(), HasSubstr("workload file '" + dir_.string() +
                                                   "' is a directory, not a regular file"));
  const std::string fifo = (dir_ / "pipe.jsonl").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  spec.jsonl_file = fifo;
  const StatusOr<std::vector<WorkloadRequest>> piped = GenerateWorkload(spec, kVocab);
  ASSERT_FALSE(piped.ok());
  EXPECT_THAT(piped.status().message(), HasSubstr("is a FIFO (named pipe), not a regular file"));
}

TEST_F(WorkloadFileTest, AnOverlongLineIsAnErrorNamingIt) {
  const std::string line(17u << 20, ' ');
  const StatusOr<std::vector<WorkloadRequest>> requests =
      FromFile("{\"input_len\": 1, \"output_len\": 1}\n" + line + "x\n");
  ASSERT_FALSE(requests.ok());
  EXPECT_THAT(requests.status().message(),
              HasSubstr("requests.jsonl:2: the line is longer than 16.0 MiB"));
}

// A request too long for the model gets no prompt tokens: building them first (10^12 tokens)
// aborted the run before the scheduler could reject the request.
TEST_F(WorkloadFileTest, PromptsPastTheModelLengthAreNotBuilt) {
  WorkloadSpec spec;
  spec.num_requests = 0;
  spec.jsonl_file = Write(
      "{\"input_len\": 8, \"output_len\": 2}\n"
      "{\"input_len\": 2000000000, \"output_len\": 2}\n");
  const StatusOr<std::vector<WorkloadRequest>> requests = GenerateWorkload(spec, kVocab, 512);
  ASSERT_TRUE(requests.ok()) << requests.status().message();
  ASSERT_EQ(requests->size(), 2u);
  EXPECT_EQ((*requests)[0].prompt.size(), 8u);
  EXPECT_EQ((*requests)[1].input_len, 2000000000);
  EXPECT_TRUE((*requests)[1].prompt.empty());
}

TEST(WorkloadBoundsTest, ArrivalsPastADayAreRefused) {
  WorkloadSpec spec;
  spec.arrivals = WorkloadSpec::Arrivals::kPoisson;
  spec.rate = 1e-300;  // the second request would arrive ~1e300 s later
  const StatusOr<std::vector<WorkloadRequest>> requests = GenerateWorkload(spec, kVocab);
  ASSERT_FALSE(requests.ok());
  EXPECT_THAT(requests.status().message(), HasSubstr("request 1 would arrive at"));
  EXPECT_THAT(requests.status().message(), HasSubstr("arrivals are bounded to 86400 s (one day)"));
}

TEST(WorkloadBoundsTest, TooManyPromptTokensAreRefusedBeforeAnyIsBuilt) {
  WorkloadSpec spec;
  spec.num_requests = 1000000;
  spec.input.value = 1000;  // 10^9 tokens: 4 GB of ids
  const StatusOr<std::vector<WorkloadRequest>> requests = GenerateWorkload(spec, kVocab);
  ASSERT_FALSE(requests.ok());
  EXPECT_THAT(requests.status().message(),
              HasSubstr("the prompts hold 1000000000 tokens in all; at most 268435456"));
  spec.num_requests = 1000001;
  EXPECT_THAT(spec.Validate().message(), HasSubstr("num_requests must be in [1, 1000000]"));
}

TEST(WorkloadValidationTest, ErrorsNameTheField) {
  struct Case {
    WorkloadSpec spec;
    std::string message;
  };
  std::vector<Case> cases;
  WorkloadSpec spec;
  spec.num_requests = 0;
  cases.push_back({spec, "num_requests must be in [1, 1000000]"});
  spec = {};
  spec.arrivals = WorkloadSpec::Arrivals::kPoisson;
  cases.push_back({spec, "rate must be > 0 requests/s for poisson arrivals; got 0"});
  spec = {};
  spec.burstiness = -1;
  cases.push_back({spec, "burstiness must be > 0"});
  spec = {};
  spec.max_concurrency = -2;
  cases.push_back({spec, "max_concurrency must be >= 0 (0 = unlimited); got -2"});
  spec = {};
  spec.input.value = 0;
  cases.push_back({spec, "input length must be in [1, 2147483647] tokens; got 0"});
  spec = {};
  spec.output = {LengthDistribution::Kind::kUniform, 0, 10, 5, 0, 0};
  cases.push_back({spec, "output.max must be in [output.min (10), 2147483647]; got 5"});
  spec = {};
  spec.input = {LengthDistribution::Kind::kNormal, 0, 1, 10, 5, -1};
  cases.push_back({spec, "input.std must be a number >= 0; got -1"});
  for (const Case& c : cases) {
    const Status status = c.spec.Validate();
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << c.message;
    EXPECT_THAT(status.message(), HasSubstr(c.message));
    EXPECT_FALSE(GenerateWorkload(c.spec, kVocab).ok()) << c.message;
  }
  const StatusOr<std::vector<WorkloadRequest>> tiny_vocab = GenerateWorkload(WorkloadSpec{}, 1);
  ASSERT_FALSE(tiny_vocab.ok());
  EXPECT_THAT(tiny_vocab.status().message(), HasSubstr("vocab_size must be >= 2"));
}

TEST(WorkloadTest, NamesRoundTrip) {
  EXPECT_STREQ(ArrivalsName(WorkloadSpec::Arrivals::kGamma), "gamma");
  EXPECT_STREQ(LengthKindName(LengthDistribution::Kind::kNormal), "normal");
}

}  // namespace
}  // namespace hwinfer
