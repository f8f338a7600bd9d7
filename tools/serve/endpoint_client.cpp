// endpoint_client.cpp — see endpoint_client.h. The stream is parsed line by line as it arrives:
// "data: {json}" lines are chunks (one with a choice is timed as a token, as vLLM's benchmark
// client times them), "data: [DONE]" ends it; anything else (comments, blank lines) is skipped.
#include "endpoint_client.h"

#include <httplib.h>

#include <string_view>

namespace hwinfer::serve {

using nlohmann::json;

StatusOr<Endpoint> ParseEndpoint(const std::string& url) {
  const auto bad = [&](const std::string& why) {
    return InvalidArgument("--endpoint '" + url + "': expected http://HOST:PORT[/PREFIX]" + why);
  };
  constexpr std::string_view kScheme = "http://";
  if (url.compare(0, kScheme.size(), kScheme) != 0) return bad("");
  const size_t host_start = kScheme.size();
  const size_t colon = url.rfind(':');
  if (colon == std::string::npos || colon < host_start) return bad(" (no port)");
  const size_t slash = url.find('/', colon);
  Endpoint endpoint;
  endpoint.host = url.substr(host_start, colon - host_start);
  if (endpoint.host.size() >= 2 && endpoint.host.front() == '[' && endpoint.host.back() == ']') {
    endpoint.host = endpoint.host.substr(1, endpoint.host.size() - 2);  // [IPv6]
  }
  if (endpoint.host.empty() || endpoint.host.find_first_of("/@?# ") != std::string::npos) {
    return bad(" (no host)");
  }
  const std::string port =
      url.substr(colon + 1, slash == std::string::npos ? std::string::npos : slash - colon - 1);
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) < 1 ||
      std::stoi(port) > 65535) {
    return bad(" (port: an integer in [1, 65535])");
  }
  endpoint.port = std::stoi(port);
  std::string prefix = slash == std::string::npos ? "" : url.substr(slash);
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  if (!prefix.empty()) endpoint.prefix = prefix;
  return endpoint;
}

namespace {

// Reads one "data: ..." line of the stream into |out|; false on a malformed chunk.
bool TakeLine(const std::string& line, double now_s, StreamedResponse& out) {
  if (line.rfind("data: ", 0) != 0) return true;
  const std::string data = line.substr(6);
  if (data == "[DONE]") return true;
  const json chunk = json::parse(data, nullptr, false);
  if (chunk.is_discarded() || !chunk.is_object()) {
    out.error = "a stream chunk is not JSON: " + data.substr(0, 200);
    return false;
  }
  if (chunk.contains("error")) {
    out.error = "the server sent an error: " + chunk["error"].dump();
    return false;
  }
  if (chunk.contains("usage") && chunk["usage"].is_object()) {
    out.usage_tokens = chunk["usage"].value("completion_tokens", int64_t{-1});
  }
  const json& choices = chunk.value("choices", json::array());
  if (!choices.is_array() || choices.empty()) return true;
  const json& choice = choices[0];
  const size_t text_before = out.text.size();
  if (choice.contains("text") && choice["text"].is_string()) {
    out.text += choice["text"].get<std::string>();
  } else if (choice.contains("delta") && choice["delta"].contains("content") &&
             choice["delta"]["content"].is_string()) {
    // A chat stream's opening chunk (the role, no content yet) is no token.
    if (choice["delta"].contains("role") && choice["delta"]["content"] == "") return true;
    out.text += choice["delta"]["content"].get<std::string>();
  }
  if (choice.contains("finish_reason") && choice["finish_reason"].is_string()) {
    out.finish_reason = choice["finish_reason"].get<std::string>();
  }
  out.chunk_times.push_back(now_s);
  out.chunk_has_text.push_back(!out.text.empty() && out.text.size() != text_before);
  return true;
}

}  // namespace

StreamedResponse PostStreaming(const Endpoint& endpoint, bool chat, json body,
                               std::chrono::steady_clock::time_point start, double timeout_s) {
  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
  httplib::Client client(endpoint.host, endpoint.port);
  const auto seconds = static_cast<time_t>(timeout_s);
  client.set_read_timeout(seconds, 0);
  client.set_connection_timeout(10, 0);
  httplib::Request request;
  request.method = "POST";
  request.path = endpoint.prefix + (chat ? "/chat/completions" : "/completions");
  request.set_header("Content-Type", "application/json");
  request.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  StreamedResponse out;
  std::string pending, head;  // head: the first bytes, for an error's message
  bool parse_ok = true;
  request.content_receiver = [&](const char* data, size_t length, uint64_t, uint64_t) {
    const double now_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    pending.append(data, length);
    if (head.size() < 300) head.append(data, std::min<size_t>(length, 300 - head.size()));
    for (size_t end; parse_ok && (end = pending.find('\n')) != std::string::npos;) {
      std::string line = pending.substr(0, end);
      pending.erase(0, end + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      parse_ok = TakeLine(line, now_s, out);
    }
    return parse_ok;
  };
  const httplib::Result result = client.send(request);
  if (!result && !parse_ok) return out;  // stopped reading a malformed stream
  if (!result) {
    out.error = "no response from " + endpoint.host + ":" + std::to_string(endpoint.port) + " (" +
                httplib::to_string(result.error()) + ")";
    return out;
  }
  if (result->status != 200) {
    out.error = "HTTP " + std::to_string(result->status) + ": " +
                (result->body.empty() ? head : result->body.substr(0, 300));
    return out;
  }
  out.ok = parse_ok;
  // A closing chunk that only says why the stream ended (llama-server sends one) is no token:
  // with the server's own count, such chunks at the end are dropped.
  while (out.usage_tokens >= 0 && static_cast<int64_t>(out.chunk_times.size()) > out.usage_tokens &&
         !out.chunk_has_text.back()) {
    out.chunk_times.pop_back();
    out.chunk_has_text.pop_back();
  }
  return out;
}

StatusOr<std::string> FirstModelId(const Endpoint& endpoint) {
  httplib::Client client(endpoint.host, endpoint.port);
  client.set_connection_timeout(10, 0);
  client.set_read_timeout(30, 0);
  const httplib::Result result = client.Get(endpoint.prefix + "/models");
  const std::string where = endpoint.host + ":" + std::to_string(endpoint.port) + endpoint.prefix;
  if (!result) return Unavailable("no answer from " + where + "/models");
  const json body = json::parse(result->body, nullptr, false);
  if (result->status != 200 || body.is_discarded() || !body.contains("data") ||
      !body["data"].is_array() || body["data"].empty() || !body["data"][0].contains("id")) {
    return Unavailable(where + "/models: HTTP " + std::to_string(result->status) +
                       ", no model listed");
  }
  return body["data"][0]["id"].get<std::string>();
}

}  // namespace hwinfer::serve
