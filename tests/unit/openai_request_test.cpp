// openai_request_test.cpp — `hwinfer serve`'s reading of OpenAI request bodies (every field, every
// kind of bad value named in its 400) and its text output (whole characters, stop strings cut
// even when they span tokens, held-back text released when no stop string completes).
#include "openai_request.h"

#include <gtest/gtest.h>

#include "endpoint_client.h"
#include "hwinfer/gguf.h"
#include "openai_response.h"
#include "text_output.h"
#include "tokenizer_cases.h"

namespace hwinfer::serve {
namespace {

CompletionRequest ParseOk(const std::string& body, bool chat = false) {
  CompletionRequest request;
  const auto error = ParseCompletionRequest(body, chat, request);
  EXPECT_FALSE(error.has_value()) << body << " -> " << (error ? error->message : "");
  return request;
}

ApiError ParseBad(const std::string& body, bool chat = false) {
  CompletionRequest request;
  const auto error = ParseCompletionRequest(body, chat, request);
  EXPECT_TRUE(error.has_value()) << body;
  return error.value_or(ApiError{});
}

TEST(OpenAiRequest, CompletionFields) {
  const CompletionRequest r = ParseOk(
      R"({"model": "tiny", "prompt": "Hello", "max_tokens": 5, "temperature": 0, "top_p": 0.9,
          "top_k": -1, "seed": 7, "stop": ["\n", "END"], "stream": true,
          "stream_options": {"include_usage": true}, "ignore_eos": true, "n": 1,
          "logprobs": null, "user": "someone", "unknown_field": [1, 2]})");
  EXPECT_EQ(r.model, "tiny");
  EXPECT_EQ(r.prompt_text, "Hello");
  EXPECT_FALSE(r.prompt_is_ids);
  EXPECT_EQ(r.max_tokens, 5);
  EXPECT_EQ(r.temperature, 0.0);
  EXPECT_DOUBLE_EQ(r.top_p, 0.9);
  EXPECT_EQ(r.top_k, 0);
  EXPECT_EQ(r.seed, 7u);
  EXPECT_EQ(r.stop, (std::vector<std::string>{"\n", "END"}));
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_TRUE(r.ignore_eos);
  const CompletionRequest ids = ParseOk(R"({"prompt": [1, 450, 7483]})");
  EXPECT_TRUE(ids.prompt_is_ids);
  EXPECT_EQ(ids.prompt_ids, (std::vector<int32_t>{1, 450, 7483}));
  EXPECT_FALSE(ids.max_tokens.has_value());
  EXPECT_EQ(ids.temperature, 1.0);  // OpenAI's default
  EXPECT_EQ(ParseOk(R"({"prompt": ["one"]})").prompt_text, "one");
  EXPECT_EQ(ParseOk(R"({"prompt": [[5, 6]]})").prompt_ids, (std::vector<int32_t>{5, 6}));
}

TEST(OpenAiRequest, ChatMessages) {
  const CompletionRequest r = ParseOk(
      R"({"messages": [{"role": "developer", "content": "Be brief."},
                       {"role": "user", "content": [{"type": "text", "text": "Hi "},
                                                    {"type": "text", "text": "there"}]}],
          "max_completion_tokens": 9})",
      true);
  ASSERT_EQ(r.messages.size(), 2u);
  EXPECT_EQ(r.messages[0].role, "system");
  EXPECT_EQ(r.messages[1].content, "Hi there");
  EXPECT_EQ(r.max_tokens, 9);
}

TEST(OpenAiRequest, BadValuesAreNamed) {
  const struct {
    const char* body;
    bool chat;
    const char* param;
    const char* says;
  } cases[] = {
      {"{not json", false, "", "not valid JSON"},
      {"[1, 2]", false, "", "must be a JSON object"},
      {"{}", false, "prompt", "'prompt' is required"},
      {R"({"prompt": ""})", false, "prompt", "must not be empty"},
      {R"({"prompt": ["a", "b"]})", false, "prompt", "only one prompt"},
      {R"({"prompt": [1, -2]})", false, "prompt", "token ids must be integers >= 0"},
      {R"({"prompt": "x", "max_tokens": "ten"})", false, "max_tokens", "must be an integer"},
      {R"({"prompt": "x", "max_tokens": 0})", false, "max_tokens", "[1, "},
      {R"({"prompt": "x", "max_tokens": 2.5})", false, "max_tokens", "got 2.5"},
      {R"({"prompt": "x", "temperature": 3})", false, "temperature", "[0, 2]"},
      {R"({"prompt": "x", "top_p": 0})", false, "top_p", "'top_p' must be a number"},
      {R"({"prompt": "x", "n": 2})", false, "n", "'n' must be an integer in [1, 1]"},
      {R"({"prompt": "x", "stream": "yes"})", false, "stream", "true or false"},
      {R"({"prompt": "x", "stop": ["a", "b", "c", "d", "e"]})", false, "stop", "up to 4"},
      {R"({"prompt": "x", "stop": [""]})", false, "stop", "must not be empty"},
      {R"({"prompt": "x", "logprobs": 2})", false, "logprobs", "not supported"},
      {R"({"prompt": "x", "echo": true})", false, "echo", "not supported"},
      {R"({"prompt": "x", "stream_options": {"include_usage": 1}})", false, "stream_options",
       "true or false"},
      {R"({"prompt": "x", "model": 5})", false, "model", "must be a string"},
      {R"({"messages": []})", true, "messages", "non-empty array"},
      {R"({"messages": [{"role": "tool", "content": "x"}]})", true, "messages[0].role",
       "got 'tool'"},
      {R"({"messages": [{"role": "user", "content": 5}]})", true, "messages[0].content",
       "must be a string"},
  };
  for (const auto& c : cases) {
    const ApiError error = ParseBad(c.body, c.chat);
    EXPECT_EQ(error.http_status, 400) << c.body;
    EXPECT_EQ(error.param, c.param) << c.body;
    EXPECT_NE(error.message.find(c.says), std::string::npos) << c.body << " -> " << error.message;
    const nlohmann::json json = error.ToJson();
    EXPECT_EQ(json["error"]["type"], "invalid_request_error");
    EXPECT_EQ(json["error"]["code"], 400);
  }
}

