#include "support/yaml_tree.hpp"

#include "support/file_io.hpp"

#include <yaml.h>

#include <algorithm>
#include <cstring>
#include <span>

namespace tessera::yaml {

namespace {
const std::string kEmpty;
const std::string kPlainTag = "?";
const std::string kQuotedTag = "!";
} // namespace

NodeType Node::Type() const { return doc_ ? doc_->nodes_[index_].type : NodeType::Undefined; }

const std::string& Node::Scalar() const {
  if (!doc_) return kEmpty;
  const auto& d = doc_->nodes_[index_];
  return d.type == NodeType::Scalar ? *d.text : kEmpty;
}

const std::string& Node::Tag() const {
  if (!doc_) return kEmpty;
  uint32_t tag = doc_->nodes_[index_].tag;
  return tag == 0 ? kPlainTag : tag == 1 ? kQuotedTag : doc_->tags_[tag - 2];
}

Position Node::Mark() const {
  if (!doc_) return {};
  return {doc_->nodes_[index_].line, doc_->nodes_[index_].column};
}

size_t Node::size() const {
  if (!doc_) return 0;
  const auto& d = doc_->nodes_[index_];
  if (d.type == NodeType::Sequence) return d.count;
  if (d.type == NodeType::Map) return d.count / 2;
  return 0;
}

Node Node::operator[](size_t index) const {
  if (!IsSequence() || index >= doc_->nodes_[index_].count) return {};
  return Node(doc_, doc_->children_[doc_->nodes_[index_].first + index]);
}

Node Node::operator[](std::string_view key) const {
  if (!IsMap()) return {};
  const auto& d = doc_->nodes_[index_];
  const uint32_t* children = doc_->children_.data() + d.first;
  for (size_t i = d.count; i >= 2; i -= 2) {
    const auto& k = doc_->nodes_[children[i - 2]];
    if (k.type == NodeType::Scalar && *k.text == key) return Node(doc_, children[i - 1]);
  }
  return {};
}

Node::iterator Node::begin() const { return iterator(*this, 0); }
Node::iterator Node::end() const { return iterator(*this, size()); }

void Node::iterator::load() {
  entry_ = Entry{};
  if (pos_ >= owner_.size()) return;
  const Document* doc = owner_.doc_;
  const uint32_t* children = doc->children_.data() + doc->nodes_[owner_.index_].first;
  if (owner_.IsSequence()) {
    static_cast<Node&>(entry_) = Node(doc, children[pos_]);
  } else {
    entry_.first = Node(doc, children[2 * pos_]);
    entry_.second = Node(doc, children[2 * pos_ + 1]);
  }
}

namespace {
bool isNullPlain(std::string_view s) { return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL"; }
} // namespace

// Appends nodes in document order (both parsers): interns scalar texts and
// gathers the children of open collections on one stack, moved to
// children_ when the collection ends.
class Builder {
public:
  Builder(Document& doc, size_t expectedNodes) : doc_(doc) {
    doc_.nodes_.reserve(expectedNodes);
    doc_.children_.reserve(expectedNodes);
  }

