// eval_command.cpp — `hwinfer eval -m MODEL.gguf (--text F | --tokens F) [--ctx 512]
// [--score decode|prefill] [--kv-dtype f16|i8] [--device D] [--save-logits REF | --reference
// REF] [--json]`: the model's
// perplexity over the text and, against a reference run, the KL-divergence, top-1 agreement and
// perplexity ratio (hwinfer/perplexity.h, docs/evaluation.md), on any device the other model
// commands run on. A simulated device computes no values and is refused.
#include <fmt/format.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "hwinfer/gguf.h"
#include "hwinfer/input_file.h"
#include "hwinfer/perplexity.h"
#include "hwinfer/tokenizer.h"
#include "model_run.h"

namespace hwinfer::cli {
namespace {

// The most --text / --tokens reads.
constexpr uint64_t kMaxEvalFileBytes = uint64_t{1} << 30;

// The ids of a --tokens file: integers separated by commas and/or white space, optionally in [ ].
StatusOr<std::vector<int32_t>> ReadTokenFile(const std::string& path, int64_t vocab) {
  HWINFER_ASSIGN_OR_RETURN(const std::string text,
                           ReadInputFile(path, "token file", kMaxEvalFileBytes));
  std::vector<int32_t> ids;
  size_t i = 0;
  auto separator = [](char c) {
    return c == ',' || c == '[' || c == ']' || std::isspace(static_cast<unsigned char>(c));
  };
  while (i < text.size()) {
    if (separator(text[i])) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && !separator(text[end])) ++end;
    const std::string item = text.substr(i, end - i);
    const std::optional<int64_t> id = ParseDecimal(item);
    if (!id || *id < 0 || *id >= vocab) {
      return InvalidArgument(fmt::format(
          "token file '{}': item {} ('{}') is not a token id of this model (an integer in [0, {}))",
          path, ids.size() + 1, item.substr(0, 32), vocab));
    }
    ids.push_back(static_cast<int32_t>(*id));
    i = end;
  }
  return ids;
}

// The model's tokenizer, or null when the file has none (and |required| is false).
StatusOr<std::unique_ptr<Tokenizer>> OpenTokenizer(const LlamaModel& model, bool required) {
  auto tokenizer = Tokenizer::FromGguf(model.file());
  if (tokenizer.ok()) return std::move(*tokenizer);
  if (!required) return std::unique_ptr<Tokenizer>();
  return Status(tokenizer.status().code(),
                tokenizer.status().message() +
                    " (this file has no usable tokenizer: give token ids with --tokens)");
}

// The windows of the text or token file, each starting with BOS where the model adds one.
StatusOr<EvalWindows> ReadWindows(const EvalOptions& options, const LlamaModel& model) {
  if (options.text_file.has_value() == options.tokens_file.has_value()) {
    return InvalidArgument("give exactly one of --text and --tokens");
  }
  const int64_t vocab = model.shape().vocab_size;
  HWINFER_ASSIGN_OR_RETURN(auto tokenizer, OpenTokenizer(model, options.text_file.has_value()));
  std::vector<int32_t> tokens;
  if (options.text_file) {
    HWINFER_ASSIGN_OR_RETURN(const std::string text,
                             ReadInputFile(*options.text_file, "text file", kMaxEvalFileBytes));
    tokens = tokenizer->Encode(text, true, false);
  } else {
    HWINFER_ASSIGN_OR_RETURN(tokens, ReadTokenFile(*options.tokens_file, vocab));
  }
  const int32_t bos = tokenizer != nullptr && tokenizer->adds_bos() ? tokenizer->bos() : -1;
  auto windows = MakeEvalWindows(tokens, options.ctx, bos, options.max_windows);
  if (!windows.ok()) {
    return windows.status().WithContext(options.text_file
                                            ? "text file '" + *options.text_file + "'"
                                            : "token file '" + *options.tokens_file + "'");
  }
  return windows;
}

// The type holding most of the model's layer weights ("Q4_K"), for describing a run.
std::string MainWeightType(const LlamaModel& model) {
  std::map<uint32_t, uint64_t> values;
  for (const LlamaLayerTensors& l : model.layers()) {
    for (const GgufTensorInfo* t : {l.wq, l.wk, l.wv, l.wo, l.w_gate, l.w_up, l.w_down}) {
      values[t->ggml_type] += t->ValueCount();
    }
  }
  uint32_t best = 0;
  uint64_t most = 0;
  for (const auto& [type, count] : values) {
    if (count > most) best = type, most = count;
  }
  return GgmlTypeName(best);
}

// "tiny.gguf (Q8_0) on cpu:0, KV f16": what made a run, for the report and the reference file.
std::string DescribeRun(const EvalOptions& options, const LlamaExecutor& executor) {
  std::string devices;
  for (const auto& part : executor.device_layers()) {
    devices += (devices.empty() ? "" : "+") + part.device->id();
  }
  if (executor.tensor_parallel() > 1)
    devices += fmt::format(" x TP {}", executor.tensor_parallel());
  return fmt::format("{} ({}) on {}, KV {}, scored by {}", options.run.model_path,
                     MainWeightType(executor.model()), devices, options.run.kv_dtype,
                     options.score);
}

Status RefuseSimulatedDevices(const LlamaExecutor& executor) {
  for (const auto& part : executor.device_layers()) {
    if (part.device->info().device_type == HWINFER_DEVICE_TYPE_VIRTUAL) {
      return InvalidArgument(fmt::format(
          "{} is a simulated device: it prices kernels but computes no values, so there is no "
          "perplexity to measure; pick a device that computes (hwinfer devices)",
          part.device->id()));
    }
  }
  return Status::Ok();
}

// After each window: on a terminal the bar redrawn; elsewhere a plain line at most every 10 s
// (the bench's progress line, bench_run.h).
EvalProgress MakeProgress(bool enabled) {
  if (!enabled) return {};
  const bool terminal = ::isatty(::fileno(stderr)) != 0;
  auto last_line_s = std::make_shared<double>(0);
  return [terminal, last_line_s](const EvalProgressInfo& p) {
    const std::string counts = fmt::format("{}/{} windows, {:.0f} s, PPL so far {:.4f}", p.done,
                                           p.total, p.seconds, p.perplexity);
    const double fraction = static_cast<double>(p.done) / static_cast<double>(p.total);
    PrintProgressUpdate(terminal, "", fraction, p.seconds, counts, last_line_s.get());
  };
}

nlohmann::json ResultJson(const EvalOptions& options, const EvalWindows& windows,
                          const EvalResult& r, const std::string& about,
                          const std::string& reference_about) {
  nlohmann::json j = {{"run", about},
                      {"ctx", windows.ctx},
                      {"first_scored", windows.first_scored},
                      {"windows", r.windows},
                      {"scored_tokens", r.scored_tokens},
                      {"mean_nll", r.mean_nll},
                      {"perplexity", r.perplexity},
                      {"perplexity_error", r.perplexity_error},
                      {"seconds", r.seconds},
                      {"tokens_per_second", r.tokens_per_second}};
  if (r.reference) {
    const ReferenceSummary& s = *r.reference;
    j["reference"] = {{"file", options.reference},
                      {"run", reference_about},
                      {"perplexity", s.reference_perplexity},
                      {"perplexity_ratio", s.perplexity_ratio},
                      {"perplexity_ratio_error", s.perplexity_ratio_error},
                      {"kl_mean", s.kl_mean},
                      {"kl_median", s.kl_median},
                      {"kl_p99", s.kl_p99},
                      {"kl_max", s.kl_max},
                      {"top1_agreement", s.top1_agreement},
                      {"delta_p_mean", s.delta_p_mean},
                      {"delta_p_rms", s.delta_p_rms}};
  }
  return j;
}

void PrintResult(const EvalWindows& windows, const EvalResult& r, const std::string& about,
                 const std::string& reference_about) {
  fmt::print("run: {}\n", about);
  fmt::print("windows: {} of {} tokens; positions {}..{} of each scored: {} tokens\n", r.windows,
             windows.ctx, windows.first_scored, windows.ctx - 2, r.scored_tokens);
  fmt::print("perplexity: {:.4f} +/- {:.4f}\n", r.perplexity, r.perplexity_error);
  fmt::print("speed: {:.1f} tokens/s ({:.1f} s)\n", r.tokens_per_second, r.seconds);
  if (!r.reference) return;
  const ReferenceSummary& s = *r.reference;
  fmt::print("reference: {}\n", reference_about);
  fmt::print("  reference perplexity: {:.4f}; ratio {:.5f} +/- {:.5f}\n", s.reference_perplexity,
             s.perplexity_ratio, s.perplexity_ratio_error);
  fmt::print("  KL-divergence (nats): mean {:.4g}, median {:.4g}, p99 {:.4g}, max {:.4g}\n",
             s.kl_mean, s.kl_median, s.kl_p99, s.kl_max);
  fmt::print("  top-1 agreement: {:.2f}%\n", 100.0 * s.top1_agreement);
  fmt::print("  probability of the next token, run - reference: mean {:+.4g}, RMS {:.4g}\n",
             s.delta_p_mean, s.delta_p_rms);
}

// Opens the reference (checked against this run) and the file to save, as asked.
struct EvalFiles {
  std::unique_ptr<LogitsFileReader> reference;
  std::unique_ptr<LogitsFileWriter> save;
};

StatusOr<EvalFiles> OpenEvalFiles(const EvalOptions& options, const LogitsFileHeader& run) {
  EvalFiles files;
  if (!options.reference.empty()) {
    HWINFER_ASSIGN_OR_RETURN(files.reference, LogitsFileReader::Open(options.reference));
    HWINFER_RETURN_IF_ERROR(CheckSameRun(files.reference->header(), run, options.reference));
  }
  if (!options.save_logits.empty()) {
    if (options.save_logits == options.reference) {
      return InvalidArgument("--save-logits and --reference name the same file '" +
                             options.reference + "'");
    }
    HWINFER_ASSIGN_OR_RETURN(files.save, LogitsFileWriter::Create(options.save_logits, run));
    fmt::print(stderr, "hwinfer: saving {} of log-probabilities to {}\n",
               FormatBytes(static_cast<double>(run.FileBytes())), options.save_logits);
  }
  return files;
}

StatusOr<nlohmann::json> Evaluate(const GlobalOptions& global, const EvalOptions& options,
                                  bool* followed) {
  HWINFER_ASSIGN_OR_RETURN(const auto model, LlamaModel::Open(options.run.model_path));
  const ModelShape& shape = model->shape();
  if (options.ctx > shape.context_length) {
    return InvalidArgument(fmt::format("--ctx {} is over the context length {} of {}", options.ctx,
                                       shape.context_length, options.run.model_path));
  }
  HWINFER_ASSIGN_OR_RETURN(const EvalWindows windows, ReadWindows(options, *model));
  const bool decode = options.score == "decode";
  RunSize size{decode ? std::min(options.parallel, windows.count) : 1, options.ctx, 1};
  if (!decode) {
    size.logit_rows = std::min(options.ctx - windows.first_scored, options.run.max_batch_tokens);
  }
  HWINFER_ASSIGN_OR_RETURN(auto opened, OpenModel(global, options.run, size));
  if (opened->followed) {
    *followed = true;
    return nlohmann::json();
  }
  LlamaExecutor& executor = *opened->executor;
  HWINFER_RETURN_IF_ERROR(RefuseSimulatedDevices(executor));
  LogitsFileHeader run{kLogitsFileVersion,
                       shape.vocab_size,
                       windows.ctx,
                       windows.first_scored,
                       windows.count,
                       ShapeSignature(shape),
                       DescribeRun(options, executor),
                       windows.tokens};
  HWINFER_ASSIGN_OR_RETURN(EvalFiles files, OpenEvalFiles(options, run));
  EvalRunOptions run_options{files.save.get(), files.reference.get(),
                             MakeProgress(!options.no_progress),
                             decode ? EvalScoring::kDecode : EvalScoring::kPrefill};
  const StatusOr<EvalResult> evaluated = EvaluatePerplexity(executor, windows, run_options);
  EndProgressLine(run_options.progress != nullptr);
  HWINFER_ASSIGN_OR_RETURN(const EvalResult result, evaluated);
  if (files.save) HWINFER_RETURN_IF_ERROR(files.save->Finish());
  const std::string reference_about = files.reference ? files.reference->header().about : "";
  if (!options.json) PrintResult(windows, result, run.about, reference_about);
  return ResultJson(options, windows, result, run.about, reference_about);
}

}  // namespace

int RunEval(const GlobalOptions& global, const EvalOptions& options) {
  bool followed = false;
  auto result = Evaluate(global, options, &followed);
  if (!result.ok()) return ReportError(result.status());
  if (options.json && !followed) fmt::print("{}\n", result->dump(2));
  return 0;
}

}  // namespace hwinfer::cli
