// generate_command.cpp — `hwinfer generate -m FILE.gguf (--prompt TEXT | --prompt-file F |
// --prompt-tokens 1,2,3) [--chat [--system S] [--chat-template NAME]] [-n N] [--ignore-eos]
// [--print-ids] [--timing] [--backend B | --device D] [sampling options]`: runs the model on one
// device, greedy unless sampling options say otherwise.
//
// Text in (--prompt, or a file's bytes exactly; valid UTF-8 only): the model's own tokenizer
// (hwinfer/tokenizer.h) encodes it with BOS as the metadata says; with --chat the text is first
// rendered as a user message (after --system's, if any) by the model's chat template or the one
// named (hwinfer/chat_template.h) and its special tokens' texts are parsed, as llama.cpp does.
// Text out: each token is decoded as it is sampled (a character split over tokens appears once
// complete) and written to stdout at once, the prompt not echoed, a newline at the end; control
// characters other than newline and tab are shown escaped. Generation stops after an EOS / EOT
// token unless --ignore-eos. --print-ids writes the prompt's and the generated ids to stderr.
//
// Ids in (--prompt-tokens): as before the tokenizer existed — the generated ids on one line of
// stdout as they are sampled, all -n of them. With --timing, TTFT and TPOT go to stderr.
#include <fmt/format.h>

#include <cstdio>

#include "commands.h"
#include "hwinfer/chat_template.h"
#include "hwinfer/generate.h"
#include "hwinfer/gguf.h"
#include "hwinfer/input_file.h"
#include "hwinfer/text_escape.h"
#include "hwinfer/tokenizer.h"
#include "hwinfer/workload.h"
#include "model_run.h"

namespace hwinfer::cli {
namespace {

// The most --prompt-file reads: far more text than any context holds.
constexpr uint64_t kMaxPromptFileBytes = uint64_t{64} << 20;

// A prompt ready to run: its ids and, for a text prompt, the tokenizer that decodes the answer.
struct Prompt {
  std::vector<int32_t> ids;
  std::unique_ptr<Tokenizer> tokenizer;  // null for --prompt-tokens
  std::string source;                    // "--prompt", "prompt file 'F'", "--prompt-tokens"
};

Status CheckFlags(const GenerateOptions& options) {
  const int given = static_cast<int>(options.prompt.has_value()) +
                    static_cast<int>(options.prompt_file.has_value()) +
                    static_cast<int>(options.prompt_tokens.has_value());
  if (given != 1) {
    return InvalidArgument(fmt::format(
        "give exactly one of --prompt, --prompt-file and --prompt-tokens ({} given)", given));
  }
  if (options.prompt_tokens && options.chat) {
    return InvalidArgument("--chat renders a text prompt; --prompt-tokens are token ids");
  }
  if (!options.chat && (options.system || !options.chat_template.empty())) {
    return InvalidArgument(fmt::format("{} applies to chat prompts only: add --chat",
                                       options.system ? "--system" : "--chat-template"));
  }
  return options.sampling.Validate();
}

Status CheckUtf8(const std::string& what, std::string_view text) {
  const size_t bad = FindInvalidUtf8(text);
  if (bad == std::string_view::npos) return Status::Ok();
  return InvalidArgument(fmt::format("{} is not valid UTF-8: byte {} of {} is 0x{:02x}", what, bad,
                                     text.size(), static_cast<uint8_t>(text[bad])));
}

// The prompt text. It and --system must be valid UTF-8: the tokenizer would take other bytes one
// by one, which is never what was meant.
StatusOr<std::string> ReadPromptText(const GenerateOptions& options, const std::string& source) {
  std::string text;
  if (options.prompt) {
    text = *options.prompt;
  } else {
    HWINFER_ASSIGN_OR_RETURN(
        text, ReadInputFile(*options.prompt_file, "prompt file", kMaxPromptFileBytes));
  }
  HWINFER_RETURN_IF_ERROR(CheckUtf8(source, text));
  if (options.system) HWINFER_RETURN_IF_ERROR(CheckUtf8("--system", *options.system));
  return text;
}

// |text| as a user message (after the system message, if any) in the chat template named by
// --chat-template, or else the model's.
StatusOr<std::string> RenderChat(const GgufFile& file, const GenerateOptions& options,
                                 const std::string& text) {
  auto chat_template = options.chat_template.empty()
                           ? ChatTemplate::FromGguf(file)
                           : ChatTemplate::FromName(options.chat_template);
  if (!chat_template.ok() && !options.chat_template.empty()) {
    return chat_template.status().WithContext("--chat-template");
  }
  if (!chat_template.ok()) {
    return Status(chat_template.status().code(),
                  chat_template.status().message() + "; name one with --chat-template");
  }
  std::vector<ChatMessage> messages;
  if (options.system) messages.push_back({"system", *options.system});
  messages.push_back({"user", text});
  return chat_template->Render(messages, true);
}

StatusOr<Prompt> TextPrompt(const GenerateOptions& options) {
  Prompt prompt;
  prompt.source = options.prompt ? "--prompt" : "prompt file '" + *options.prompt_file + "'";
  HWINFER_ASSIGN_OR_RETURN(const std::string text, ReadPromptText(options, prompt.source));
  HWINFER_ASSIGN_OR_RETURN(const auto file, GgufFile::Open(options.run.model_path));
  auto tokenizer = Tokenizer::FromGguf(*file);
  if (!tokenizer.ok()) {
    return Status(tokenizer.status().code(),
                  tokenizer.status().message() +
                      " (this file has no usable tokenizer: give token ids with --prompt-tokens)");
  }
  prompt.tokenizer = std::move(*tokenizer);
  if (options.chat) {
    HWINFER_ASSIGN_OR_RETURN(const std::string chat, RenderChat(*file, options, text));
    prompt.ids = prompt.tokenizer->Encode(chat, true, true);
  } else {
    prompt.ids = prompt.tokenizer->Encode(text, true, false);
  }
  if (prompt.ids.empty()) {
    return InvalidArgument(prompt.source +
                           " is empty and the model adds no BOS: no tokens to start from");
  }
  return prompt;
}

StatusOr<Prompt> ReadPrompt(const GenerateOptions& options) {
  if (!options.prompt_tokens) return TextPrompt(options);
  Prompt prompt;
  prompt.source = "--prompt-tokens";
  HWINFER_ASSIGN_OR_RETURN(prompt.ids, ParseTokenIds(*options.prompt_tokens, "--prompt-tokens"));
  return prompt;
}

// |text| with the control characters other than newline and tab escaped (hwinfer/text_escape.h):
// generated text is the model file's to choose and must not drive the terminal.
std::string PrintableText(std::string_view text) {
  std::string out;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != '\n' && text[i] != '\t') continue;
    out += EscapeControlCharacters(text.substr(start, i - start));
    if (i < text.size()) out += text[i];
    start = i + 1;
  }
  return out;
}

