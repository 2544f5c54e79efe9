#include "sim/binaries_cache.hpp"

#include "support/text_format.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tessera::sim {

namespace c = contract;

namespace {

constexpr uint32_t kSegExecutable = 1u << 0;
constexpr uint32_t kSegWritable = 1u << 1;

void put32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

void set32(std::vector<uint8_t>& out, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) out[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

uint32_t get32(std::span<const uint8_t> b, size_t at) {
  return uint32_t{b[at]} | uint32_t{b[at + 1]} << 8 | uint32_t{b[at + 2]} << 16 | uint32_t{b[at + 3]} << 24;
}

// FNV-1a: lets the firmware tell a slot that was overwritten from its image.
uint32_t checksum(std::span<const uint8_t> bytes) {
  uint32_t h = 2166136261u;
  for (uint8_t b : bytes) h = (h ^ b) * 16777619u;
  return h;
}

// A bounds-checked reader over the image.
struct Reader {
  std::span<const uint8_t> b;
  size_t at = 0;
  bool ok = true;
  uint32_t u32() {
    if (!ok || b.size() - at < 4) {
      ok = false;
      return 0;
    }
    at += 4;
    return get32(b, at - 4);
  }
  std::span<const uint8_t> bytes(uint64_t n) {
    if (!ok || b.size() - at < n) {
      ok = false;
      return {};
    }
    at += static_cast<size_t>(n);
    return b.subspan(at - static_cast<size_t>(n), static_cast<size_t>(n));
  }
};

uint64_t pad4(uint64_t n) { return (n + 3) / 4 * 4; }

QueueHeader commandHeader(const Dram& dram, const CoreBinariesArea& a) {
  return readQueueHeader(dram, a.channel, a.commandQueue);
}

}  // namespace

// --- Image -------------------------------------------------------------------

std::vector<uint8_t> encodeBinaries(const BinariesImage& image) {
  std::vector<uint8_t> out(kBinariesHeaderBytes, 0);
  uint32_t threads = 0;
  for (uint32_t t = 0; t < c::kThreadCount; ++t) {
    const std::optional<elf::Image>& k = image.kernels[t];
    if (!k) continue;
    threads |= 1u << t;
    put32(out, k->entry);
    put32(out, k->machine);
    put32(out, static_cast<uint32_t>(k->segments.size()));
    for (const elf::Segment& s : k->segments) {
      put32(out, s.vaddr);
      put32(out, s.memSize);
      put32(out, static_cast<uint32_t>(s.bytes.size()));
      put32(out, (s.executable ? kSegExecutable : 0) | (s.writable ? kSegWritable : 0));
      out.insert(out.end(), s.bytes.begin(), s.bytes.end());
      out.resize(pad4(out.size()), 0);
    }
  }
  for (const blob::HexSegment& s : image.blob) {
    put32(out, s.wordAddress);
    put32(out, static_cast<uint32_t>(s.words.size()));
    for (uint32_t w : s.words) put32(out, w);
  }
  set32(out, 0x00, c::kBinariesMagic);
  set32(out, 0x04, c::kBinariesVersion);
  set32(out, 0x08, static_cast<uint32_t>(out.size()));
  set32(out, 0x0C, threads);
  set32(out, 0x10, static_cast<uint32_t>(image.blob.size()));
  set32(out, 0x14, checksum(std::span<const uint8_t>(out).subspan(kBinariesHeaderBytes)));
  return out;
}

Expected<BinariesImage> decodeBinaries(std::span<const uint8_t> bytes) {
  if (bytes.size() < kBinariesHeaderBytes)
    return Failure{"binaries image of " + std::to_string(bytes.size()) + " bytes is shorter than its 32-byte header"};
  if (get32(bytes, 0x00) != c::kBinariesMagic)
    return Failure{"no binaries image (magic " + support::hexLiteral(get32(bytes, 0x00)) + ", expected " +
                   support::hexLiteral(c::kBinariesMagic) + ")"};
  if (get32(bytes, 0x04) != c::kBinariesVersion)
    return Failure{"binaries image version " + std::to_string(get32(bytes, 0x04)) + " (this simulator reads version " +
                   std::to_string(c::kBinariesVersion) + ")"};
  const uint32_t total = get32(bytes, 0x08), threads = get32(bytes, 0x0C), blobSegs = get32(bytes, 0x10);
  if (total < kBinariesHeaderBytes || total > bytes.size() || total % 4)
    return Failure{"binaries image size " + std::to_string(total) + " does not fit the " +
                   std::to_string(bytes.size()) + " bytes read"};
  std::span<const uint8_t> body = bytes.subspan(0, total);
  if (checksum(body.subspan(kBinariesHeaderBytes)) != get32(bytes, 0x14))
    return Failure{"binaries image checksum mismatch (the slot was overwritten?)"};
  if (threads >> c::kThreadCount)
    return Failure{"binaries image names threads " + support::hexLiteral(threads) + " (at most 3)"};
  BinariesImage img;
  Reader r{body, kBinariesHeaderBytes};
  for (uint32_t t = 0; t < c::kThreadCount && r.ok; ++t) {
    if (!(threads & (1u << t))) continue;
    elf::Image k;
    k.entry = r.u32();
    k.machine = static_cast<uint16_t>(r.u32());
    const uint32_t n = r.u32();
    for (uint32_t i = 0; i < n && r.ok; ++i) {
      elf::Segment s;
      s.vaddr = r.u32();
      s.memSize = r.u32();
      const uint32_t fileBytes = r.u32(), flags = r.u32();
      s.executable = flags & kSegExecutable;
      s.writable = flags & kSegWritable;
      if (r.ok && fileBytes > s.memSize)
        return Failure{"binaries image: thread " + std::to_string(t) + " segment at " + support::hexLiteral(s.vaddr) +
                       " has more file bytes than memory bytes"};
      std::span<const uint8_t> data = r.bytes(pad4(fileBytes));
      if (r.ok) s.bytes.assign(data.begin(), data.begin() + fileBytes);
      k.segments.push_back(std::move(s));
    }
    img.kernels[t] = std::move(k);
  }
  for (uint32_t i = 0; i < blobSegs && r.ok; ++i) {
    blob::HexSegment s;
    s.wordAddress = r.u32();
    const uint32_t n = r.u32();
    std::span<const uint8_t> data = r.bytes(uint64_t{n} * 4);
    for (uint32_t w = 0; r.ok && w < n; ++w) s.words.push_back(get32(data, size_t{w} * 4));
    img.blob.push_back(std::move(s));
  }
  if (!r.ok) return Failure{"binaries image: a record runs past its end (" + std::to_string(total) + " bytes)"};
  if (r.at != total) return Failure{"binaries image: " + std::to_string(total - r.at) + " bytes after its last record"};
  return img;
}

bool readKernelDir(const std::string& dir, BinariesImage& into, std::string& error) {
  static const char* const kFiles[c::kThreadCount] = {"unpack.elf", "math.elf", "pack.elf"};
  for (uint32_t t = 0; t < c::kThreadCount; ++t) {
    const std::string path = (std::filesystem::path(dir) / kFiles[t]).string();
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      error = "'" + path + "': cannot open the file";
      return false;
    }
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    Expected<elf::Image> image = elf::parseElf32(bytes);
    if (!image) {
      error = "'" + path + "': " + image.error();
      return false;
    }
    image->symbols.clear();  // not part of the image
    into.kernels[t] = std::move(*image);
  }
  return true;
}

