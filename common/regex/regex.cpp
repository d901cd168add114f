#include "common/regex/regex.hpp"

#include <algorithm>
#include <exception>
#include <limits>
#include <queue>

namespace pmix::regex {
namespace {

constexpr std::string_view compact_prefix = "pmix[";

// Longest digit run read as a number in a node name: 10^18 - 1 fits in 64 bits.
constexpr std::size_t max_field_digits = 18;

constexpr std::uint64_t power_of_ten(std::size_t exponent) {
  std::uint64_t value = 1;
  for (std::size_t i = 0; i < exponent; ++i) value *= 10;
  return value;
}

bool is_compact(std::string_view text) {
  return text.substr(0, compact_prefix.size()) == compact_prefix;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Bytes written as themselves in compact node map text.
bool is_safe(char c) {
  return c >= 0x21 && c <= 0x7E && c != '%' && c != ',' && c != '[' && c != ']';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

void append_escaped(std::string& out, std::string_view text) {
  static constexpr char hex_digits[] = "0123456789ABCDEF";
  for (char c : text) {
    if (is_safe(c)) {
      out += c;
    } else {
      auto byte = static_cast<unsigned char>(c);
      out += '%';
      out += hex_digits[byte >> 4];
      out += hex_digits[byte & 0xF];
    }
  }
}

void append_number(std::string& out, std::uint64_t value, std::size_t width = 0) {
  char digits[24];
  std::size_t count = 0;
  do {
    digits[count++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  for (std::size_t i = count; i < width; ++i) out += '0';
  while (count != 0) out += digits[--count];
}

// How a byte is shown in an error message.
std::string describe(char c) {
  if (c >= 0x21 && c <= 0x7E) return std::string("'") + c + "'";
  std::string text = "byte 0x";
  static constexpr char hex_digits[] = "0123456789ABCDEF";
  auto byte = static_cast<unsigned char>(c);
  text += hex_digits[byte >> 4];
  text += hex_digits[byte & 0xF];
  return text;
}

// Cursor over the whole input with error reporting shared by both parsers.
class scanner {
 public:
  explicit scanner(std::string_view input) : input_(input) {}

  bool at_end() const { return pos_ >= end_; }
  char peek() const { return input_[pos_]; }
  std::size_t pos() const { return pos_; }
  void advance() { ++pos_; }
  bool eat(char c) {
    if (at_end() || input_[pos_] != c) return false;
    ++pos_;
    return true;
  }

  // Restricts scanning to input[begin, end).
  void bound(std::size_t begin, std::size_t end) {
    pos_ = begin;
    end_ = end;
  }

  bool fail(std::size_t offset, std::string_view message) {
    if (error_.empty()) {
      error_ = "offset " + std::to_string(offset) + ": " + std::string(message);
    }
    return false;
  }

  bool fail_here(std::string_view expected) {
    std::string found = at_end() ? std::string("end of text") : describe(peek());
    return fail(pos_, "expected " + std::string(expected) + ", found " + found);
  }

  // Reads 1*DIGIT into value; the number must not exceed limit.
  bool read_number(std::uint64_t limit, std::uint64_t& value, std::string_view what) {
    std::size_t start = pos_;
    if (at_end() || !is_digit(peek())) return fail_here(what);
    value = 0;
    while (!at_end() && is_digit(peek())) {
      auto digit = static_cast<std::uint64_t>(peek() - '0');
      if (digit > limit || value > (limit - digit) / 10) {
        return fail(start, std::string(what) + " exceeds " + std::to_string(limit));
      }
      value = value * 10 + digit;
      advance();
    }
    return true;
  }

  parse_error error() const { return parse_error{error_}; }

 private:
  std::string_view input_;
  std::size_t pos_ = 0;
  std::size_t end_ = input_.size();
  std::string error_;
};

// Finds the closing ']' of compact text and limits the scanner to the body.
// Total digits written for the values low..high with the given width (0: unpadded).
std::uint64_t digit_count(std::uint64_t low, std::uint64_t high, std::size_t width) {
  if (width != 0) return (high - low + 1) * width;
  std::uint64_t total = 0;
  for (std::size_t digits = 1; digits <= max_field_digits; ++digits) {
    std::uint64_t first = digits == 1 ? 0 : power_of_ten(digits - 1);
    std::uint64_t last = power_of_ten(digits) - 1;
    std::uint64_t from = std::max(low, first);
    std::uint64_t to = std::min(high, last);
    if (from <= to) total += (to - from + 1) * digits;
  }
  return total;
}

bool enter_compact_body(scanner& in, std::string_view text) {
  if (text.size() == compact_prefix.size() || text.back() != ']') {
    return in.fail(text.size(), "compact form must end with ']'");
  }
  in.bound(compact_prefix.size(), text.size() - 1);
  return true;
}

// ---------------------------------------------------------------------------
// Node map parsing

class node_map_parser {
 public:
  node_map_parser(std::string_view text, const parse_limits& limits)
      : text_(text), limits_(limits), in_(text) {}

  bool parse() {
    if (!is_compact(text_)) return parse_raw();
    return enter_compact_body(in_, text_) && parse_compact();
  }

  node_list& names() { return names_; }
  parse_error error() const { return in_.error(); }

 private:
  bool parse_raw() {
    if (text_.empty()) return true;
    std::size_t start = 0;
    while (true) {
      std::size_t comma = text_.find(',', start);
      std::size_t end = comma == std::string_view::npos ? text_.size() : comma;
      std::string_view name = text_.substr(start, end - start);
      if (!check_name(name, start)) return false;
      if (!add_name(std::string(name), start)) return false;
      if (comma == std::string_view::npos) return true;
      start = comma + 1;
    }
  }

  bool parse_compact() {
    if (in_.at_end()) return true;
    while (true) {
      if (!parse_item()) return false;
      if (in_.at_end()) return true;
      if (!in_.eat(',')) return in_.fail_here("',' or the closing ']'");
    }
  }

  struct range {
    std::uint64_t first;
    std::uint64_t last;
    std::size_t offset;
  };

  bool parse_item() {
    std::size_t start = in_.pos();
    std::string before;
    if (!read_text(before)) return false;
    if (!in_.eat('[')) {
      return check_name(before, start) && add_name(std::move(before), start);
    }
    if (!check_name_part(before, start)) return false;

    std::size_t width = 0;
    std::vector<range> ranges;
    if (!read_ranges(width, ranges)) return false;

    std::size_t after_start = in_.pos();
    std::string after;
    if (!read_text(after)) return false;
    if (!in_.at_end() && in_.peek() == '[') {
      return in_.fail(in_.pos(), "a node name may hold only one '[...]' field");
    }
    if (!check_name_part(after, after_start)) return false;
    for (const range& r : ranges) {
      if (!expand(before, after, width, r)) return false;
    }
    return true;
  }

  // Reads escaped text up to ',', '[', ']' or the end; ']' here is an error.
  bool read_text(std::string& out) {
    while (!in_.at_end()) {
      char c = in_.peek();
      if (c == ',' || c == '[') return true;
      if (c == ']') return in_.fail(in_.pos(), "unexpected ']' (write it as %5D)");
      if (c == '%') {
        std::size_t at = in_.pos();
        in_.advance();
        int high = in_.at_end() ? -1 : hex_value(in_.peek());
        if (high >= 0) in_.advance();
        int low = in_.at_end() ? -1 : hex_value(in_.peek());
        if (high < 0 || low < 0) return in_.fail(at, "'%' must be followed by two hex digits");
        in_.advance();
        out += static_cast<char>(high * 16 + low);
        continue;
      }
      if (!is_safe(c)) return in_.fail(in_.pos(), describe(c) + " must be written as %XX");
      out += c;
      in_.advance();
    }
    return true;
  }

  // Reads "[width:]range,...]" after the '['.
  bool read_ranges(std::size_t& width, std::vector<range>& ranges) {
    std::uint64_t limit = power_of_ten(max_field_digits) - 1;
    std::size_t first_at = in_.pos();
    std::uint64_t first = 0;
    if (!in_.read_number(std::numeric_limits<std::uint64_t>::max(), first, "a number")) {
      return false;
    }
    if (in_.eat(':')) {
      if (first < 1 || first > max_field_digits) {
        return in_.fail(first_at, "width must be 1 to " + std::to_string(max_field_digits));
      }
      width = static_cast<std::size_t>(first);
      limit = power_of_ten(width) - 1;
      first_at = in_.pos();
      if (!in_.read_number(limit, first, "a value")) return false;
    } else if (first > limit) {
      return in_.fail(first_at, "a value exceeds " + std::to_string(limit));
    }
    while (true) {
      range r{first, first, first_at};
      if (in_.eat('-') && !in_.read_number(limit, r.last, "a value")) return false;
      ranges.push_back(r);
      if (in_.eat(']')) return true;
      if (!in_.eat(',')) return in_.fail_here("',', '-' or ']' in a range list");
      first_at = in_.pos();
      if (!in_.read_number(limit, first, "a value")) return false;
    }
  }

  bool expand(const std::string& before, const std::string& after, std::size_t width,
              const range& r) {
    std::uint64_t span = r.first <= r.last ? r.last - r.first : r.first - r.last;
    if (span >= limits_.max_nodes - names_.size()) {
      return in_.fail(r.offset, "expands past " + std::to_string(limits_.max_nodes) +
                                    " node names");
    }
    std::uint64_t count = span + 1;
    std::uint64_t text_bytes = before.size() + after.size();
    std::uint64_t room = limits_.max_name_bytes - name_bytes_;
    if ((text_bytes != 0 && count > room / text_bytes) ||
        digit_count(std::min(r.first, r.last), std::max(r.first, r.last), width) >
            room - count * text_bytes) {
      return in_.fail(r.offset, "node names exceed " + std::to_string(limits_.max_name_bytes) +
                                    " bytes");
    }
    std::uint64_t value = r.first;
    while (true) {
      std::string name = before;
      append_number(name, value, width);
      name += after;
      if (!add_name(std::move(name), r.offset)) return false;
      if (value == r.last) return true;
      value = r.first <= r.last ? value + 1 : value - 1;
    }
  }

  bool check_name_part(std::string_view part, std::size_t offset) {
    if (part.find(',') != std::string_view::npos) {
      return in_.fail(offset, "a node name may not contain ','");
    }
    if (part.find('\0') != std::string_view::npos) {
      return in_.fail(offset, "a node name may not contain NUL");
    }
    return true;
  }

  bool check_name(std::string_view name, std::size_t offset) {
    if (name.empty()) return in_.fail(offset, "empty node name");
    return check_name_part(name, offset);
  }

  bool add_name(std::string name, std::size_t offset) {
    if (names_.size() >= limits_.max_nodes) {
      return in_.fail(offset, "more than " + std::to_string(limits_.max_nodes) + " node names");
    }
    if (name.size() > limits_.max_name_bytes - name_bytes_) {
      return in_.fail(offset, "node names exceed " + std::to_string(limits_.max_name_bytes) +
                                  " bytes");
    }
    name_bytes_ += name.size();
    names_.push_back(std::move(name));
    return true;
  }

  std::string_view text_;
  parse_limits limits_;
  scanner in_;
  node_list names_;
  std::size_t name_bytes_ = 0;
};

// ---------------------------------------------------------------------------
// Node map encoding

// A name split around its last run of digits (at most max_field_digits long).
struct name_parts {
  std::string_view before;
  std::string_view digits;
  std::string_view after;
};

bool split_name(std::string_view name, name_parts& parts) {
  std::size_t end = name.size();
  while (end > 0 && !is_digit(name[end - 1])) --end;
  if (end == 0) return false;
  std::size_t begin = end;
  while (begin > 0 && is_digit(name[begin - 1])) --begin;
  if (end - begin > max_field_digits) return false;
  parts = {name.substr(0, begin), name.substr(begin, end - begin), name.substr(end)};
  return true;
}

std::uint64_t digits_value(std::string_view digits) {
  std::uint64_t value = 0;
  for (char c : digits) value = value * 10 + static_cast<std::uint64_t>(c - '0');
  return value;
}

// Writes values as "a-b" runs of consecutive values (up or down) and singles.
void append_value_ranges(std::string& out, const std::vector<std::uint64_t>& values) {
  std::size_t i = 0;
  while (i < values.size()) {
    if (i != 0) out += ',';
    std::size_t j = i;
    if (i + 1 < values.size()) {
      bool up = values[i + 1] == values[i] + 1;
      bool down = values[i + 1] + 1 == values[i];
      while (j + 1 < values.size() &&
             ((up && values[j + 1] == values[j] + 1) || (down && values[j + 1] + 1 == values[j]))) {
        ++j;
      }
    }
    append_number(out, values[i]);
    if (j != i) {
      out += '-';
      append_number(out, values[j]);
    }
    i = j + 1;
  }
}

// Consecutive names sharing text around a number field of one notation.
class name_group {
 public:
  // Starts a group with name; false if it has no number field.
  bool start(std::string_view name) {
    names_.assign(1, name);
    values_.clear();
    if (!split_name(name, parts_)) return false;
    unpadded_ = parts_.digits.size() == 1 || parts_.digits[0] != '0';
    common_width_ = parts_.digits.size();
    values_.push_back(digits_value(parts_.digits));
    return true;
  }

  // Adds name if it fits the group's text and notation.
  bool add(std::string_view name) {
    name_parts parts;
    if (!split_name(name, parts) || parts.before != parts_.before || parts.after != parts_.after) {
      return false;
    }
    bool no_leading_zero = parts.digits.size() == 1 || parts.digits[0] != '0';
    bool same_width = parts.digits.size() == common_width_;
    if (!(unpadded_ && no_leading_zero) && !same_width) return false;
    unpadded_ = unpadded_ && no_leading_zero;
    if (!same_width) common_width_ = 0;
    names_.push_back(name);
    values_.push_back(digits_value(parts.digits));
    return true;
  }

  // Writes the group as one bracketed item, or as plain names when that is
  // not shorter.
  void append_to(std::string& out) const {
    std::string pattern;
    append_escaped(pattern, parts_.before);
    pattern += '[';
    if (!unpadded_) {
      append_number(pattern, common_width_);
      pattern += ':';
    }
    append_value_ranges(pattern, values_);
    pattern += ']';
    append_escaped(pattern, parts_.after);

    std::string plain;
    for (std::string_view name : names_) {
      if (!plain.empty()) plain += ',';
      append_escaped(plain, name);
    }
    out += pattern.size() < plain.size() ? pattern : plain;
  }

 private:
  std::vector<std::string_view> names_;
  name_parts parts_;
  bool unpadded_ = false;          // every value written without leading zeros
  std::size_t common_width_ = 0;   // digit count shared by all values, 0 if mixed
  std::vector<std::uint64_t> values_;
};

std::string encode_names(const node_list& names) {
  std::string out(compact_prefix);
  name_group group;
  bool open = false;
  bool first = true;
  auto emit = [&](auto&& append) {
    if (!first) out += ',';
    first = false;
    append();
  };
  for (const std::string& name : names) {
    if (open && group.add(name)) continue;
    if (open) emit([&] { group.append_to(out); });
    open = group.start(name);
    if (!open) emit([&] { append_escaped(out, name); });
  }
  if (open) emit([&] { group.append_to(out); });
  out += ']';
  return out;
}

// ---------------------------------------------------------------------------
// Proc map parsing

// Room for `more` elements at the end of `v`, growing it geometrically: a
// reserve of exactly size() + more for each term of a list ("0,1,2,...")
// reallocated and copied the whole vector every time, O(N^2) for N ranks
// (8,192 local peers: a quarter of a client's PMIx_Init).
template <class T>
void grow_for(std::vector<T>& v, std::uint64_t more) {
  if (v.capacity() - v.size() >= more) return;
  v.reserve(std::max<std::size_t>(v.size() + static_cast<std::size_t>(more), 2 * v.capacity()));
}

// A node's ranks as the parser builds them: expanded (a vector of ranks) or
// as runs. A term adds `count` ranks from `first` by `step`.
void add_term(std::vector<std::uint32_t>& ranks, std::uint32_t first, std::uint64_t count, std::int64_t step) {
  grow_for(ranks, count);
  for (std::uint64_t i = 0; i < count; ++i)
    ranks.push_back(static_cast<std::uint32_t>(std::int64_t{first} + step * static_cast<std::int64_t>(i)));
}
void add_term(run_list& runs, std::uint32_t first, std::uint64_t count, std::int64_t step) {
  if (count == 1) step = 0;
  if (!runs.empty()) {
    // A term that continues the last run's progression extends it ("0,1,2"
    // is one run, as "0-2").
    auto& back = runs.back();
    const std::int64_t gap = std::int64_t{first} - std::int64_t{back.last()};
    const std::int64_t s = back.count == 1 ? (count == 1 ? gap : step) : back.step;
    if (gap != 0 && gap == s && (count == 1 || step == s)) {
      back.step = s;
      back.count += static_cast<std::uint32_t>(count);
      return;
    }
  }
  grow_for(runs, 1);
  runs.push_back(rank_run{first, static_cast<std::uint32_t>(count), step});
}
void bounds(const std::vector<std::uint32_t>& ranks, std::uint32_t& low, std::uint32_t& high) {
  low = high = ranks[0];
  for (std::uint32_t rank : ranks) {
    if (rank < low) low = rank;
    if (rank > high) high = rank;
  }
}
void bounds(const run_list& runs, std::uint32_t& low, std::uint32_t& high) {
  low = high = runs[0].first;
  for (const auto& r : runs)
    for (std::uint32_t end : {r.first, r.last()}) {
      if (end < low) low = end;
      if (end > high) high = end;
    }
}
void shift_by(std::vector<std::uint32_t>& ranks, std::int64_t offset) {
  for (std::uint32_t& rank : ranks) rank = static_cast<std::uint32_t>(rank + offset);
}
void shift_by(run_list& runs, std::int64_t offset) {
  for (auto& r : runs) r.first = static_cast<std::uint32_t>(r.first + offset);
}

template <class Group>
class proc_map_parser {
 public:
  proc_map_parser(std::string_view text, const parse_limits& limits)
      : text_(text), limits_(limits), in_(text) {}

  bool parse() {
    compact_ = is_compact(text_);
    if (compact_ && !enter_compact_body(in_, text_)) return false;
    if (in_.at_end()) return true;  // "" and "pmix[]": zero nodes
    while (true) {
      if (!parse_group()) return false;
      if (in_.at_end()) return true;
      if (!in_.eat(';')) return in_.fail_here(compact_ ? "',', ';', '*' or ']'" : "',' or ';'");
    }
  }

  std::vector<Group>& nodes() { return nodes_; }
  parse_error error() const { return in_.error(); }

 private:
  bool at_group_end() const {
    return in_.at_end() || in_.peek() == ';' || (compact_ && in_.peek() == '*');
  }

  bool parse_group() {
    std::size_t start = in_.pos();
    Group ranks;
    std::uint64_t size = 0;  // ranks in the group
    if (!at_group_end()) {
      while (true) {
        if (!parse_term(ranks, size)) return false;
        if (at_group_end()) break;
        if (!in_.eat(',')) {
          return in_.fail_here(compact_ ? "',', ';', '*' or ']'" : "',' or ';'");
        }
      }
    }
    std::uint64_t count = 1;
    std::int64_t shift = 0;
    if (compact_ && in_.eat('*')) {
      std::size_t count_at = in_.pos();
      if (!in_.read_number(std::numeric_limits<std::uint64_t>::max(), count, "a node count")) {
        return false;
      }
      if (count == 0) return in_.fail(count_at, "node count must be at least 1");
      bool up = in_.eat('+');
      if (up || in_.eat('-')) {
        std::uint64_t amount = 0;
        if (!in_.read_number(max_rank, amount, "a shift")) return false;
        shift = up ? static_cast<std::int64_t>(amount) : -static_cast<std::int64_t>(amount);
      }
    }
    return replicate(std::move(ranks), size, count, shift, start);
  }

  // Adds the ranks of "a", "a-b" or (compact) "a-b/s".
  bool parse_term(Group& ranks, std::uint64_t& size) {
    std::size_t start = in_.pos();
    std::uint64_t first = 0;
    if (!in_.read_number(max_rank, first, "a rank")) return false;
    std::uint64_t last = first;
    std::uint64_t step = 1;
    if (in_.eat('-')) {
      if (!in_.read_number(max_rank, last, "a rank")) return false;
      if (compact_ && in_.eat('/')) {
        std::size_t step_at = in_.pos();
        if (!in_.read_number(max_rank, step, "a step")) return false;
        if (step == 0) return in_.fail(step_at, "step must be at least 1");
      }
    }
    std::uint64_t span = first <= last ? last - first : first - last;
    if (span % step != 0) return in_.fail(start, "step does not divide the range");
    std::uint64_t count = span / step + 1;
    if (count > limits_.max_ranks - rank_total_ - size) return too_many_ranks(start);
    add_term(ranks, static_cast<std::uint32_t>(first), count,
             first <= last ? static_cast<std::int64_t>(step) : -static_cast<std::int64_t>(step));
    size += count;
    return true;
  }

  // Adds count nodes: ranks, then ranks + shift, ranks + 2 * shift, ...
  bool replicate(Group ranks, std::uint64_t size, std::uint64_t count, std::int64_t shift,
                 std::size_t offset) {
    if (count > limits_.max_nodes - nodes_.size()) {
      return in_.fail(offset, "more than " + std::to_string(limits_.max_nodes) + " nodes");
    }
    if (size != 0 && count > (limits_.max_ranks - rank_total_) / size) {
      return too_many_ranks(offset);
    }
    if (size != 0 && shift != 0) {
      std::uint32_t low = 0;
      std::uint32_t high = 0;
      bounds(ranks, low, high);
      auto amount = static_cast<std::uint64_t>(shift > 0 ? shift : -shift);
      std::uint64_t room = shift > 0 ? max_rank - high : low;
      if (count - 1 > room / amount) {
        return in_.fail(offset, "shifted ranks leave 0 to " + std::to_string(max_rank));
      }
    }
    rank_total_ += size * count;
    grow_for(nodes_, count);
    std::size_t first = nodes_.size();
    nodes_.push_back(std::move(ranks));
    for (std::uint64_t i = 1; i < count; ++i) {
      Group next = nodes_[first];
      shift_by(next, shift * static_cast<std::int64_t>(i));
      nodes_.push_back(std::move(next));
    }
    return true;
  }

  bool too_many_ranks(std::size_t offset) {
    return in_.fail(offset, "more than " + std::to_string(limits_.max_ranks) + " ranks");
  }

  std::string_view text_;
  parse_limits limits_;
  scanner in_;
  bool compact_ = false;
  std::vector<Group> nodes_;
  std::size_t rank_total_ = 0;
};

// ---------------------------------------------------------------------------
// Proc map encoding

// Writes ranks as arithmetic runs: "a-b" (step 1, up or down), "a-b/s" (three
// or more values), singles otherwise.
void append_rank_terms(std::string& out, const std::vector<std::uint32_t>& ranks) {
  std::size_t i = 0;
  while (i < ranks.size()) {
    if (i != 0) out += ',';
    std::size_t j = i;
    std::int64_t step = 0;
    if (i + 1 < ranks.size()) {
      step = std::int64_t{ranks[i + 1]} - std::int64_t{ranks[i]};
      if (step != 0) {
        while (j + 1 < ranks.size() && std::int64_t{ranks[j + 1]} - std::int64_t{ranks[j]} == step) {
          ++j;
        }
      }
    }
    std::uint64_t amount = static_cast<std::uint64_t>(step < 0 ? -step : step);
    std::size_t length = j - i + 1;
    append_number(out, ranks[i]);
    if (length >= 2 && amount == 1) {
      out += '-';
      append_number(out, ranks[j]);
    } else if (length >= 3) {
      out += '-';
      append_number(out, ranks[j]);
      out += '/';
      append_number(out, amount);
    } else {
      j = i;
    }
    i = j + 1;
  }
}

// True if every rank of next is the rank of previous at the same place plus shift.
bool is_shifted(const std::vector<std::uint32_t>& previous, const std::vector<std::uint32_t>& next,
                std::int64_t shift) {
  if (previous.size() != next.size()) return false;
  for (std::size_t i = 0; i < next.size(); ++i) {
    if (std::int64_t{next[i]} - std::int64_t{previous[i]} != shift) return false;
  }
  return true;
}

std::string encode_ranks(const rank_lists& nodes) {
  std::string out(compact_prefix);
  std::size_t i = 0;
  while (i < nodes.size()) {
    if (i != 0) out += ';';
    const std::vector<std::uint32_t>& base = nodes[i];
    std::int64_t shift = 0;
    if (i + 1 < nodes.size() && !base.empty() && nodes[i + 1].size() == base.size()) {
      shift = std::int64_t{nodes[i + 1][0]} - std::int64_t{base[0]};
    }
    std::size_t last = i;
    while (last + 1 < nodes.size() && is_shifted(nodes[last], nodes[last + 1], shift)) ++last;
    std::size_t count = last - i + 1;

    std::string group;
    append_rank_terms(group, base);
    if (count > 1 || (nodes.size() == 1 && base.empty())) {
      group += '*';
      append_number(group, count);
      if (shift != 0) {
        group += shift > 0 ? '+' : '-';
        append_number(group, static_cast<std::uint64_t>(shift > 0 ? shift : -shift));
      }
    }
    if (count == 2) {
      // "a*2+d" can be longer than "a;b": then write this node alone and let
      // the next one start its own group.
      std::string plain;
      append_rank_terms(plain, base);
      plain += ';';
      append_rank_terms(plain, nodes[i + 1]);
      if (plain.size() <= group.size()) {
        group.clear();
        append_rank_terms(group, base);
        count = 1;
      }
    }
    out += group;
    i += count;
  }
  out += ']';
  return out;
}

parse_error out_of_memory() { return parse_error{"out of memory"}; }

}  // namespace

result<node_list> parse_node_map(std::string_view text, const parse_limits& limits) noexcept {
  try {
    node_map_parser parser(text, limits);
    if (!parser.parse()) return parser.error();
    return std::move(parser.names());
  } catch (const std::exception&) {
    return out_of_memory();
  }
}

result<std::string> encode_node_map(const node_list& names) noexcept {
  try {
    for (std::size_t i = 0; i < names.size(); ++i) {
      const std::string& name = names[i];
      std::string where = "node name " + std::to_string(i);
      if (name.empty()) return parse_error{where + " is empty"};
      if (name.find(',') != std::string::npos) return parse_error{where + " contains ','"};
      if (name.find('\0') != std::string::npos) return parse_error{where + " contains NUL"};
    }
    return encode_names(names);
  } catch (const std::exception&) {
    return out_of_memory();
  }
}

result<std::string> generate_node_map(std::string_view text) noexcept {
  result<node_list> names = parse_node_map(text);
  if (!names.ok()) return names.error();
  return encode_node_map(names.value());
}

result<rank_lists> parse_proc_map(std::string_view text, const parse_limits& limits) noexcept {
  try {
    proc_map_parser<std::vector<std::uint32_t>> parser(text, limits);
    if (!parser.parse()) return parser.error();
    return std::move(parser.nodes());
  } catch (const std::exception&) {
    return out_of_memory();
  }
}

result<rank_runs> parse_proc_map_runs(std::string_view text, const parse_limits& limits) noexcept {
  try {
    proc_map_parser<run_list> parser(text, limits);
    if (!parser.parse()) return parser.error();
    return std::move(parser.nodes());
  } catch (const std::exception&) {
    return out_of_memory();
  }
}

std::vector<std::uint32_t> expand(const run_list& runs) {
  std::vector<std::uint32_t> out;
  out.reserve(rank_count(runs));
  for (const auto& r : runs)
    for (std::uint32_t k = 0; k < r.count; ++k) out.push_back(r.at(k));
  return out;
}

rank_lists expand(const rank_runs& nodes) {
  rank_lists out;
  out.reserve(nodes.size());
  for (const auto& n : nodes) out.push_back(expand(n));
  return out;
}

std::size_t rank_count(const run_list& runs) {
  std::size_t n = 0;
  for (const auto& r : runs) n += r.count;
  return n;
}

run_list runs_of(const std::vector<std::uint32_t>& ranks) {
  run_list out;
  for (std::uint32_t r : ranks) add_term(out, r, 1, 0);
  return out;
}

result<std::string> encode_proc_map(const rank_lists& ranks) noexcept {
  try {
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      for (std::uint32_t rank : ranks[i]) {
        if (rank > max_rank) {
          return parse_error{"node " + std::to_string(i) + " has rank " + std::to_string(rank) +
                             " above " + std::to_string(max_rank)};
        }
      }
    }
    return encode_ranks(ranks);
  } catch (const std::exception&) {
    return out_of_memory();
  }
}

result<std::string> generate_proc_map(std::string_view text) noexcept {
  result<rank_lists> ranks = parse_proc_map(text);
  if (!ranks.ok()) return ranks.error();
  return encode_proc_map(ranks.value());
}

rank_places::rank_places(const rank_runs& nodes) {
  std::vector<span> spans;
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    std::uint32_t index = 0;
    for (const auto& r : nodes[n]) {
      if (r.count == 0) continue;
      const auto a = r.first, b = r.last();
      spans.push_back(span{std::min(a, b), std::max(a, b), r, rank_place{static_cast<std::uint32_t>(n), index}});
      index += r.count;
    }
  }
  std::stable_sort(spans.begin(), spans.end(), [](const span& x, const span& y) { return x.low < y.low; });
  // Greedy layers: each span goes to a layer whose last span ends before it
  // starts (the one that ended first), else to a new one; as many layers as
  // the spans overlap deep at most.
  constexpr std::size_t max_layers = 64;
  using end_at = std::pair<std::uint32_t, std::size_t>;  // a layer's high, the layer
  std::priority_queue<end_at, std::vector<end_at>, std::greater<end_at>> ends;
  for (const auto& s : spans) {
    if (!ends.empty() && ends.top().first < s.low) {
      const auto layer = ends.top().second;
      ends.pop();
      layers_[layer].push_back(s);
      ends.push({s.high, layer});
      continue;
    }
    if (layers_.size() == max_layers) {
      layers_.clear();
      break;
    }
    layers_.push_back({s});
    ends.push({s.high, layers_.size() - 1});
  }
  if (!layers_.empty() || spans.empty()) return;
  // Too deep: a table of every rank.
  table_ = table_of(spans);
}

std::vector<std::pair<std::uint32_t, rank_place>> rank_places::table_of(const std::vector<span>& spans) {
  std::vector<std::pair<std::uint32_t, rank_place>> out;
  for (const auto& s : spans)
    for (std::uint32_t k = 0; k < s.run.count; ++k)
      out.push_back({s.run.at(k), rank_place{s.start.node, s.start.index + k}});
  // A rank listed twice: the first node's place, the first in its list.
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first
                              : std::make_pair(a.second.node, a.second.index) <
                                    std::make_pair(b.second.node, b.second.index);
  });
  out.erase(std::unique(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first == b.first; }),
            out.end());
  return out;
}