TEST(OpenAiResponse, BodiesAndChunksHaveTheApisShape) {
  const ResponseHeader completion = NewResponseHeader(false, "tiny");
  EXPECT_EQ(completion.id.rfind("cmpl-", 0), 0u);
  nlohmann::json body = CompletionBody(completion, "Paris", "length", 6, 1);
  EXPECT_EQ(body["object"], "text_completion");
  EXPECT_EQ(body["choices"][0]["text"], "Paris");
  EXPECT_EQ(body["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(body["usage"]["total_tokens"], 7);
  const ResponseHeader chat = NewResponseHeader(true, "tiny");
  EXPECT_EQ(chat.id.rfind("chatcmpl-", 0), 0u);
  body = ChunkBody(chat, "", "", true);
  EXPECT_EQ(body["object"], "chat.completion.chunk");
  EXPECT_EQ(body["choices"][0]["delta"]["role"], "assistant");
  EXPECT_TRUE(body["choices"][0]["finish_reason"].is_null());
  body = ChunkBody(chat, "", "stop");
  EXPECT_TRUE(body["choices"][0]["delta"].empty());
  EXPECT_EQ(UsageChunk(chat, 3, 4)["choices"].size(), 0u);
  EXPECT_EQ(SseEvent(nlohmann::json{{"a", 1}}), "data: {\"a\":1}\n\n");
}

TEST(TextOutput, StopStringsAreCutAcrossTokensAndHeldTextIsReleased) {
  auto tokenizer = test::LoadTokenizer(std::string(HWINFER_SOURCE_DIR) +
                                       "/tests/data/text/ggml-vocab-llama-spm.gguf");
  ASSERT_NE(tokenizer, nullptr);
  const std::vector<int32_t> ids = tokenizer->Encode(" Hello world. Bye now", false, false);
  ASSERT_GE(ids.size(), 5u);
  auto run = [&](std::vector<std::string> stops, bool* stopped) {
    TextOutput output(*tokenizer, std::move(stops));
    std::string text;
    for (int32_t id : ids) text += output.Push(id);
    text += output.Finish();
    *stopped = output.stopped();
    return text;
  };
  bool stopped = false;
  EXPECT_EQ(run({}, &stopped), "  Hello world. Bye now");  // the space prefix + the text's own
  EXPECT_FALSE(stopped);
  EXPECT_EQ(run({"d. B"}, &stopped), "  Hello worl");
  EXPECT_TRUE(stopped);
  EXPECT_EQ(run({"now!", "zzz"}, &stopped), "  Hello world. Bye now");  // "now" held, released
  EXPECT_FALSE(stopped);
}

TEST(Endpoint, UrlsAreReadOrRefusedWithTheExpectedForm) {
  auto plain = ParseEndpoint("http://127.0.0.1:8080");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->host, "127.0.0.1");
  EXPECT_EQ(plain->port, 8080);
  EXPECT_EQ(plain->prefix, "/v1");
  auto prefixed = ParseEndpoint("http://server.example:9000/openai/v1/");
  ASSERT_TRUE(prefixed.ok());
  EXPECT_EQ(prefixed->host, "server.example");
  EXPECT_EQ(prefixed->prefix, "/openai/v1");
  auto ipv6 = ParseEndpoint("http://[::1]:8000");
  ASSERT_TRUE(ipv6.ok());
  EXPECT_EQ(ipv6->host, "::1");
  for (const char* bad : {"https://a:1", "ftp://x", "http://host", "http://host:0",
                          "http://host:70000", "http://:80", "http://host:8x"}) {
    auto parsed = ParseEndpoint(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.status().message().find("expected http://HOST:PORT"), std::string::npos);
  }
}

}  // namespace
}  // namespace hwinfer::serve