bool readBlobHexFile(const std::string& path, BinariesImage& into, std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = "'" + path + "': cannot open the file";
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  Expected<std::vector<blob::HexSegment>> segs = blob::readHex(text.str());
  if (!segs) {
    error = "'" + path + "': blob hex: " + segs.error();
    return false;
  }
  into.blob = std::move(*segs);
  return true;
}

// --- Layout ------------------------------------------------------------------

Expected<BinariesLayout> BinariesLayout::forSoc(const SocDescriptor& soc) {
  BinariesLayout l;
  l.channels_ = static_cast<uint32_t>(std::max(1, soc.dramChannelCount()));
  const uint64_t channelBytes = soc.dramBankSize ? soc.dramBankSize : (uint64_t{1} << 30);  // as Dram(soc)
  for (size_t i = 0; i < soc.workers.size(); ++i) l.index_.emplace(soc.workers[i], static_cast<uint32_t>(i));
  const uint32_t workers = static_cast<uint32_t>(std::max<size_t>(1, soc.workers.size()));
  l.coresPerChannel_ = (workers + l.channels_ - 1) / l.channels_;
  const uint64_t mib = uint64_t{1} << 20;
  l.bytes_ = (kCommandQueueBlock + uint64_t{l.coresPerChannel_} * kBinariesCacheBytes + mib - 1) / mib * mib;
  l.base_ = channelBytes <= kSmallChannelBytes ? kSmallChannelRegionBase
                                               : (channelBytes > l.bytes_ ? channelBytes - l.bytes_ : 0);
  if (uint64_t{l.coresPerChannel_} * kCommandQueueStride > kCommandQueueBlock || l.base_ + l.bytes_ > channelBytes)
    return Failure{"the binaries caches and epoch command queues of " + std::to_string(workers) + " cores (" +
                   support::hexLiteral(l.bytes_) + " bytes per channel from " + support::hexLiteral(l.base_) +
                   ") do not fit DRAM channels of " + support::hexLiteral(channelBytes) + " bytes"};
  return l;
}

