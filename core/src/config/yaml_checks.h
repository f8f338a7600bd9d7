// yaml_checks.h — small strict helpers shared by the config parsers (runtime_config.cpp,
// hardware_spec.cpp): reading a file, parsing one YAML document without letting yaml-cpp
// exceptions escape, walking a map while rejecting unknown and repeated keys, and typed getters
// whose errors read "file:line:col: 'key' must be <type>; got <what was there>".
//
// Internal to libhwinfer (not installed). Every error is an InvalidArgument Status with a one-line
// message that starts with a 1-based location. Nothing here knows the config schema, and nothing
// here throws: yaml-cpp exceptions are caught at the parse boundary.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwinfer/config.h"
#include "hwinfer/status.h"

namespace hwinfer::config_internal {

// One `key: value` pair of a YAML map, in file order.
struct MapEntry {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
};

// The 1-based location of |node| in |file| (line 0 when yaml-cpp has no mark for it).
SourceLocation LocationOf(const std::string& file, const YAML::Node& node);

// Where |entry|'s value is; falls back to the key when the value is an implicit null (yaml-cpp
// marks `key:` with nothing after it at the next token, which may be lines below).
SourceLocation ValueLocation(const std::string& file, const MapEntry& entry);

// InvalidArgument("<location>: <message>").
Status ErrorAt(const SourceLocation& location, const std::string& message);

// Scalar text quoted for a one-line message: 'text', control characters escaped, long text
// shortened.
std::string Quote(std::string_view text);

// How a node reads in "got ..." messages: 'text' for a scalar, "a map", "a list", "nothing".
std::string Describe(const YAML::Node& node);

// Reads a whole file (hwinfer/input_file.h): NotFound "<what> 'path' does not exist";
// InvalidArgument when it is not a regular file (a directory, a FIFO, /dev/zero), is larger than
// kMaxConfigFileBytes, or cannot be read. |what| is e.g. "config file".
StatusOr<std::string> ReadTextFile(const std::string& path, const std::string& what);

// Parses |text| as exactly one YAML document. A yaml-cpp parse error becomes
// "file:L:C: malformed YAML: <reason>"; an empty text is an error; so is more than one document.
// |expected| describes the wanted top level for the empty case ("a map with 'backends'").
StatusOr<YAML::Node> ParseSingleDocument(const std::string& text, const std::string& file,
                                         const std::string& expected);

// The closest of |candidates| to |word| when it is within edit distance 2 (transpositions count
// once, case ignored) and the match is not trivial, else the first candidate that |word| (3+
// letters) is a prefix of; nullopt otherwise.
std::optional<std::string> ClosestMatch(std::string_view word,
                                        const std::vector<std::string_view>& candidates);

// "did you mean 'x'? " or "" — for composing messages.
std::string SuggestionFor(std::string_view word, const std::vector<std::string_view>& candidates);

// Checks |node| is a map with scalar keys, each at most once and, unless |allowed| is empty, each
// one of |allowed|; returns its entries in file order. |what| names the map in messages
// ("backend entry", "'options'"); |location| is reported when |node| is not a map at all (pass
// ValueLocation of the entry holding it, since an implicit null has no useful mark).
StatusOr<std::vector<MapEntry>> ReadMap(const std::string& file, const YAML::Node& node,
                                        const SourceLocation& location, const std::string& what,
                                        const std::vector<std::string_view>& allowed);

// "<what> is missing required key '<key>'" at the map's location when |entries| lacks |key|.
Status RequireKey(const std::string& file, const YAML::Node& map, const std::string& what,
                  const std::vector<MapEntry>& entries, std::string_view key);

// Typed values. Numbers accept plain or quoted digits; strings accept any scalar (as written)
// but not null, maps or lists. Empty strings are rejected.
StatusOr<std::string> GetString(const std::string& file, const MapEntry& entry);
StatusOr<int64_t> GetInteger(const std::string& file, const MapEntry& entry);
StatusOr<double> GetNumber(const std::string& file, const MapEntry& entry);  // finite only
StatusOr<bool> GetBool(const std::string& file, const MapEntry& entry);      // true | false

// Parses an integer / finite number from scalar text; nullopt when it is not exactly that.
std::optional<int64_t> ParseInteger(const std::string& text);
std::optional<double> ParseNumber(const std::string& text);

// A number as a message shows it: up to 15 significant digits, no trailing zeros ("0.1",
// "100000", "1e+300").
std::string FormatNumber(double value);

// |path| unchanged when absolute, else |base_dir|/|path|, lexically normalised.
std::string ResolvePath(const std::string& base_dir, const std::string& path);

// "a, b, c"
std::string JoinKeys(const std::vector<std::string_view>& keys);

}  // namespace hwinfer::config_internal