  uint32_t scalar(std::string_view text, bool plain, uint32_t tag, int line, int column) {
    NodeType type = plain && tag == 0 && isNullPlain(text) ? NodeType::Null : NodeType::Scalar;
    return add(type, intern(text), tag, line, column);
  }
  // A sequence or map; its children follow until close().
  uint32_t open(NodeType type, uint32_t tag, int line, int column) {
    uint32_t index = add(type, nullptr, tag, line, column);
    open_.push_back({index, pending_.size()});
    return index;
  }
  void alias(uint32_t target) { pending_.push_back(target); }
  // The children of the innermost open collection, before close().
  std::span<const uint32_t> openChildren() const {
    return {pending_.data() + open_.back().second, pending_.size() - open_.back().second};
  }
  void close() {
    auto [index, start] = open_.back();
    open_.pop_back();
    Document::Data& d = doc_.nodes_[index];
    d.first = static_cast<uint32_t>(doc_.children_.size());
    d.count = static_cast<uint32_t>(pending_.size() - start);
    doc_.children_.insert(doc_.children_.end(), pending_.begin() + static_cast<std::ptrdiff_t>(start), pending_.end());
    pending_.resize(start);
  }
  size_t depth() const { return open_.size(); }
  bool isOpen(uint32_t index) const {
    return std::any_of(open_.begin(), open_.end(), [&](const auto& o) { return o.first == index; });
  }
  uint32_t innermost() const { return open_.back().first; }
  uint32_t explicitTag(const char* tag) {
    doc_.tags_.emplace_back(tag);
    return static_cast<uint32_t>(doc_.tags_.size() + 1);
  }
  size_t nodeCount() const { return doc_.nodes_.size(); }

private:
  uint32_t add(NodeType type, const std::string* text, uint32_t tag, int line, int column) {
    auto index = static_cast<uint32_t>(doc_.nodes_.size());
    Document::Data d;
    d.text = text;
    d.tag = tag;
    d.type = type;
    d.line = line;
    d.column = column;
    doc_.nodes_.push_back(d);
    if (!open_.empty()) pending_.push_back(index);
    return index;
  }
  // Generated files repeat a few dozen keys and values thousands of times:
  // one string each, found by an open-addressing hash table.
  static uint64_t hashText(std::string_view s) {
    const char* p = s.data();
    size_t n = s.size();
    uint64_t h = 0x9E3779B97F4A7C15ull * (n + 1), w;
    for (; n >= 8; p += 8, n -= 8) {
      std::memcpy(&w, p, 8);
      h = (h ^ w) * 0xFF51AFD7ED558CCDull;
      h ^= h >> 32;
    }
    if (n > 0) {
      w = 0;
      for (size_t i = 0; i < n; ++i) w |= uint64_t{static_cast<uint8_t>(p[i])} << (8 * i);
      h = (h ^ w) * 0xFF51AFD7ED558CCDull;
    }
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ull;
    return h ^ (h >> 33);
  }
  const std::string* intern(std::string_view text) {
    if (2 * (entries_.size() + 1) > slots_.size()) grow();
    const uint64_t h = hashText(text);
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      uint32_t slot = slots_[i];
      if (slot == 0) {
        const std::string* s = &doc_.strings_.emplace_back(text);
        entries_.push_back({h, s});
        slots_[i] = static_cast<uint32_t>(entries_.size());
        return s;
      }
      const Interned& e = entries_[slot - 1];
      if (e.hash == h && *e.text == text) return e.text;
    }
  }
  void grow() {
    slots_.assign(std::max<size_t>(1024, 2 * slots_.size()), 0);
    const size_t mask = slots_.size() - 1;
    for (size_t n = 0; n < entries_.size(); ++n) {
      size_t i = entries_[n].hash & mask;
      while (slots_[i] != 0) i = (i + 1) & mask;
      slots_[i] = static_cast<uint32_t>(n + 1);
    }
  }

  struct Interned {
    uint64_t hash;
    const std::string* text;
  };
  Document& doc_;
  std::vector<uint32_t> slots_; // entries_ index + 1; 0 empty
  std::vector<Interned> entries_;
  std::vector<std::pair<uint32_t, size_t>> open_; // collection, start of its children in pending_
  std::vector<uint32_t> pending_;
};

namespace {

// ---- The line scanner ----
//
// Accepts block mappings and sequences (also indentless and compact ones),
// single-line plain scalars, single-line quoted scalars without escapes,
// flow collections of those (also over several lines, and `[k: v]`
// single-pair mappings), comments outside flow collections and blank lines,
// in printable ASCII without tabs
// or CR. It gives up (throws Unsupported) on anything else: multi-line
// scalars, block scalars, anchors, aliases, tags, explicit keys, directives,
// document markers, and every error. Node
// positions follow libyaml's: a block mapping at its first key, a block
// sequence at its first `-`, an empty value just after its `:` or `-`.
struct Unsupported {};

class LineScanner {
public:
  LineScanner(std::string_view text, Builder& b) : t_(text), b_(b) {}

