// SPDX-License-Identifier: MIT
/// @brief Guards for text and JSON that come from users: a nesting limit checked before anything
/// recursive runs, and bounded echoes of offending values for error messages.
///
/// nlohmann::json parses and destroys iteratively, but dumping, copying and comparing recurse, so
/// a document nested 100,000 deep would overflow the stack in any of them. Readers check the depth
/// first (on the text, or on a parsed document without recursion) and echo values only through
/// echoJson(), which never descends more than a few levels and never prints more than about
/// kMaxEchoChars characters, so a 20 MB string gives a one-line message.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace swapscope {

/// The deepest nesting of arrays and objects accepted in network and plan JSON (they need 4).
inline constexpr int kMaxJsonDepth = 64;
/// About the longest echo of a user's value in a message.
inline constexpr std::size_t kMaxEchoChars = 80;
/// The longest layer, network or feature-map name accepted, in bytes.
inline constexpr std::size_t kMaxNameBytes = 256;
/// The most layers a network file may have: ten times the deepest CNNs (ResNet-1001 has about
/// 3,000 with its normalisations and activations). It bounds what planning such a file costs,
/// which grows with the layers (some seconds and a few hundred MiB at the limit).
inline constexpr std::size_t kMaxLayers = 32768;

/// The byte offset of the first '[' or '{' of `text` that opens a level deeper than `max_depth`
/// (strings are skipped), or nullopt. Linear, no recursion; meant for text not yet parsed.
std::optional<std::size_t> jsonTooDeepAt(std::string_view text, int max_depth = kMaxJsonDepth);

/// True when the document nests arrays and objects deeper than `max_depth` (the document itself
/// is level 1). Iterative: safe on any document, however deep.
bool jsonTooDeep(const nlohmann::json& doc, int max_depth = kMaxJsonDepth);
bool jsonTooDeep(const nlohmann::ordered_json& doc, int max_depth = kMaxJsonDepth);

/// Error(BadInput) "<origin>: a NUL byte at line L, column C; a JSON text has none (a binary
/// file?)" where `text` holds one: JSON writes a NUL inside a string as \u0000, and nlohmann's
/// parser takes a raw one for the end of the input, so whatever followed it would be ignored.
/// Call it before jsonTooDeepAt (binary bytes hold brackets that read as nesting).
void refuseNulByte(std::string_view text, const std::string& origin);

/// "line 3, column 17" for a byte offset of `text`.
std::string describeTextOffset(std::string_view text, std::size_t offset);

/// The text for a message: control characters escaped (\n, \t, \x01), cut after about
/// `max_chars` characters (never inside a UTF-8 character) and then marked
/// "... (20971520 bytes)". No quotes are added.
std::string echoText(std::string_view text, std::size_t max_chars = kMaxEchoChars);

/// A JSON value for a message: compact JSON of at most about `max_chars` characters, nested
/// containers below the third level shown as [...] or {...}, long strings cut as by echoText().
std::string echoJson(const nlohmann::json& value, std::size_t max_chars = kMaxEchoChars);
std::string echoJson(const nlohmann::ordered_json& value, std::size_t max_chars = kMaxEchoChars);

/// `text` parsed as nlohmann's parse() does, except that an object giving one key twice
/// ({"k": 16, "k": 8}, where nlohmann keeps the last) is refused: Error(BadInput)
/// "<origin>: key "k" is given twice in one object (line 3)". Syntax errors are nlohmann's own:
/// a parse_error thrown, or a discarded value where `allow_exceptions` is false. Check the depth
/// first (jsonTooDeepAt): the parser allocates a level per bracket.
nlohmann::json parseJsonUniqueKeys(std::string_view text, const std::string& origin,
                                   bool allow_exceptions = true);
nlohmann::ordered_json parseOrderedJsonUniqueKeys(std::string_view text, const std::string& origin,
                                                  bool allow_exceptions = true);

/// A parse error of nlohmann::json with its echo of the offending token bounded (the parser
/// quotes the whole token, which for an unterminated string is the rest of the file).
std::string boundedParseError(const char* what);

}  // namespace swapscope