void PrintTiming(const GenerateResult& result, size_t prompt_tokens) {
  double decode = 0;
  for (double s : result.decode_step_seconds) decode += s;
  const double tpot = result.decode_step_seconds.empty()
                          ? 0
                          : decode / static_cast<double>(result.decode_step_seconds.size());
  fmt::print(stderr, "TTFT {:.2f} ms ({} prompt tokens), TPOT {:.2f} ms (mean of {} steps)\n",
             result.prefill_seconds * 1e3, prompt_tokens, tpot * 1e3,
             result.decode_step_seconds.size());
}

}  // namespace

int RunGenerate(const GlobalOptions& global, const GenerateOptions& options) {
  if (Status valid = CheckFlags(options); !valid.ok()) return ReportError(valid);
  auto prompt = ReadPrompt(options);
  if (!prompt.ok()) return ReportError(prompt.status());
  const Tokenizer* tokenizer = prompt->tokenizer.get();
  auto opened =
      OpenModel(global, options.run, {1, static_cast<int64_t>(prompt->ids.size()), options.n_new});
  if (!opened.ok()) {
    return ReportError(tokenizer ? opened.status().WithContext(prompt->source) : opened.status());
  }
  if ((*opened)->followed) return 0;  // a tensor-parallel rank other than 0: rank 0 printed
  // Stream: each token is written and flushed as soon as it is sampled.
  std::optional<StreamingDecoder> decoder;
  if (tokenizer) decoder.emplace(*tokenizer);
  bool first = true;
  const TokenCallback print = [&](size_t, int32_t token) {
    if (decoder) {
      fmt::print("{}", PrintableText(decoder->Push(token)));
    } else {
      fmt::print("{}{}", first ? "" : " ", token);
    }
    first = false;
    std::fflush(stdout);
  };
  StopPredicate stop = nullptr;
  if (tokenizer && !options.ignore_eos) {
    stop = [tokenizer](int32_t token) { return tokenizer->IsEndOfGeneration(token); };
  }
  auto result = Generate(*(*opened)->executor, {prompt->ids}, options.n_new, options.sampling, 0,
                         print, stop);
  // Ends the text (or the line of ids), also when a later step failed.
  if (decoder) fmt::print("{}\n", PrintableText(decoder->Flush()));
  if (!decoder && !first) fmt::print("\n");
  std::fflush(stdout);
  if (!result.ok()) return ReportError(result.status().WithContext(options.run.model_path));
  if (tokenizer && options.print_ids) {
    fmt::print(stderr, "prompt ids: {}\ngenerated ids: {}\n", fmt::join(prompt->ids, " "),
               fmt::join(result->tokens[0], " "));
  }
  if (options.timing) PrintTiming(*result, prompt->ids.size());
  return 0;
}

}  // namespace hwinfer::cli