  void run() {
    if (!printableAscii(t_)) fail();
    if (!seekLine(0)) return; // no document
    block();
    if (!eof_) fail(); // content less indented than the root
  }

private:
  static constexpr int kMaxDepth = 200; // below Document::kMaxDepth: libyaml reports that

  [[noreturn]] static void fail() { throw Unsupported{}; }

  // Only printable ASCII and \n? Eight bytes at a time: every byte's high
  // bit says "not ASCII", "below 0x20 and not \n", or "0x7F".
  static bool printableAscii(std::string_view t) {
    constexpr uint64_t kHigh = 0x8080808080808080ull, kLow7 = 0x7F7F7F7F7F7F7F7Full, kOnes = 0x0101010101010101ull;
    uint64_t bad = 0;
    size_t i = 0;
    for (; i + 8 <= t.size(); i += 8) {
      uint64_t w;
      std::memcpy(&w, t.data() + i, 8);
      const uint64_t low = w & kLow7;
      const uint64_t nl = w ^ (kOnes * '\n');
      const uint64_t isNewline = ~(((nl & kLow7) + kLow7) | nl | kLow7);
      const uint64_t control = ~(low + kOnes * 0x60) & kHigh;
      const uint64_t del = (low + kOnes) & kHigh;
      bad |= (w & kHigh) | (control & ~isNewline) | del;
    }
    for (; i < t.size(); ++i) {
      auto c = static_cast<unsigned char>(t[i]);
      if ((c < 0x20 && c != '\n') || c > 0x7E) return false;
    }
    return bad == 0;
  }
  char at(size_t i) const { return i < t_.size() ? t_[i] : '\n'; }
  int col() const { return static_cast<int>(pos_ - lineStart_); }
  bool blank(size_t i) const { char c = at(i); return c == ' ' || c == '\n'; }
  bool entryAt(size_t i) const { return t_[i] == '-' && blank(i + 1); }
  void skipSpaces() {
    while (pos_ < t_.size() && t_[pos_] == ' ') ++pos_;
  }
  // Only a comment (after a space) or nothing is left on the line.
  bool restIsEmpty() const {
    char c = at(pos_);
    return c == '\n' || (c == '#' && pos_ > lineStart_ && t_[pos_ - 1] == ' ');
  }
  void endOfLine() {
    skipSpaces();
    if (!restIsEmpty()) fail();
  }

  // Goes to the first line at or after the one starting at `p` with
  // content; pos_ at that content. False (eof_) at the end of the text.
  bool seekLine(size_t p) {
    while (p < t_.size()) {
      size_t q = p;
      while (q < t_.size() && t_[q] == ' ') ++q;
      if (q < t_.size() && t_[q] != '\n' && t_[q] != '#') {
        if (q == p && (t_.substr(p, 3) == "---" || t_.substr(p, 3) == "...") && blank(p + 3)) fail();
        lineStart_ = p;
        pos_ = q;
        return true;
      }
      size_t nl = t_.find('\n', q);
      if (nl == std::string_view::npos) break;
      p = nl + 1;
      ++line_;
    }
    eof_ = true;
    lineStart_ = pos_ = t_.size();
    return false;
  }
  // To the next line with content (the rest of this one is empty).
  bool nextLine() {
    size_t nl = t_.find('\n', pos_);
    if (nl == std::string_view::npos) {
      eof_ = true;
      lineStart_ = pos_ = t_.size();
      return false;
    }
    ++line_;
    return seekLine(nl + 1);
  }

  // May a plain scalar start here?
  bool plainStart(size_t i, [[maybe_unused]] bool flow) const {
    char c = t_[i];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
    switch (c) {
    case '_': case '.': case '/': case '(': case ')': case '$': case '~': case '+': case '^': case '=': case ';':
      return true;
    case '-': {
      char n = at(i + 1);
      return (n >= 'a' && n <= 'z') || (n >= 'A' && n <= 'Z') || (n >= '0' && n <= '9') || n == '.' || n == '_';
    }
    default:
      return false;
    }
  }
  // A block plain scalar from `start`: returns its end (trailing spaces
  // trimmed); `stop` is where it stopped: a `:` indicator, a comment or the
  // end of the line.
  size_t blockPlain(size_t start, size_t& stop) const {
    size_t end = start, p = start;
    for (;; ++p) {
      char c = at(p);
      if (c == '\n') break;
      if (c == ':' && blank(p + 1)) break;
      if (c == '#' && t_[p - 1] == ' ') break;
      if (c != ' ') end = p + 1;
    }
    stop = p;
    return end;
  }
  bool keyAt(size_t i) const {
    if (!plainStart(i, false)) return false;
    size_t stop;
    blockPlain(i, stop);
    return at(stop) == ':';
  }

