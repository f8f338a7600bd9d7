// chat_template_test.cpp — each chat template family against the text llama.cpp renders for it
// (the peer build's llama-server /apply-template, --chat-template NAME, on one system + user +
// assistant + user chat with a padded answer, so each family's trimming shows), recognition of
// each family from a template as models ship it (llama.cpp recognised each of these strings as
// that family), the name override, and the errors.
#include "hwinfer/chat_template.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "gguf_edit.h"
#include "hwinfer/tokenizer.h"
#include "temp_folder_test.h"

namespace hwinfer {
namespace {

using ::testing::HasSubstr;

const std::vector<ChatMessage> kChat = {{"system", "Be brief."},
                                        {"user", "Hi"},
                                        {"assistant", " Hello! "},
                                        {"user", "Capital of France?"}};

// llama.cpp's rendering of kChat with the generation prompt, per family.
const std::map<std::string, std::string> kRendered = {
    {"chatml",
     "<|im_start|>system\n"
     "Be brief.<|im_end|>\n"
     "<|im_start|>user\n"
     "Hi<|im_end|>\n"
     "<|im_start|>assistant\n"
     " Hello! <|im_end|>\n"
     "<|im_start|>user\n"
     "Capital of France?<|im_end|>\n"
     "<|im_start|>assistant\n"},
    {"gemma",
     "<start_of_turn>user\n"
     "Be brief.\n"
     "\n"
     "Hi<end_of_turn>\n"
     "<start_of_turn>model\n"
     "Hello!<end_of_turn>\n"
     "<start_of_turn>user\n"
     "Capital of France?<end_of_turn>\n"
     "<start_of_turn>model\n"},
    {"llama2",
     "[INST] Be brief.\n"
     "Hi [/INST] Hello! </s>[INST] Capital of France? [/INST]"},
    {"llama2-sys",
     "[INST] <<SYS>>\n"
     "Be brief.\n"
     "<</SYS>>\n"
     "\n"
     "Hi [/INST] Hello! </s>[INST] Capital of France? [/INST]"},
    {"llama2-sys-bos",
     "[INST] <<SYS>>\n"
     "Be brief.\n"
     "<</SYS>>\n"
     "\n"
     "Hi [/INST] Hello! </s><s>[INST] Capital of France? [/INST]"},
    {"llama2-sys-strip",
     "[INST] <<SYS>>\n"
     "Be brief.\n"
     "<</SYS>>\n"
     "\n"
     "Hi [/INST]Hello!</s>[INST] Capital of France? [/INST]"},
    {"llama3",
     "<|start_header_id|>system<|end_header_id|>\n"
     "\n"
     "Be brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n"
     "\n"
     "Hi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n"
     "\n"
     "Hello!<|eot_id|><|start_header_id|>user<|end_header_id|>\n"
     "\n"
     "Capital of France?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n"
     "\n"},
    {"mistral-v1",
     " [INST] Be brief.\n"
     "\n"
     "Hi [/INST]  Hello! </s> [INST] Capital of France? [/INST]"},
    {"mistral-v3",
     "[INST] Be brief.\n"
     "\n"
     "Hi[/INST] Hello!</s>[INST] Capital of France?[/INST]"},
    {"mistral-v3-tekken",
     "[INST]Be brief.\n"
     "\n"
     "Hi[/INST] Hello! </s>[INST]Capital of France?[/INST]"},
    {"mistral-v7",
     "[SYSTEM_PROMPT] Be brief.[/SYSTEM_PROMPT][INST] Hi[/INST]  Hello! </s>[INST] Capital of "
     "France?[/INST]"},
    {"phi3",
     "<|system|>\n"
     "Be brief.<|end|>\n"
     "<|user|>\n"
     "Hi<|end|>\n"
     "<|assistant|>\n"
     " Hello! <|end|>\n"
     "<|user|>\n"
     "Capital of France?<|end|>\n"
     "<|assistant|>\n"},
};

// Templates as models carry them in tokenizer.chat_template (Hugging Face tokenizer_config.json;
// some cut to the part that holds the markers), by the family llama.cpp recognises in each.
const std::map<std::string, std::string> kShippedTemplates = {
    {"llama3",
     R"jinja({% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>

'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{{ '<|start_header_id|>assistant<|end_header_id|>

' }})jinja"},
    {"chatml",
     R"jinja({% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %})jinja"},
    {"llama2-sys-strip",
     R"jinja({% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\n' + system_message + '\n<</SYS>>\n\n' + message['content'] %}{% else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %})jinja"},
    {"llama2-sys",
     R"jinja({% for message in messages %}{% if message['role'] == 'system' %}{{ '[INST] <<SYS>>\n' + message['content'] + '\n<</SYS>>\n\n' }}{% elif message['role'] == 'user' %}{{ message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ message['content'] + '</s>[INST] ' }}{% endif %}{% endfor %})jinja"},
    {"llama2",
     R"jinja({{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token + ' ' }}{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %})jinja"},
    {"mistral-v1",
     R"jinja({{- bos_token }}{%- for message in loop_messages %}{%- if message['role'] == 'user' %}{%- if loop.first and system_message is defined %}{{- ' [INST] ' + system_message + '\n\n' + message['content'] + ' [/INST]' }}{%- else %}{{- ' [INST] ' + message['content'] + ' [/INST]' }}{%- endif %}{%- elif message['role'] == 'assistant' %}{{- ' ' + message['content'] + eos_token}}{%- endif %}{%- endfor %})jinja"},
    {"mistral-v3",
     R"jinja({%- if messages[0]['role'] == 'system' %}{%- set system_message = messages[0]['content'] %}{%- set loop_messages = messages[1:] %}{%- else %}{%- set loop_messages = messages %}{%- endif %}{{- bos_token }}{%- for message in loop_messages %}{%- if message['role'] == 'user' %}{%- if tools is not none and (message == user_messages[-1]) %}{{- '[AVAILABLE_TOOLS] [' }}{%- endif %}{%- if loop.last and system_message is defined %}{{- '[INST] ' + system_message + '\n\n' + message['content'] + '[/INST]' }}{%- else %}{{- '[INST] ' + message['content'] + '[/INST]' }}{%- endif %}{%- elif message['role'] == 'assistant' %}{{- ' ' + message['content']|trim + eos_token}}{%- endif %}{%- endfor %})jinja"},
    {"mistral-v3-tekken",
     R"jinja({%- for message in loop_messages %}{%- if message["role"] == "user" %}{%- if tools is not none and (message == user_messages[-1]) %}{{- "[AVAILABLE_TOOLS][" }}{%- endif %}{{- "[INST]" + message["content"] + "[/INST]" }}{%- elif message["role"] == "assistant" %}{{- message["content"] + eos_token}}{%- endif %}{%- endfor %})jinja"},
    {"mistral-v7",
     R"jinja({{- bos_token }}{%- for message in messages %}{%- if message['role'] == 'system' %}{{- '[SYSTEM_PROMPT] ' + message['content'] + '[/SYSTEM_PROMPT]' }}{%- elif message['role'] == 'user' %}{{- '[INST] ' + message['content'] + '[/INST]' }}{%- elif message['role'] == 'assistant' %}{{- ' ' + message['content'] + eos_token }}{%- endif %}{%- endfor %})jinja"},
    {"gemma",
     R"jinja({{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %})jinja"},
    {"phi3",
     R"jinja({{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') %}{{'<|user|>' + '\n' + message['content'] + '<|end|>' + '\n' + '<|assistant|>' + '\n'}}{% elif (message['role'] == 'assistant') %}{{message['content'] + '<|end|>' + '\n'}}{% endif %}{% endfor %})jinja"},
};

TEST(ChatTemplate, EveryFamilyRendersAsLlamaCpp) {
  ASSERT_EQ(kRendered.size(), ChatTemplate::Names().size());
  for (const auto& [name, want] : kRendered) {
    auto chat_template = ChatTemplate::FromName(name);
    ASSERT_TRUE(chat_template.ok()) << chat_template.status().ToString();
    auto text = chat_template->Render(kChat, true);
    ASSERT_TRUE(text.ok()) << text.status().ToString();
    EXPECT_EQ(*text, want) << name;
  }
}

TEST(ChatTemplate, EveryShippedTemplateIsRecognisedAsItsFamily) {
  for (const auto& [family, jinja] : kShippedTemplates) {
    auto recognized = ChatTemplate::Recognize(jinja);
    ASSERT_TRUE(recognized.ok()) << family << ": " << recognized.status().ToString();
    EXPECT_EQ(recognized->name(), family);
  }
  // A family name stands for itself in the metadata too (llama.cpp accepts it there).
  auto named = ChatTemplate::Recognize("gemma");
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->name(), "gemma");
}

TEST(ChatTemplate, GenerationPromptOpensTheAssistantTurnOnlyWhenAsked) {
  const std::vector<ChatMessage> chat = {{"user", "Hi"}};
  auto llama3 = ChatTemplate::FromName("llama3");
  ASSERT_TRUE(llama3.ok());
  EXPECT_EQ(*llama3->Render(chat, false),
            "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>");
  EXPECT_EQ(*llama3->Render(chat, true),
            "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  auto chatml = ChatTemplate::FromName("chatml");
  ASSERT_TRUE(chatml.ok());
  EXPECT_EQ(*chatml->Render(chat, false), "<|im_start|>user\nHi<|im_end|>\n");
}

// BOS comes from the tokenizer: no family writes it first (Llama 3's template starts with
// bos_token; llama.cpp's rendering, like this one, does not).
TEST(ChatTemplate, NoFamilyStartsWithTheBosText) {
  for (std::string_view name : ChatTemplate::Names()) {
    auto text = ChatTemplate::FromName(name)->Render(kChat, true);
    ASSERT_TRUE(text.ok());
    EXPECT_FALSE(text->starts_with("<s>")) << name;
    EXPECT_FALSE(text->starts_with("<|begin_of_text|>")) << name;
    EXPECT_FALSE(text->starts_with("<bos>")) << name;
  }
}

TEST(ChatTemplate, UnknownNameListsTheKnownOnes) {
  auto unknown = ChatTemplate::FromName("mistral");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.status().message(),
              HasSubstr("unknown chat template 'mistral'; known: chatml, gemma, llama2, "
                        "llama2-sys, llama2-sys-bos, llama2-sys-strip, llama3, mistral-v1, "
                        "mistral-v3, mistral-v3-tekken, mistral-v7, phi3"));
}

TEST(ChatTemplate, UnrecognisedTemplateIsAnErrorListingTheNames) {
  // Vicuna's format, and ChatML markers in Phi-4's format: neither is a family here.
  for (const std::string jinja :
       {"{% for m in messages %}{{ 'USER: ' + m['content'] + '\\nASSISTANT: ' }}{% endfor %}",
        "{{ '<|im_start|>' + m['role'] + '<|im_sep|>' + m['content'] + '<|im_end|>' }}"}) {
    auto recognized = ChatTemplate::Recognize(jinja);
    ASSERT_FALSE(recognized.ok()) << jinja;
    EXPECT_EQ(recognized.status().code(), StatusCode::kUnsupported);
    EXPECT_THAT(recognized.status().message(), HasSubstr("unrecognised chat template '{"));
    EXPECT_THAT(recognized.status().message(), HasSubstr("...'; known: chatml, gemma, llama2"));
  }
}

TEST(ChatTemplate, ChatWithoutUserMessageIsAnError) {
  auto chatml = ChatTemplate::FromName("chatml");
  ASSERT_TRUE(chatml.ok());
  for (const std::vector<ChatMessage>& chat :
       {std::vector<ChatMessage>{}, std::vector<ChatMessage>{{"system", "Be brief."}},
        std::vector<ChatMessage>{{"system", "Be brief."}, {"assistant", "Hello"}}}) {
    auto text = chatml->Render(chat, true);
    ASSERT_FALSE(text.ok());
    EXPECT_EQ(text.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(text.status().message(), HasSubstr("the chat has no user message"));
  }
}

TEST(ChatTemplate, UnknownRoleIsAnErrorNamingTheMessage) {
  auto text = ChatTemplate::FromName("llama3")->Render({{"user", "Hi"}, {"tool\x1b", "42"}}, true);
  ASSERT_FALSE(text.ok());
  EXPECT_THAT(text.status().message(),
              HasSubstr("chat message 1 has the role 'tool\\x1b'; expected system, user or "
                        "assistant"));
}

std::string TextData(const std::string& name) {
  return std::string(HWINFER_SOURCE_DIR) + "/tests/data/text/" + name;
}

class ChatTemplateFromGguf : public test::TempFolderTest {};

TEST_F(ChatTemplateFromGguf, ModelsTemplateIsRecognised) {
  const std::string path = (dir_ / "llama3-template.gguf").string();
  ASSERT_TRUE(test::WriteEditedGguf(
                  TextData("ggml-vocab-llama-spm.gguf"),
                  [](test::Metadata& kvs, std::vector<test::TensorCopy>&) {
                    test::SetKv(kvs, "tokenizer.chat_template",
                                GgufValue::String(kShippedTemplates.at("llama3")));
                  },
                  path)
                  .ok());
  auto file = GgufFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto chat_template = ChatTemplate::FromGguf(**file);
  ASSERT_TRUE(chat_template.ok()) << chat_template.status().ToString();
  EXPECT_EQ(chat_template->name(), "llama3");
}

TEST_F(ChatTemplateFromGguf, ModelWithoutTemplateNamesFileAndKey) {
  auto file = GgufFile::Open(TextData("tiny-llama-spm-text-q8_0.gguf"));
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto chat_template = ChatTemplate::FromGguf(**file);
  ASSERT_FALSE(chat_template.ok());
  EXPECT_EQ(chat_template.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(chat_template.status().message(),
              HasSubstr("tiny-llama-spm-text-q8_0.gguf: metadata key 'tokenizer.chat_template' is "
                        "missing"));
}

// The rendered chat tokenized as llama.cpp tokenizes a chat prompt (BOS as the metadata says, the
// special tokens' texts parsed): llama.cpp's llama-tokenize gives these ids for this text with the
// Llama 2 vocabulary. One BOS first, and the <s> / </s> inside the history become BOS / EOS.
TEST(ChatTemplate, RenderedChatTokenizesAsLlamaCpp) {
  auto file = GgufFile::Open(TextData("ggml-vocab-llama-spm.gguf"));
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto tokenizer = Tokenizer::FromGguf(**file);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  auto text = ChatTemplate::FromName("llama2-sys-bos")->Render(kChat, true);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ((*tokenizer)->Encode(*text, true, true),
            (std::vector<int32_t>{1,     518,   25580, 29962, 3532,  14816, 29903, 6778,  13,
                                  3629,  11473, 29889, 13,    29966, 829,   14816, 29903, 6778,
                                  13,    13,    18567, 518,   29914, 25580, 29962, 15043, 29991,
                                  29871, 2,     1,     518,   25580, 29962, 25343, 310,   3444,
                                  29973, 518,   29914, 25580, 29962}));
}

// The same for Llama 3 with its byte-level BPE vocabulary (decompressed into the build tree):
// llama-tokenize's ids for the llama3 rendering of kChat. One BOS, the headers and <|eot_id|>
// as their special tokens; the assistant's " Hello! " trimmed as llama.cpp trims it.
TEST(ChatTemplate, Llama3ChatTokenizesAsLlamaCpp) {
  auto file =
      GgufFile::Open(std::string(HWINFER_TEST_DATA_BUILD_DIR) + "/text/ggml-vocab-llama-bpe.gguf");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto tokenizer = Tokenizer::FromGguf(**file);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  auto chat_template = ChatTemplate::FromGguf(**file);  // the vocabulary's own template
  ASSERT_TRUE(chat_template.ok()) << chat_template.status().ToString();
  ASSERT_EQ(chat_template->name(), "llama3");
  auto text = chat_template->Render(kChat, true);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(
      (*tokenizer)->Encode(*text, true, true),
      (std::vector<int32_t>{128000, 128006, 9125,   128007, 271,    3513,   10015,  13,    128009,
                            128006, 882,    128007, 271,    13347,  128009, 128006, 78191, 128007,
                            271,    9906,   0,      128009, 128006, 882,    128007, 271,   64693,
                            315,    9822,   30,     128009, 128006, 78191,  128007, 271}));
}

}  // namespace
}  // namespace hwinfer
