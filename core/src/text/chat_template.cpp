// chat_template.cpp — see hwinfer/chat_template.h. Recognition follows llama.cpp's marker checks
// in their order (the first family whose markers the template holds wins); each family's text is
// what llama.cpp writes for it, pinned by tests/unit/chat_template_test.cpp. Nothing here runs
// Jinja or tokenizes.
#include "hwinfer/chat_template.h"

#include <fmt/format.h>

#include <algorithm>

#include "hwinfer/text_escape.h"

namespace hwinfer {
namespace {

using Messages = std::vector<ChatMessage>;

// ASCII whitespace trimmed from both ends (as llama.cpp's trim, which uses isspace).
std::string Trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t\n\v\f\r";
  const size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return "";
  return std::string(text.substr(begin, text.find_last_not_of(kSpace) - begin + 1));
}

// ChatML (Qwen, many fine-tunes): <|im_start|>role\ncontent<|im_end|>\n per message.
std::string RenderChatml(const Messages& messages, bool add_generation_prompt) {
  std::string out;
  for (const ChatMessage& m : messages)
    out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
  if (add_generation_prompt) out += "<|im_start|>assistant\n";
  return out;
}

// Llama 3: a header per message, content trimmed, <|eot_id|> after each.
std::string RenderLlama3(const Messages& messages, bool add_generation_prompt) {
  std::string out;
  for (const ChatMessage& m : messages) {
    out +=
        "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + Trim(m.content) + "<|eot_id|>";
  }
  if (add_generation_prompt) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
  return out;
}

// Phi-3: <|role|>\ncontent<|end|>\n per message.
std::string RenderPhi3(const Messages& messages, bool add_generation_prompt) {
  std::string out;
  for (const ChatMessage& m : messages) out += "<|" + m.role + "|>\n" + m.content + "<|end|>\n";
  if (add_generation_prompt) out += "<|assistant|>\n";
  return out;
}

// Gemma: no system role (its text opens the next user turn), the assistant is "model", content
// trimmed.
std::string RenderGemma(const Messages& messages, bool add_generation_prompt) {
  std::string out, system;
  for (const ChatMessage& m : messages) {
    if (m.role == "system") {
      system += Trim(m.content);
      continue;
    }
    const std::string role = m.role == "assistant" ? "model" : m.role;
    out += "<start_of_turn>" + role + "\n";
    if (!system.empty() && role != "model") {
      out += system + "\n\n";
      system.clear();
    }
    out += Trim(m.content) + "<end_of_turn>\n";
  }
  if (add_generation_prompt) out += "<start_of_turn>model\n";
  return out;
}

// Llama 2 and the [INST] templates without markers of their own. |system_block|: the system
// text in <<SYS>> (otherwise it is the first line of the turn); |bos_in_history|: <s> before
// every [INST] but the first; |strip|: every message trimmed. No generation prompt: the turn is
// open after [/INST].
std::string RenderLlama2(const Messages& messages, bool system_block, bool bos_in_history,
                         bool strip) {
  std::string out = "[INST] ";
  bool inside_turn = true;
  for (const ChatMessage& m : messages) {
    const std::string content = strip ? Trim(m.content) : m.content;
    if (!inside_turn) {
      out += bos_in_history ? "<s>[INST] " : "[INST] ";
      inside_turn = true;
    }
    if (m.role == "system") {
      out += system_block ? "<<SYS>>\n" + content + "\n<</SYS>>\n\n" : content + "\n";
    } else if (m.role == "user") {
      out += content + " [/INST]";
    } else {
      out += content + "</s>";
      inside_turn = false;
    }
  }
  return out;
}

// Mistral's official v1 / v3 / v3-tekken templates: they differ in the spaces around [INST] and
// whether the answer is trimmed. The system text opens the first turn.
std::string RenderMistral(const Messages& messages, std::string_view version) {
  const std::string leading = version == "v1" ? " " : "";
  const std::string trailing = version == "v3-tekken" ? "" : " ";
  std::string out;
  bool inside_turn = false;
  for (const ChatMessage& m : messages) {
    if (!inside_turn) {
      out += leading + "[INST]" + trailing;
      inside_turn = true;
    }
    if (m.role == "system") {
      out += m.content + "\n\n";
    } else if (m.role == "user") {
      out += m.content + leading + "[/INST]";
    } else {
      out += trailing + (version == "v3" ? Trim(m.content) : m.content) + "</s>";
      inside_turn = false;
    }
  }
  return out;
}

// Mistral v7: [SYSTEM_PROMPT] and [INST] blocks, a space after each opening tag.
std::string RenderMistralV7(const Messages& messages) {
  std::string out;
  for (const ChatMessage& m : messages) {
    if (m.role == "system") {
      out += "[SYSTEM_PROMPT] " + m.content + "[/SYSTEM_PROMPT]";
    } else if (m.role == "user") {
      out += "[INST] " + m.content + "[/INST]";
    } else {
      out += " " + m.content + "</s>";
    }
  }
  return out;
}

// The [INST] families: Mistral's official templates by their markers, else Llama 2's variants.
std::string_view RecognizeInstFamily(std::string_view jinja) {
  const auto has = [&](std::string_view marker) { return jinja.find(marker) != jinja.npos; };
  if (has("[SYSTEM_PROMPT]")) return "mistral-v7";
  if (has("' [INST] ' + system_message") || has("[AVAILABLE_TOOLS]")) {
    if (has(" [INST]")) return "mistral-v1";
    return has("\"[INST]\"") ? "mistral-v3-tekken" : "mistral-v3";
  }
  if (has("content.strip()")) return "llama2-sys-strip";
  if (has("bos_token + '[INST]")) return "llama2-sys-bos";
  return has("<<SYS>>") ? "llama2-sys" : "llama2";
}

// llama.cpp's checks for the families named in Names(), in its order; "" when none matches.
std::string_view RecognizeFamily(std::string_view jinja) {
  const auto has = [&](std::string_view marker) { return jinja.find(marker) != jinja.npos; };
  if (has("<|im_start|>")) {
    // <|im_sep|> is Phi-4's and <end_of_utterance> SmolVLM's: ChatML markers, other formats.
    return has("<|im_sep|>") || has("<end_of_utterance>") ? "" : "chatml";
  }
  if (jinja.starts_with("mistral") || has("[INST]")) return RecognizeInstFamily(jinja);
  if (has("<|assistant|>") && has("<|end|>")) return "phi3";
  if (has("<start_of_turn>")) return "gemma";
  if (has("<|start_header_id|>") && has("<|end_header_id|>")) return "llama3";
  return "";
}

std::string KnownNames() { return fmt::format("{}", fmt::join(ChatTemplate::Names(), ", ")); }

Status CheckMessages(const Messages& messages) {
  bool has_user = false;
  for (size_t i = 0; i < messages.size(); ++i) {
    const std::string& role = messages[i].role;
    if (role != "system" && role != "user" && role != "assistant") {
      return InvalidArgument(
          fmt::format("chat message {} has the role '{}'; expected system, user or assistant", i,
                      EscapeControlCharacters(role)));
    }
    has_user = has_user || role == "user";
  }
  if (!has_user) {
    return InvalidArgument(
        fmt::format("the chat has no user message ({} messages)", messages.size()));
  }
  return Status::Ok();
}

}  // namespace

