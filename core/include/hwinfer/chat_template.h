// hwinfer/chat_template.h — a conversation (system / user / assistant messages) rendered as the
// prompt text a chat model was trained on, the way llama.cpp's llama_chat_apply_template renders
// it: the family is recognised from the GGUF's `tokenizer.chat_template` (a Jinja template) by
// marker strings, or named, and each family is written out by code. There is no Jinja engine: a
// template of no known family is an error, never a guess.
//
// The rendered text holds the family's special tokens as text (`<|im_start|>`, `[INST]`, ...): it
// is meant to be tokenized with parse_special on and add_special as the metadata says. No family
// starts with the BOS text, so BOS comes from the tokenizer alone (never twice).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hwinfer/gguf.h"
#include "hwinfer/status.h"

namespace hwinfer {

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

class ChatTemplate {
 public:
  // The families by llama.cpp's names: chatml, gemma, llama2 (`[INST]` without a system block),
  // llama2-sys, llama2-sys-bos, llama2-sys-strip, llama3, mistral-v1, mistral-v3,
  // mistral-v3-tekken, mistral-v7, phi3.
  static const std::vector<std::string_view>& Names();

  // The family named |name|. InvalidArgument naming it and listing Names() otherwise.
  static StatusOr<ChatTemplate> FromName(std::string_view name);
  // The family of a Jinja template (or of a template that is one of Names(), as llama.cpp
  // accepts). Unsupported "unrecognised chat template '<its start>...'; known: ..." otherwise.
  static StatusOr<ChatTemplate> Recognize(std::string_view jinja);
  // |file|'s tokenizer.chat_template, recognised. NotFound naming the file and the key when the
  // file has none.
  static StatusOr<ChatTemplate> FromGguf(const GgufFile& file);

  const std::string& name() const { return name_; }

  // |messages| as one prompt; with |add_generation_prompt| the assistant's turn is opened at the
  // end (families whose format has no such header add nothing). InvalidArgument when no message
  // has the role "user", or a role is not system / user / assistant (naming the message).
  StatusOr<std::string> Render(const std::vector<ChatMessage>& messages,
                               bool add_generation_prompt) const;

 private:
  explicit ChatTemplate(std::string name) : name_(std::move(name)) {}
  std::string name_;
};

}  // namespace hwinfer
