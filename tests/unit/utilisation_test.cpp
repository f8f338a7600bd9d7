// utilisation_test.cpp — naming the peaks MBU and MFU are against and the warning that must come
// with every figure above 100% (metrics.h, core/src/metrics/utilisation.cpp): the text names the
// exact peak (kind, dtype, value, origin) and why it can be exceeded; nothing at or below 100%;
// one line per peak; the "hardware" JSON round trip that `hwinfer compare` relies on.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hwinfer/metrics.h"

namespace hwinfer {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// A Q8_0 model on a device with a hardware file: spec int8 1.792 TFLOP/s, measured q8_0 matmul
// 95 GFLOP/s at m=512 n=k=2048, spec bandwidth 51.2 GB/s, measured read 45.1 GB/s over 64 MiB.
PeakRates Q8Peaks() {
  PeakRates p;
  p.spec_bandwidth_bytes_per_s = 51.2e9;
  p.spec_flops = 1.792e12;
  p.measured_bandwidth_bytes_per_s = 45.1e9;
  p.measured_flops = 95e9;
  p.flops_weight_dtype = HWINFER_DTYPE_Q8_0;
  p.spec_flops_dtype = HWINFER_DTYPE_I8;
  p.spec_source = "configs/hardware/generic-cpu.yaml";
  p.measured_flops_probe = {512, 2048, 2048};
  p.measured_bandwidth_probe_bytes = 64ull << 20;
  return p;
}

TEST(PeakDescription, NamesKindDtypeValueAndOrigin) {
  const PeakRates p = Q8Peaks();
  EXPECT_EQ(PeakDescription(p, PeakKind::kMeasuredFlops),
            "measured q8_0 matmul peak 95.0 GFLOP/s (probe at m=512 n=2048 k=2048)");
  EXPECT_EQ(PeakDescription(p, PeakKind::kSpecFlops),
            "spec int8 peak 1.79 TFLOP/s (configs/hardware/generic-cpu.yaml)");
  EXPECT_EQ(PeakDescription(p, PeakKind::kMeasuredBandwidth),
            "measured read bandwidth 45.1 GB/s (probe over 64.0 MiB)");
  EXPECT_EQ(PeakDescription(p, PeakKind::kSpecBandwidth),
            "spec bandwidth 51.2 GB/s (configs/hardware/generic-cpu.yaml)");
}

TEST(PeakDescription, SaysWhenAPeakWasGivenOrIsUnknownOrHasNoInt8Figure) {
  PeakRates p;
  p.flops_weight_dtype = HWINFER_DTYPE_F16;
  p.spec_flops_dtype = HWINFER_DTYPE_F16;
  p.measured_flops = 2e11;
  EXPECT_EQ(PeakDescription(p, PeakKind::kMeasuredFlops),
            "measured f16 matmul peak 200.0 GFLOP/s (given, not probed)");
  EXPECT_EQ(PeakDescription(p, PeakKind::kSpecFlops), "spec f16 peak unknown");
  // A block-quantized model against a spec without an int8 figure is read against f16.
  p.flops_weight_dtype = HWINFER_DTYPE_Q4_0;
  p.spec_flops = 9.89e14;
  EXPECT_EQ(PeakDescription(p, PeakKind::kSpecFlops),
            "spec f16 peak 989.00 TFLOP/s (no int8 figure for q4_0 weights)");
  p.spec_source = "h100.yaml";
  EXPECT_EQ(PeakDescription(p, PeakKind::kSpecFlops),
            "spec f16 peak 989.00 TFLOP/s (no int8 figure for q4_0 weights; h100.yaml)");
}

TEST(UtilisationWarnings, NoneAtOrBelowOneHundredPercent) {
  EXPECT_THAT(UtilisationWarnings({{"decode MBU", PeakKind::kSpecBandwidth, 1.0},
                                   {"mixed MFU", PeakKind::kMeasuredFlops, 0.99},
                                   {"prefill MFU", PeakKind::kSpecFlops, 0}},
                                  Q8Peaks()),
              IsEmpty());
}

TEST(UtilisationWarnings, MeasuredMfuAboveItsPeakNamesTheQ8MatmulProbeAndWhy) {
  const std::vector<std::string> lines =
      UtilisationWarnings({{"mixed MFU", PeakKind::kMeasuredFlops, 1.17}}, Q8Peaks());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("mixed MFU 117% exceeds 100% of the measured q8_0 matmul peak 95.0 "
                           "GFLOP/s (probe at m=512 n=2048 k=2048): ",
                           0),
            0u)
      << lines[0];
  EXPECT_THAT(lines[0], HasSubstr("other shapes"));
  EXPECT_THAT(lines[0], HasSubstr("int8 dot products"));
}