const std::vector<std::string_view>& ChatTemplate::Names() {
  static const std::vector<std::string_view> names = {
      "chatml",           "gemma",  "llama2",     "llama2-sys", "llama2-sys-bos",
      "llama2-sys-strip", "llama3", "mistral-v1", "mistral-v3", "mistral-v3-tekken",
      "mistral-v7",       "phi3"};
  return names;
}

StatusOr<ChatTemplate> ChatTemplate::FromName(std::string_view name) {
  if (std::find(Names().begin(), Names().end(), name) != Names().end()) {
    return ChatTemplate(std::string(name));
  }
  return InvalidArgument(fmt::format("unknown chat template '{}'; known: {}",
                                     EscapeControlCharacters(name), KnownNames()));
}

StatusOr<ChatTemplate> ChatTemplate::Recognize(std::string_view jinja) {
  if (std::find(Names().begin(), Names().end(), jinja) != Names().end()) {
    return ChatTemplate(std::string(jinja));
  }
  const std::string_view family = RecognizeFamily(jinja);
  if (!family.empty()) return ChatTemplate(std::string(family));
  constexpr size_t kShown = 60;
  return Unsupported(fmt::format("unrecognised chat template '{}{}'; known: {}",
                                 EscapeControlCharacters(jinja.substr(0, kShown)),
                                 jinja.size() > kShown ? "..." : "", KnownNames()));
}

StatusOr<ChatTemplate> ChatTemplate::FromGguf(const GgufFile& file) {
  auto jinja = file.GetString("tokenizer.chat_template");
  if (!jinja.ok()) return jinja.status();
  auto recognized = Recognize(*jinja);
  if (!recognized.ok()) return recognized.status().WithContext(file.name());
  return recognized;
}

StatusOr<std::string> ChatTemplate::Render(const std::vector<ChatMessage>& messages,
                                           bool add_generation_prompt) const {
  HWINFER_RETURN_IF_ERROR(CheckMessages(messages));
  if (name_ == "chatml") return RenderChatml(messages, add_generation_prompt);
  if (name_ == "llama3") return RenderLlama3(messages, add_generation_prompt);
  if (name_ == "phi3") return RenderPhi3(messages, add_generation_prompt);
  if (name_ == "gemma") return RenderGemma(messages, add_generation_prompt);
  if (name_ == "mistral-v7") return RenderMistralV7(messages);
  if (name_.starts_with("mistral-")) return RenderMistral(messages, name_.substr(8));
  return RenderLlama2(messages, name_ != "llama2", name_ == "llama2-sys-bos",
                      name_ == "llama2-sys-strip");
}

}  // namespace hwinfer
