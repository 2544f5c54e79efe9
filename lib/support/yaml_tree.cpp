#include "support/yaml_tree.hpp"

#include <yaml.h>

#include <algorithm>

namespace tessera::yaml {

namespace {
const std::string kEmpty;
const std::string kPlainTag = "?";
const std::string kQuotedTag = "!";
} // namespace

NodeType Node::Type() const { return doc_ ? doc_->nodes_[index_].type : NodeType::Undefined; }

const std::string& Node::Scalar() const {
  return doc_ && doc_->nodes_[index_].type == NodeType::Scalar ? doc_->nodes_[index_].text : kEmpty;
}

const std::string& Node::Tag() const { return doc_ ? doc_->nodes_[index_].tag : kEmpty; }

Position Node::Mark() const {
  if (!doc_) return {};
  return {doc_->nodes_[index_].line, doc_->nodes_[index_].column};
}

size_t Node::size() const {
  if (!doc_) return 0;
  const auto& d = doc_->nodes_[index_];
  if (d.type == NodeType::Sequence) return d.children.size();
  if (d.type == NodeType::Map) return d.children.size() / 2;
  return 0;
}

Node Node::operator[](size_t index) const {
  if (!IsSequence() || index >= doc_->nodes_[index_].children.size()) return {};
  return Node(doc_, doc_->nodes_[index_].children[index]);
}

Node Node::operator[](std::string_view key) const {
  if (!IsMap()) return {};
  const auto& children = doc_->nodes_[index_].children;
  for (size_t i = children.size(); i >= 2; i -= 2) {
    const auto& k = doc_->nodes_[children[i - 2]];
    if (k.type == NodeType::Scalar && k.text == key) return Node(doc_, children[i - 1]);
  }
  return {};
}

Node::iterator Node::begin() const { return iterator(*this, 0); }
Node::iterator Node::end() const { return iterator(*this, size()); }

void Node::iterator::load() {
  entry_ = Entry{};
  if (pos_ >= owner_.size()) return;
  const auto& children = owner_.doc_->nodes_[owner_.index_].children;
  if (owner_.IsSequence()) {
    static_cast<Node&>(entry_) = Node(owner_.doc_, children[pos_]);
  } else {
    entry_.first = Node(owner_.doc_, children[2 * pos_]);
    entry_.second = Node(owner_.doc_, children[2 * pos_ + 1]);
  }
}

namespace {

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

bool isNullPlain(const std::string& s) { return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL"; }

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

std::optional<std::unique_ptr<Document>> Document::parse(const SourceBuffer& source, DiagnosticEngine& diags) {
  auto doc = std::make_unique<Document>();
  Parser parser;
  yaml_parser_set_input_string(&parser.p, reinterpret_cast<const unsigned char*>(source.text().data()),
                               source.text().size());
  ByteColumns byteColumn(source);
  auto fail = [&](size_t line, size_t column, const std::string& message) {
    diags.error("yaml-syntax", {static_cast<uint32_t>(line) + 1, static_cast<uint32_t>(column) + 1},
                "invalid YAML: " + message);
    return std::nullopt;
  };
  std::vector<uint32_t> open;                    // collections being filled
  std::vector<uint64_t> expanded;                // node counts with aliases expanded, per node
  std::vector<std::pair<std::string, uint32_t>> anchors;
  int documents = 0;
  auto addNode = [&](Data data, const yaml_event_t& e) -> uint32_t {
    data.line = static_cast<int>(e.start_mark.line);
    data.column = static_cast<int>(byteColumn(e.start_mark.line, e.start_mark.column));
    auto index = static_cast<uint32_t>(doc->nodes_.size());
    doc->nodes_.push_back(std::move(data));
    expanded.push_back(1);
    if (!open.empty()) doc->nodes_[open.back()].children.push_back(index);
    return index;
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
      Data d;
      d.text.assign(reinterpret_cast<const char*>(e.data.scalar.value), e.data.scalar.length);
      bool plain = e.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
      if (e.data.scalar.tag) d.tag = reinterpret_cast<const char*>(e.data.scalar.tag);
      else d.tag = plain ? kPlainTag : kQuotedTag;
      d.type = plain && !e.data.scalar.tag && isNullPlain(d.text) ? NodeType::Null : NodeType::Scalar;
      remember(e.data.scalar.anchor, addNode(std::move(d), e));
      break;
    }
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
      if (static_cast<int>(open.size()) >= kMaxDepth)
        return fail(e.start_mark.line, byteColumn(e.start_mark.line, e.start_mark.column),
                    "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
      Data d;
      bool seq = e.type == YAML_SEQUENCE_START_EVENT;
      d.type = seq ? NodeType::Sequence : NodeType::Map;
      const yaml_char_t* tag = seq ? e.data.sequence_start.tag : e.data.mapping_start.tag;
      d.tag = tag ? reinterpret_cast<const char*>(tag) : kPlainTag;
      uint32_t index = addNode(std::move(d), e);
      remember(seq ? e.data.sequence_start.anchor : e.data.mapping_start.anchor, index);
      open.push_back(index);
      break;
    }
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT: {
      uint32_t index = open.back();
      open.pop_back();
      uint64_t total = 1;
      for (uint32_t child : doc->nodes_[index].children) total += expanded[child];
      expanded[index] = total;
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
      if (open.empty()) return fail(e.start_mark.line, byteColumn(e.start_mark.line, e.start_mark.column), "a document cannot be only an alias");
      for (uint32_t ancestor : open)
        if (ancestor == target)
          return fail(e.start_mark.line, byteColumn(e.start_mark.line, e.start_mark.column), "alias *" + name + " refers to a node that contains it");
      // An alias shares its target node: the tree becomes a DAG, bounded by kMaxExpandedNodes.
      doc->nodes_[open.back()].children.push_back(target);
      break;
    }
    default:
      break;
    }
  }
}

} // namespace tessera::yaml