std::optional<CoreBinariesArea> BinariesLayout::area(CoreCoord core) const {
  auto it = index_.find(core);
  if (it == index_.end()) return std::nullopt;
  const uint32_t k = it->second / channels_;
  CoreBinariesArea a;
  a.channel = it->second % channels_;
  a.commandQueue = base_ + uint64_t{k} * kCommandQueueStride;
  a.cache = base_ + kCommandQueueBlock + uint64_t{k} * kBinariesCacheBytes;
  return a;
}

bool BinariesLayout::overlaps(uint32_t channel, uint64_t address, uint64_t bytes) const {
  return channel < channels_ && bytes > 0 && address < base_ + bytes_ && base_ < address + bytes;
}

// --- Command queue -------------------------------------------------------------

bool pushEpochCommand(Dram& dram, const CoreBinariesArea& a, const c::EpochCommand& command, std::string& error) {
  QueueHeader h = commandHeader(dram, a);
  h.slots = c::kEpochCommandSlots;
  if (queueOccupancy(h.rdPtr, h.wrPtr, h.slots) >= h.slots) {
    error = "the epoch command queue is full (" + std::to_string(h.slots) + " commands not taken by the core)";
    return false;
  }
  uint8_t bytes[c::kEpochCommandBytes];
  std::memcpy(bytes, &command, sizeof bytes);
  const uint64_t at = a.commandQueue + kQueueHeaderBytes + uint64_t{h.wrPtr % h.slots} * c::kEpochCommandBytes;
  h.wrPtr = wrapPointer(uint64_t{h.wrPtr} + 1, h.slots);
  if (!dram.write(a.channel, at, bytes) || !writeQueueHeader(dram, a.channel, a.commandQueue, h)) {
    error = "the epoch command queue at channel " + std::to_string(a.channel) + " address " +
            support::hexLiteral(a.commandQueue) + " is outside DRAM";
    return false;
  }
  return true;
}

std::optional<c::EpochCommand> popEpochCommand(Dram& dram, const CoreBinariesArea& a) {
  QueueHeader h = commandHeader(dram, a);
  if (h.slots == 0 || queueOccupancy(h.rdPtr, h.wrPtr, h.slots) == 0) return std::nullopt;
  uint8_t bytes[c::kEpochCommandBytes] = {};
  dram.read(a.channel, a.commandQueue + kQueueHeaderBytes + uint64_t{h.rdPtr % h.slots} * c::kEpochCommandBytes, bytes);
  c::EpochCommand cmd;
  std::memcpy(&cmd, bytes, sizeof bytes);
  h.rdPtr = wrapPointer(uint64_t{h.rdPtr} + 1, h.slots);
  writeQueueHeader(dram, a.channel, a.commandQueue, h);
  return cmd;
}