  void scalarNode(size_t start, size_t end, bool plain, size_t markPos) {
    b_.scalar(t_.substr(start, end - start), plain, plain ? 0 : 1, line_, static_cast<int>(markPos - lineStart_));
  }
  void emptyValue(int line, int column) { b_.scalar({}, true, 0, line, column); }

  // 'text' or "text" on one line, no escapes.
  void quoted() {
    char q = t_[pos_];
    size_t p = pos_ + 1;
    while (at(p) != '\n' && t_[p] != q) {
      if (t_[p] == '\\') fail();
      ++p;
    }
    if (at(p) != q || (q == '\'' && at(p + 1) == '\'')) fail();
    scalarNode(pos_ + 1, p, false, pos_);
    pos_ = p + 1;
  }

  // Spaces and line breaks (no comments). libyaml does not check the
  // indentation of lines inside a flow collection.
  void flowSpace() {
    for (;;) {
      skipSpaces();
      if (pos_ >= t_.size() || t_[pos_] != '\n') return;
      ++line_;
      lineStart_ = ++pos_;
      if ((t_.substr(pos_, 3) == "---" || t_.substr(pos_, 3) == "...") && blank(pos_ + 3)) fail();
      skipSpaces();
      if (at(pos_) == '#') fail();
    }
  }

  // `inSequence`: `key: value` here is a single-pair mapping.
  void flowNode(bool inSequence) {
    if (b_.depth() >= kMaxDepth) fail();
    char c = t_[pos_];
    if (c == '[' || c == '{') flowCollection(c == '{');
    else if (c == '\'' || c == '"') quoted();
    else {
      if (!plainStart(pos_, true)) fail();
      size_t p = pos_, end = pos_;
      for (;; ++p) {
        char ch = at(p);
        if (ch == ',' || ch == ']' || ch == '}') break;
        if (ch == ':' && inSequence && at(p + 1) == ' ' && end == p) {
          b_.open(NodeType::Map, 0, line_, col());
          scalarNode(pos_, end, true, pos_);
          pos_ = p + 1;
          skipSpaces();
          if (at(pos_) == ',' || at(pos_) == ']' || at(pos_) == '}' || at(pos_) == '\n') fail();
          flowNode(false);
          b_.close();
          return;
        }
        if (ch == '\n') {
          // Ends at the line break only when the flow collection goes on
          // with `,` `]` or `}` (else libyaml folds the next line in).
          size_t q = p;
          while (q < t_.size() && (t_[q] == ' ' || t_[q] == '\n')) ++q;
          if (q == t_.size() || (t_[q] != ',' && t_[q] != ']' && t_[q] != '}')) fail();
          break;
        }
        if (ch == '[' || ch == '{' || ch == ':' || ch == '#' || ch == '?' || ch == '\'' || ch == '"') fail();
        if (ch != ' ') end = p + 1;
      }
      scalarNode(pos_, end, true, pos_);
      pos_ = p;
    }
  }
  // [a, b] or {k: v, ...}; may go on over lines.
  void flowCollection(bool map) {
    const char close = map ? '}' : ']';
    b_.open(map ? NodeType::Map : NodeType::Sequence, 0, line_, col());
    ++pos_;
    flowSpace();
    if (at(pos_) == close) {
      ++pos_;
      b_.close();
      return;
    }
    for (;;) {
      if (map) {
        if (!plainStart(pos_, true)) fail();
        size_t p = pos_, end = pos_;
        for (;; ++p) {
          char ch = at(p);
          if (ch == ':') break;
          if (ch == '\n' || ch == ',' || ch == '[' || ch == ']' || ch == '{' || ch == '}' || ch == '#' || ch == '?' ||
              ch == '\'' || ch == '"')
            fail();
          if (ch != ' ') end = p + 1;
        }
        if (end != p || at(p + 1) != ' ') fail();
        scalarNode(pos_, end, true, pos_);
        pos_ = p + 1;
        skipSpaces();
      }
      char c = at(pos_);
      if (c == ',' || c == close || c == '\n') fail(); // empty entry
      flowNode(!map);
      flowSpace();
      c = at(pos_);
      if (c == close) {
        ++pos_;
        break;
      }
      if (c != ',') fail();
      ++pos_;
      flowSpace();
      if (at(pos_) == close) { // a trailing comma
        ++pos_;
        break;
      }
    }
    b_.close();
  }

