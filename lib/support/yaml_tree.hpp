// A read-only YAML document tree built from libyaml's event parser.
//
// Why not yaml-cpp's tree: on the largest corpus netlist (0.9 MB) yaml-cpp's
// scanner took 85% of a 0.33 s check; libyaml parses the same file in 0.03 s.
// The node API mirrors the subset of yaml-cpp's that the parsers use, so code
// reads the same. Nodes are cheap handles into their Document, which must
// outlive them. Duplicate map keys are kept in order.
//
// Generated files (pipegen.yaml, blob.yaml: up to 8.5 MB) are read by a
// line scanner for the plain block subset they use, about 4x faster than libyaml
// events; anything outside that subset (and every syntax error) is parsed
// again by libyaml, so trees, positions and diagnostics are libyaml's.
#pragma once
#include "support/diagnostics.hpp"
#include "support/expected.hpp"
#include "support/source.hpp"

#include <cstdint>
#include <deque>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::yaml {

enum class NodeType { Undefined, Null, Scalar, Sequence, Map };

struct Position {
  int line = -1;   // 0-based; -1 for undefined nodes
  int column = -1; // 0-based
};

class Document;
class Node;

class Node {
public:
  Node() = default;

  NodeType Type() const;
  bool IsDefined() const { return doc_ != nullptr; }
  bool IsNull() const { return Type() == NodeType::Null; }
  bool IsScalar() const { return Type() == NodeType::Scalar; }
  bool IsSequence() const { return Type() == NodeType::Sequence; }
  bool IsMap() const { return Type() == NodeType::Map; }
  explicit operator bool() const { return IsDefined(); }
  bool operator!() const { return !IsDefined(); }

  // Scalar text ("" for other kinds). Scalars of one Document with equal
  // texts share one string, so texts can be compared by address.
  const std::string& Scalar() const;
  // "?" for plain scalars, "!" for quoted ones, else the explicit tag.
  const std::string& Tag() const;
  Position Mark() const;

  // Sequence items / map pairs.
  size_t size() const;
  // Sequence item; undefined node when out of range or not a sequence.
  Node operator[](size_t index) const;
  Node operator[](int index) const { return index < 0 ? Node() : (*this)[static_cast<size_t>(index)]; }
  // Map value of the LAST pair whose key is the scalar `key` (later duplicates win).
  Node operator[](std::string_view key) const;
  Node operator[](const char* key) const { return (*this)[std::string_view(key)]; }

  // One iteration step: for sequences the item itself; for maps `first`/`second`.
  struct Entry;
  class iterator;
  iterator begin() const;
  iterator end() const;

  friend bool operator==(const Node& a, const Node& b) { return a.doc_ == b.doc_ && a.index_ == b.index_; }

private:
  friend class Document;
  friend class iterator;
  Node(const Document* doc, uint32_t index) : doc_(doc), index_(index) {}
  const Document* doc_ = nullptr;
  uint32_t index_ = 0;
};

struct Node::Entry : Node {
  Node first;  // map key (undefined for sequences)
  Node second; // map value (undefined for sequences)
};

class Node::iterator {
public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = Entry;
  using difference_type = std::ptrdiff_t;
  using pointer = const Entry*;
  using reference = const Entry&;

  iterator() = default;
  const Entry& operator*() const { return entry_; }
  const Entry* operator->() const { return &entry_; }
  iterator& operator++() {
    ++pos_;
    load();
    return *this;
  }
  friend bool operator==(const iterator& a, const iterator& b) { return a.pos_ == b.pos_ && a.owner_ == b.owner_; }

private:
  friend class Node;
  iterator(Node owner, size_t pos) : owner_(owner), pos_(pos) { load(); }
  void load();
  Node owner_;
  size_t pos_ = 0;
  Entry entry_;
};

class Document {
public:
  Node root() const { return nodes_.empty() ? Node() : Node(this, 0); }

  // Parses a single-document YAML text. Syntax errors, nesting deeper than
  // kMaxDepth and alias expansions larger than kMaxExpandedNodes are reported
  // as `yaml-syntax` diagnostics and give nullopt. Never throws.
  static std::optional<std::unique_ptr<Document>> parse(const SourceBuffer& source, DiagnosticEngine& diags);
  // The same for text that is not a whole SourceBuffer (one document of a
  // multi-document file, parsed without copying it); positions are relative
  // to `text`.
  static std::optional<std::unique_ptr<Document>> parse(std::string_view text, DiagnosticEngine& diags);
  // Reads and parses a file whose root must be a map: the index files the
  // stage tools write (manifest.yaml, epochs.yaml), read by the loader.
  // A failure says "cannot read '<path>': ..." or "'<path>' is not a YAML map".
  static Expected<std::unique_ptr<Document>> readMapFile(const std::string& path);
  // Libyaml alone, without the line scanner (tests compare the two).
  static std::optional<std::unique_ptr<Document>> parseWithLibyaml(const SourceBuffer& source,
                                                                   DiagnosticEngine& diags);

  static constexpr int kMaxDepth = 256;
  static constexpr uint64_t kMaxExpandedNodes = 20'000'000;

private:
  friend class Node;
  friend class Node::iterator;
  friend class Builder;
  // 32 bytes, no allocation per node: texts are interned, children live in
  // one array (a generated blob.yaml has millions of nodes).
  struct Data {
    const std::string* text = nullptr; // scalar text (interned); null for collections
    uint32_t first = 0;                // first child in children_
    uint32_t count = 0;                // sequence items, or key/value pairs flattened
    int line = 0, column = 0;
    uint32_t tag = 0;                  // 0 "?", 1 "!", else tags_[tag - 2]
    NodeType type = NodeType::Null;
  };
  std::vector<Data> nodes_;
  std::vector<uint32_t> children_;
  std::deque<std::string> strings_; // interned scalar texts (stable addresses)
  std::vector<std::string> tags_;   // explicit tags
};

} // namespace tessera::yaml