uint32_t pendingEpochCommands(const Dram& dram, const CoreBinariesArea& a) {
  QueueHeader h = commandHeader(dram, a);
  return h.slots ? queueOccupancy(h.rdPtr, h.wrPtr, h.slots) : 0;
}

// --- Host --------------------------------------------------------------------

BinariesCacheTable::Use BinariesCacheTable::use(CoreCoord core, uint32_t epoch) {
  auto& slots = cores_[core];
  ++tick_;
  Use u;
  for (uint32_t s = 0; s < slots.size(); ++s)
    if (slots[s].used && slots[s].epoch == epoch) {
      slots[s].lastUse = tick_;
      u.slot = s;
      u.hit = true;
      return u;
    }
  // A free slot, else the least recently used one.
  uint32_t pick = 0;
  for (uint32_t s = 0; s < slots.size(); ++s) {
    if (!slots[s].used) {
      pick = s;
      break;
    }
    if (slots[s].lastUse < slots[pick].lastUse) pick = s;
  }
  if (slots[pick].used) u.evicted = slots[pick].epoch;
  slots[pick] = Slot{true, epoch, 0, tick_};
  u.slot = pick;
  return u;
}

std::optional<uint32_t> BinariesCacheTable::slotOf(CoreCoord core, uint32_t epoch) const {
  auto it = cores_.find(core);
  if (it == cores_.end()) return std::nullopt;
  for (uint32_t s = 0; s < it->second.size(); ++s)
    if (it->second[s].used && it->second[s].epoch == epoch) return s;
  return std::nullopt;
}

uint32_t BinariesCacheTable::bytes(CoreCoord core, uint32_t slot) const {
  auto it = cores_.find(core);
  return it == cores_.end() ? 0 : it->second[slot].bytes;
}

bool BinariesHost::deploy(Dram& dram, CoreCoord core, const std::string& coreName, uint32_t epoch,
                          uint32_t inputCount, const Encode& encode, std::string& error) {
  const std::optional<CoreBinariesArea> area = layout_.area(core);
  if (!area) {
    error = "core '" + coreName + "' (" + toString(core) + ") is not a functional worker";
    return false;
  }
  const BinariesCacheTable::Use use = table_.use(core, epoch);
  if (use.hit) {
    ++counters_.hits;
  } else {
    std::vector<uint8_t> image;
    if (!encode(image, error)) {
      table_.forget(core, use.slot);
      error = "core '" + coreName + "': " + error;
      return false;
    }
    if (image.size() > c::kBinariesSlotBytes) {
      table_.forget(core, use.slot);
      error = "core '" + coreName + "', temporal epoch " + std::to_string(epoch) + ": binaries image of " +
              std::to_string(image.size()) + " bytes is larger than a binaries cache slot (" +
              std::to_string(c::kBinariesSlotBytes) + " bytes)";
      return false;
    }
    if (!dram.write(area->channel, area->slotAddress(use.slot), image)) {
      table_.forget(core, use.slot);
      error = "core '" + coreName + "': binaries cache slot " + std::to_string(use.slot) + " at channel " +
              std::to_string(area->channel) + " is outside DRAM";
      return false;
    }
    table_.setBytes(core, use.slot, static_cast<uint32_t>(image.size()));
    ++counters_.pushes;
    counters_.pushedBytes += image.size();
    if (use.evicted) ++counters_.evictions;
  }
  c::EpochCommand cmd{};
  cmd.magic = c::kEpochCommandMagic;
  cmd.epochId = epoch;
  cmd.inputCount = inputCount;
  cmd.binariesChannel = area->channel;
  const uint64_t at = area->slotAddress(use.slot);
  cmd.binariesAddressLo = static_cast<uint32_t>(at);
  cmd.binariesAddressHi = static_cast<uint32_t>(at >> 32);
  cmd.binariesBytes = table_.bytes(core, use.slot);
  cmd.binariesSlot = use.slot;
  std::string why;
  if (!pushEpochCommand(dram, *area, cmd, why)) {
    error = "core '" + coreName + "': " + why;
    return false;
  }
  ++counters_.commands;
  return true;
}

}  // namespace tessera::sim