  // A value that starts on its key's (or `-`'s) line, or a flow collection
  // on the line below.
  void inlineValue() {
    char c = t_[pos_];
    if (c == '[' || c == '{') flowCollection(c == '{');
    else if (c == '\'' || c == '"') quoted();
    else {
      if (!plainStart(pos_, false)) fail();
      size_t stop;
      size_t end = blockPlain(pos_, stop);
      if (at(stop) == ':') fail(); // a mapping here is an error (libyaml says which)
      scalarNode(pos_, end, true, pos_);
      pos_ = stop;
    }
    endOfLine();
    nextLine();
  }

  // The block collection at pos_ (a key or a `-`).
  void block() {
    if (b_.depth() >= kMaxDepth) fail();
    if (entryAt(pos_)) sequence(col());
    else mapping(col());
  }

  // After `key:` or `-` with nothing else on the line: the value is the
  // block below (more indented; or an indentless sequence after a key), else
  // empty.
  void valueBelow(int indent, bool afterKey) {
    const int line = line_, column = col();
    if (!nextLine()) return emptyValue(line, column);
    if (col() > indent && (t_[pos_] == '[' || t_[pos_] == '{')) inlineValue();
    else if (col() > indent) block();
    else if (afterKey && col() == indent && entryAt(pos_)) sequence(indent);
    else emptyValue(line, column);
  }

  void mapping(int indent) {
    b_.open(NodeType::Map, 0, line_, indent);
    for (;;) {
      if (!plainStart(pos_, false)) fail();
      size_t stop;
      size_t end = blockPlain(pos_, stop);
      if (at(stop) != ':' || end - pos_ > 1000) fail();
      scalarNode(pos_, end, true, pos_);
      pos_ = stop + 1;
      skipSpaces();
      if (restIsEmpty()) {
        pos_ = stop + 1;
        valueBelow(indent, true);
      } else {
        inlineValue();
      }
      if (eof_ || col() < indent) break;
      if (col() > indent || entryAt(pos_)) fail();
    }
    b_.close();
  }

  void sequence(int indent) {
    b_.open(NodeType::Sequence, 0, line_, indent);
    for (;;) {
      ++pos_; // the `-`
      const size_t afterDash = pos_;
      skipSpaces();
      if (restIsEmpty()) {
        pos_ = afterDash;
        valueBelow(indent, false);
      } else if (entryAt(pos_)) {
        fail(); // `- - x`
      } else if (keyAt(pos_)) {
        block(); // a compact mapping at this column
      } else {
        inlineValue();
      }
      if (eof_ || col() < indent) break;
      if (col() > indent) fail();
      if (!entryAt(pos_)) break; // an indentless sequence ends; its mapping goes on
    }
    b_.close();
  }

