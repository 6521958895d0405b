#pragma once
// JSON that minigen did not write — request bodies, JSON Schemas, tool lists, model and tokenizer files, a model's
// own tool calls — parsed with a nesting limit. nlohmann parses any depth without recursion, but copying,
// converting, dumping and the schema compiler recurse once per level: a 1 MB body of 100,000 nested brackets
// overflowed the server's stack before this limit. Real documents stay far below it.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/error.h"

namespace minigen {

inline constexpr int kMaxJsonDepth = 128;

// Parses `text` (Json is nlohmann::json or nlohmann::ordered_json). Throws minigen::Error whose message continues a
// sentence about the input ("<the file> is not valid JSON: …" / "<the file> is nested more than 128 levels deep"),
// so callers prefix what the text was.
namespace json_parse_detail {

struct TooDeep {};

// nlohmann's own DOM builder, with two differences. Nesting deeper than kMaxJsonDepth stops the parse. And an
// object's keys are appended as they come: ordered_json's insert searches the object for the key first, so one
// object of 100,000 keys took 8.7 s to parse (25,000: 0.64 s — quadratic) within the 8 MiB body limit. Duplicate
// keys are folded once per object, when it ends, with a hash map — linear — and as nlohmann folds them: the first
// position, the last value.
template <class Json>
class LinearDomBuilder {
 public:
  using number_integer_t = typename Json::number_integer_t;
  using number_unsigned_t = typename Json::number_unsigned_t;
  using number_float_t = typename Json::number_float_t;
  using string_t = typename Json::string_t;
  using binary_t = typename Json::binary_t;

  bool null() { return add(Json(nullptr)); }
  bool boolean(bool value) { return add(Json(value)); }
  bool number_integer(number_integer_t value) { return add(Json(value)); }
  bool number_unsigned(number_unsigned_t value) { return add(Json(value)); }
  bool number_float(number_float_t value, const string_t&) { return add(Json(value)); }
  bool string(string_t& value) { return add(Json(std::move(value))); }
  bool binary(binary_t& value) { return add(Json::binary(std::move(value))); }
  bool key(string_t& key) {
    key_ = std::move(key);
    return true;
  }
  bool start_object(std::size_t) { return open(Json(Json::value_t::object)); }
  bool start_array(std::size_t) { return open(Json(Json::value_t::array)); }
  bool end_object() {
    fold_duplicate_keys(*open_.back());
    open_.pop_back();
    return true;
  }
  bool end_array() {
    open_.pop_back();
    return true;
  }
  template <class Exception>
  bool parse_error(std::size_t, const std::string&, const Exception& error) {
    throw Error(std::string("is not valid JSON: ") + error.what());
  }

  Json& root() { return root_; }

 private:
  static constexpr bool kOrdered = std::is_same_v<Json, nlohmann::ordered_json>;

  bool add(Json&& value) {
    place(std::move(value));
    return true;
  }
  bool open(Json&& container) {
    if (open_.size() > static_cast<std::size_t>(kMaxJsonDepth)) throw TooDeep{};
    open_.push_back(place(std::move(container)));
    return true;
  }
  // Puts `value` where the parse is (the root, the open array's end, the open object's current key); returns it.
  Json* place(Json&& value) {
    if (open_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Json& parent = *open_.back();
    if (parent.is_array()) {
      auto& array = parent.template get_ref<typename Json::array_t&>();
      array.push_back(std::move(value));
      return &array.back();
    }
    auto& object = parent.template get_ref<typename Json::object_t&>();
    if constexpr (kOrdered) {
      auto& entries = static_cast<typename Json::object_t::Container&>(object);  // no search: folded at the end
      entries.emplace_back(std::move(key_), std::move(value));
      return &entries.back().second;
    } else {
      Json& slot = object[std::move(key_)];  // std::map: a logarithmic search, the last duplicate wins
      slot = std::move(value);
      return &slot;
    }
  }
  void fold_duplicate_keys(Json& closed) {
    if constexpr (kOrdered) {
      auto& entries =
          static_cast<typename Json::object_t::Container&>(closed.template get_ref<typename Json::object_t&>());
      std::unordered_map<std::string_view, std::size_t> last;  // key → index of its last value
      last.reserve(entries.size());
      for (std::size_t i = 0; i < entries.size(); ++i) last[entries[i].first] = i;
      if (last.size() == entries.size()) return;
      typename Json::object_t folded;
      auto& folded_entries = static_cast<typename Json::object_t::Container&>(folded);
      folded_entries.reserve(last.size());
      for (std::size_t i = 0; i < entries.size(); ++i) {
        const auto found = last.find(entries[i].first);
        if (found == last.end()) continue;  // a later duplicate of a key already placed
        folded_entries.emplace_back(entries[i].first, std::move(entries[found->second].second));
        last.erase(found);
      }
      closed.template get_ref<typename Json::object_t&>() = std::move(folded);
    }
  }

  Json root_;
  std::vector<Json*> open_;  // the containers being filled, outermost first
  string_t key_;
};

}  // namespace json_parse_detail

// Parses `text` (Json is nlohmann::json or nlohmann::ordered_json) in time linear in its size. Throws
// minigen::Error whose message continues a sentence about the input ("<the file> is not valid JSON: …" / "<the
// file> is nested more than 128 levels deep"), so callers prefix what the text was.
template <class Json>
Json parse_untrusted_json(std::string_view text) {
  json_parse_detail::LinearDomBuilder<Json> builder;
  try {
    Json::sax_parse(text.begin(), text.end(), &builder);
  } catch (const json_parse_detail::TooDeep&) {
    throw Error("is nested more than " + std::to_string(kMaxJsonDepth) + " levels deep");
  } catch (const typename Json::exception& error) {
    throw Error(std::string("is not valid JSON: ") + error.what());
  }
  return std::move(builder.root());
}

}  // namespace minigen