TEST(UtilisationWarnings, OneLinePerPeakListingEveryFigureAboveIt) {
  const std::vector<std::string> lines =
      UtilisationWarnings({{"decode MBU", PeakKind::kMeasuredBandwidth, 1.3},
                           {"decode MBU", PeakKind::kSpecBandwidth, 0.9},
                           {"all MBU", PeakKind::kMeasuredBandwidth, 1.104},
                           {"prefill MFU", PeakKind::kSpecFlops, 2.0}},
                          Q8Peaks());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(lines[0], HasSubstr("decode MBU 130%, all MBU 110% exceed 100% of the measured read "
                                  "bandwidth 45.1 GB/s (probe over 64.0 MiB): "));
  EXPECT_THAT(lines[0], HasSubstr("caches"));
  EXPECT_THAT(lines[1], HasSubstr("prefill MFU 200% exceeds 100% of the spec int8 peak 1.79 "
                                  "TFLOP/s (configs/hardware/generic-cpu.yaml): "));
  EXPECT_THAT(lines[1], HasSubstr("too low"));
  for (const std::string& line : lines) EXPECT_THAT(line, Not(HasSubstr("\n")));
}

TEST(UtilisationWarnings, SpecSourceIsEscaped) {
  PeakRates p = Q8Peaks();
  p.spec_source = "evil\x1b[2Jfile.yaml";
  const std::vector<std::string> lines =
      UtilisationWarnings({{"decode MBU", PeakKind::kSpecBandwidth, 1.5}}, p);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], Not(HasSubstr("\x1b")));
  EXPECT_THAT(lines[0], HasSubstr("evil\\x1b[2Jfile.yaml"));
}

TEST(UtilisationWarnings, OfARunCoverEveryPhaseIncludingAll) {
  RunSummary s;
  s.peaks = Q8Peaks();
  s.mixed.mfu_measured = 1.17;
  s.all.mfu_measured = 1.04;
  s.decode.mbu_spec = 1.25;
  s.prefill.mfu_measured = 0.8;
  const std::vector<std::string> lines = UtilisationWarnings(s);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(lines[0], HasSubstr("decode MBU 125% exceeds 100% of the spec bandwidth 51.2 GB/s"));
  EXPECT_THAT(lines[1], HasSubstr("mixed MFU 117%, all MFU 104% exceed 100% of the measured q8_0 "
                                  "matmul peak 95.0 GFLOP/s"));
}

TEST(PhaseFigures, AreTheFourUtilisationsOfThePhase) {
  PhaseMetrics m;
  m.mbu_spec = 0.1;
  m.mbu_measured = 0.2;
  m.mfu_spec = 0.3;
  m.mfu_measured = 0.4;
  const std::vector<UtilisationFigure> figures = PhaseFigures("decode", m);
  ASSERT_EQ(figures.size(), 4u);
  std::vector<std::string> labels;
  for (const UtilisationFigure& f : figures) labels.push_back(f.label);
  EXPECT_THAT(labels, ElementsAre("decode MBU", "decode MBU", "decode MFU", "decode MFU"));
  EXPECT_EQ(figures[0].peak, PeakKind::kSpecBandwidth);
  EXPECT_EQ(figures[1].peak, PeakKind::kMeasuredBandwidth);
  EXPECT_EQ(figures[2].peak, PeakKind::kSpecFlops);
  EXPECT_EQ(figures[3].peak, PeakKind::kMeasuredFlops);
  EXPECT_DOUBLE_EQ(figures[3].ratio, 0.4);
}

TEST(PeakRatesJson, NamesBothFlopsDtypesAndRoundTrips) {
  const PeakRates p = Q8Peaks();
  const nlohmann::json json = nlohmann::json::parse(PeakRatesJson(p).dump());
  EXPECT_EQ(json["peak_flops_dtype"], "int8");
  EXPECT_EQ(json["measured_flops_dtype"], "q8_0");
  EXPECT_EQ(json["measured_flops_probe"], nlohmann::json({{"m", 512}, {"n", 2048}, {"k", 2048}}));
  EXPECT_EQ(json["measured_bandwidth_probe_bytes"], 64ull << 20);
  EXPECT_DOUBLE_EQ(json["measured_flops"].get<double>(), 95e9);
  const PeakRates back = PeakRatesFromJson(json);
  EXPECT_EQ(back.spec_bandwidth_bytes_per_s, p.spec_bandwidth_bytes_per_s);
  EXPECT_EQ(back.spec_flops, p.spec_flops);
  EXPECT_EQ(back.measured_bandwidth_bytes_per_s, p.measured_bandwidth_bytes_per_s);
  EXPECT_EQ(back.measured_flops, p.measured_flops);
  EXPECT_EQ(back.flops_weight_dtype, HWINFER_DTYPE_Q8_0);
  EXPECT_EQ(back.spec_flops_dtype, HWINFER_DTYPE_I8);
  EXPECT_EQ(back.spec_source, p.spec_source);
  EXPECT_EQ(back.measured_flops_probe.m, 512);
  EXPECT_EQ(back.measured_flops_probe.n, 2048);
  EXPECT_EQ(back.measured_flops_probe.k, 2048);
  EXPECT_EQ(back.measured_bandwidth_probe_bytes, 64ull << 20);
  // A file from before these keys existed reads as unknown peaks, not an error.
  const PeakRates old = PeakRatesFromJson({{"peak_flops", 1e12}});
  EXPECT_EQ(old.spec_flops, 1e12);
  EXPECT_EQ(old.measured_flops, 0);
  EXPECT_EQ(old.flops_weight_dtype, HWINFER_DTYPE_F32);
  EXPECT_EQ(old.measured_flops_probe.m, 0);
}

}  // namespace
}  // namespace hwinfer