  std::string_view t_;
  Builder& b_;
  size_t pos_ = 0;
  size_t lineStart_ = 0;
  int line_ = 0;
  bool eof_ = false;
};

// RAII for libyaml's C structs.
struct Parser {
  yaml_parser_t p{};
  Parser() { yaml_parser_initialize(&p); }
  ~Parser() { yaml_parser_delete(&p); }
};
struct Event {
  yaml_event_t e{};
  ~Event() { yaml_event_delete(&e); }
};

// libyaml counts columns in characters; diagnostics count bytes, as GCC and
// clang do. Only lines with non-ASCII bytes need the walk.
class ByteColumns {
public:
  explicit ByteColumns(const SourceBuffer& source) : source_(source), ascii_(source.lineCount() + 1, true) {
    uint32_t line = 1;
    const std::string& text = source.text();
    for (size_t i = 0; i < text.size(); ++i) {
      unsigned char c = static_cast<unsigned char>(text[i]);
      if (c == '\n' || (c == '\r' && (i + 1 == text.size() || text[i + 1] != '\n'))) ++line;
      else if (c >= 0x80 && line < ascii_.size()) ascii_[line] = false;
    }
  }
  // 0-based line and character column -> 0-based byte column.
  size_t operator()(size_t line0, size_t charColumn) const {
    size_t line = line0 + 1;
    if (line >= ascii_.size() || ascii_[line]) return charColumn;
    std::string_view text = source_.line(static_cast<uint32_t>(line));
    size_t bytes = 0, chars = 0;
    while (chars < charColumn && bytes < text.size()) {
      ++bytes;
      while (bytes < text.size() && (static_cast<unsigned char>(text[bytes]) & 0xC0) == 0x80) ++bytes;
      ++chars;
    }
    return bytes + (charColumn - chars);
  }

private:
  const SourceBuffer& source_;
  std::vector<bool> ascii_; // by 1-based line
};

} // namespace

namespace {
// The line scanner's tree of `text`; null when it gives up.
std::unique_ptr<Document> scanLines(std::string_view text) {
  auto doc = std::make_unique<Document>();
  // Generated files have a node per 16 bytes or more: this hint rarely
  // grows the arrays (a copy of MBs), and reserved pages never touched cost
  // nothing.
  Builder builder(*doc, text.size() / 8 + 16);
  try {
    LineScanner(text, builder).run();
    return doc;
  } catch (const Unsupported&) {
    return nullptr;
  }
}
} // namespace

std::optional<std::unique_ptr<Document>> Document::parse(const SourceBuffer& source, DiagnosticEngine& diags) {
  if (auto doc = scanLines(source.text())) return doc;
  return parseWithLibyaml(source, diags);
}

std::optional<std::unique_ptr<Document>> Document::parse(std::string_view text, DiagnosticEngine& diags) {
  if (auto doc = scanLines(text)) return doc;
  return parseWithLibyaml(SourceBuffer({}, std::string(text)), diags);
}

std::optional<std::unique_ptr<Document>> Document::parseWithLibyaml(const SourceBuffer& source,
                                                                    DiagnosticEngine& diags) {
  auto doc = std::make_unique<Document>();
  Builder builder(*doc, 0);
  Parser parser;
  yaml_parser_set_input_string(&parser.p, reinterpret_cast<const unsigned char*>(source.text().data()),
                               source.text().size());
  ByteColumns byteColumn(source);
  auto fail = [&](size_t line, size_t column, const std::string& message) {
    diags.error("yaml-syntax", {static_cast<uint32_t>(line) + 1, static_cast<uint32_t>(column) + 1},
                "invalid YAML: " + message);
    return std::nullopt;
  };
  std::vector<uint64_t> expanded; // node counts with aliases expanded, per node
  std::vector<std::pair<std::string, uint32_t>> anchors;
  int documents = 0;
  auto lineOf = [](const yaml_event_t& e) { return static_cast<int>(e.start_mark.line); };
  auto columnOf = [&](const yaml_event_t& e) {
    return static_cast<int>(byteColumn(e.start_mark.line, e.start_mark.column));
  };
  auto remember = [&](const yaml_char_t* anchor, uint32_t index) {
    if (anchor) anchors.emplace_back(reinterpret_cast<const char*>(anchor), index);
  };
  for (;;) {
    Event ev;
    if (!yaml_parser_parse(&parser.p, &ev.e)) {
      std::string message = parser.p.problem ? parser.p.problem : "malformed input";
      if (parser.p.context) message += std::string(" ") + parser.p.context;
      if (parser.p.error == YAML_READER_ERROR) {
        // Reader errors (bad UTF-8, control characters) carry a byte offset, not a mark.
        size_t offset = std::min(parser.p.problem_offset, source.text().size());
        size_t line = 0, lineStart = 0;
        for (size_t i = 0; i < offset; ++i)
          if (source.text()[i] == '\n') ++line, lineStart = i + 1;
        return fail(line, offset - lineStart, message);
      }
      return fail(parser.p.problem_mark.line, byteColumn(parser.p.problem_mark.line, parser.p.problem_mark.column),
                  message);
    }
    const yaml_event_t& e = ev.e;
    switch (e.type) {
    case YAML_STREAM_END_EVENT:
      return doc;
    case YAML_DOCUMENT_START_EVENT:
      if (++documents > 1)
        return fail(e.start_mark.line, byteColumn(e.start_mark.line, e.start_mark.column), "a netlist file holds one YAML document, found a second");
      break;
    case YAML_SCALAR_EVENT: {
      std::string_view text(reinterpret_cast<const char*>(e.data.scalar.value), e.data.scalar.length);
      bool plain = e.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
      uint32_t tag = e.data.scalar.tag ? builder.explicitTag(reinterpret_cast<const char*>(e.data.scalar.tag))
                     : plain           ? 0
                                       : 1;
      remember(e.data.scalar.anchor, builder.scalar(text, plain, tag, lineOf(e), columnOf(e)));
      expanded.push_back(1);
      break;
    }
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
      if (static_cast<int>(builder.depth()) >= kMaxDepth)
        return fail(e.start_mark.line, byteColumn(e.start_mark.line, e.start_mark.column),
                    "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
      bool seq = e.type == YAML_SEQUENCE_START_EVENT;
      const yaml_char_t* tag = seq ? e.data.sequence_start.tag : e.data.mapping_start.tag;
      uint32_t index = builder.open(seq ? NodeType::Sequence : NodeType::Map,
                                    tag ? builder.explicitTag(reinterpret_cast<const char*>(tag)) : 0, lineOf(e),
                                    columnOf(e));
      expanded.push_back(1);
      remember(seq ? e.data.sequence_start.anchor : e.data.mapping_start.anchor, index);
      break;
    }
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT: {
      uint32_t index = builder.innermost();
      uint64_t total = 1;
      for (uint32_t child : builder.openChildren()) total += expanded[child];
      expanded[index] = total;
      builder.close();
      if (total > kMaxExpandedNodes)
        return fail(e.start_mark.line, byteColumn(e.start_mark.line, e.start_mark.column), "aliases expand to more than " +
                                                                std::to_string(kMaxExpandedNodes) + " nodes");
      break;
    }
    case YAML_ALIAS_EVENT: {
      std::string name = reinterpret_cast<const char*>(e.data.alias.anchor);
      uint32_t target = UINT32_MAX;
      for (auto it = anchors.rbegin(); it != anchors.rend(); ++it)
        if (it->first == name) {
          target = it->second;
          break;
        }
      if (target == UINT32_MAX)
        return fail(e.start_mark.line, byteColumn(e.start_mark.line, e.start_mark.column), "alias *" + name + " names no anchor");
      if (builder.depth() == 0) return fail(e.start_mark.line, byteColumn(e.start_mark.line, e.start_mark.column), "a document cannot be only an alias");
      if (builder.isOpen(target))
        return fail(e.start_mark.line, byteColumn(e.start_mark.line, e.start_mark.column), "alias *" + name + " refers to a node that contains it");
      // An alias shares its target node: the tree becomes a DAG, bounded by kMaxExpandedNodes.
      builder.alias(target);
      break;
    }
    default:
      break;
    }
  }
}

Expected<std::unique_ptr<Document>> Document::readMapFile(const std::string& path) {
  auto text = readFile(path);
  if (!text) return Failure{"cannot read '" + path + "': " + text.error()};
  SourceBuffer source(path, std::move(*text));
  DiagnosticEngine diags;
  auto doc = parse(source, diags);
  if (!doc || !(*doc)->root().IsMap()) return Failure{"'" + path + "' is not a YAML map"};
  return std::move(*doc);
}

} // namespace tessera::yaml