std::optional<std::uint32_t> rank_places::index_in(const span& s, std::uint32_t rank) {
  if (rank < s.low || rank > s.high) return std::nullopt;
  const std::int64_t d = std::int64_t{rank} - std::int64_t{s.run.first};
  if (s.run.step == 0) return d == 0 ? std::optional<std::uint32_t>{0} : std::nullopt;
  if (d % s.run.step != 0) return std::nullopt;
  return static_cast<std::uint32_t>(d / s.run.step);
}

std::optional<rank_place> rank_places::find(std::uint32_t rank) const {
  if (!table_.empty()) {
    auto it = std::lower_bound(table_.begin(), table_.end(), rank,
                               [](const auto& a, std::uint32_t r) { return a.first < r; });
    if (it == table_.end() || it->first != rank) return std::nullopt;
    return it->second;
  }
  // Listed twice: the first node's place, the first in its list.
  std::optional<rank_place> best;
  for (const auto& layer : layers_) {
    auto it = std::upper_bound(layer.begin(), layer.end(), rank,
                               [](std::uint32_t r, const span& s) { return r < s.low; });
    if (it == layer.begin()) continue;
    const auto& s = *std::prev(it);
    const auto k = index_in(s, rank);
    if (!k) continue;
    const rank_place p{s.start.node, s.start.index + *k};
    if (!best || std::make_pair(p.node, p.index) < std::make_pair(best->node, best->index)) best = p;
  }
  return best;
}

std::vector<std::pair<std::uint32_t, rank_place>> rank_places::by_rank() const {
  if (!table_.empty()) return table_;
  std::vector<span> spans;
  for (const auto& layer : layers_) spans.insert(spans.end(), layer.begin(), layer.end());
  return table_of(spans);
}

}  // namespace pmix::regex
